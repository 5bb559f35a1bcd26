/**
 * The proof stage before the first delete (lib/maintenance/prove-kept.ts), as its own line of
 * defence: a format's plan that would delete a file a kept version needs is refused whole,
 * nothing deleted (a format defect injected into the real Delta format on a real table); a
 * healthy table's run records what the proof looked at; a broken latest Lance version is refused
 * with one line that names the file and the versions still whole.
 */
import { randomBytes } from "node:crypto";
import { rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { deltaFormat } from "../../lib/formats/delta/delta-format.ts";
import type { FormatPlannedRemoval, TableFormat } from "../../lib/formats/table-format.ts";
import { lanceFormat } from "../../lib/formats/lance/lance-format.ts";
import { KeptStateError, describeList } from "../../lib/maintenance/prove-kept.ts";
import { runCleanup } from "../../lib/maintenance/run-cleanup.ts";
import { LocalStore } from "../../lib/store/local-store.ts";
import type { ByteRange, ObjectStore } from "../../lib/store/object-store.ts";
import { copyFixture } from "../support/fixtures.ts";
import { buildLanceDataset, makeTempDir, removeDir } from "../support/lance-datasets.ts";
import { listTree } from "./lance-checks.ts";
import { aggressive, withoutOurs } from "./damage/damage.ts";

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await removeDir(dir);
});

/** The real Delta format, with a defect: its plan also deletes a data file the latest version reads. */
const deltaPlan = deltaFormat.removal as FormatPlannedRemoval;
const deltaWithPlanDefect: TableFormat = {
  ...deltaFormat,
  removal: {
    kind: "format-plan",
    async planRemoval(store, input) {
      const plan = await deltaPlan.planRemoval(store, input);
      const data = input.versions.at(-1)!.references.find((file) => file.role === "data")!;
      return { ...plan, files: [...plan.files, { key: data.path, role: "data", reason: "a defect" }] };
    },
  },
};

describe("the proof before the first delete", () => {
  it("refuses a format plan that would delete a file a kept version needs: nothing deleted, dry run and run alike", async () => {
    const dir = await copyFixture("delta", "simple_table");
    const before = await listTree(dir);
    for (const dryRun of [true, false]) {
      const error = await runCleanup(new LocalStore(dir), { format: deltaWithPlanDefect, dryRun, ...aggressive() }).then(
        () => null,
        (e: Error) => e,
      );
      expect(error).toBeInstanceOf(KeptStateError);
      expect(error!.message).toMatch(
        /cleanup refused: its plan would delete 1 file that kept versions need \(part-[^ ]+\.parquet \(versions? [^)]+\): the plan would delete it \(a defect\)\); nothing was deleted/,
      );
    }
    expect(withoutOurs(await listTree(dir))).toEqual(withoutOurs(before));
  });

  it("on a healthy table, reports what it checked and read before deleting", async () => {
    const dir = await copyFixture("delta", "simple_table");
    const report = await runCleanup(new LocalStore(dir), { format: deltaFormat, ...aggressive() });
    expect(report.status).toBe("completed");
    expect(report.proof).not.toBeNull();
    expect(report.proof!.files_checked).toBeGreaterThan(0);
    expect(report.proof!.files_headed).toBe(0);
  });

  it("refuses a Lance table whose latest version lost a data file, naming it and the older versions that are whole", async () => {
    const dbUri = await makeTempDir("lw-prove-lance-");
    dirs.push(dbUri);
    const ds = await buildLanceDataset({
      dbUri,
      steps: [
        { op: "create", rows: 10 },
        { op: "append", rows: 5 },
        { op: "append", rows: 5 },
      ],
    });
    ds.close();
    const tableDir = join(dbUri, "t.lance");
    const store = new LocalStore(tableDir);
    const latest = (await lanceFormat.readSnapshot(store, (await lanceFormat.latestVersionFile(store))!)).referencedFiles.filter((f) => f.role === "data").at(-1)!;
    await rm(join(tableDir, latest.path));
    const before = await listTree(tableDir);
    const error = await runCleanup(new LocalStore(tableDir), { format: lanceFormat, ...aggressive() }).then(
      () => null,
      (e: Error) => e,
    );
    expect(error).toBeInstanceOf(KeptStateError);
    expect(error!.message).toContain(
      `cleanup refused: the latest version (3) cannot be read: ${latest.path} (version 3): it does not exist; nothing was deleted; versions that do not need it: 1, 2.`,
    );
    expect(withoutOurs(await listTree(tableDir))).toEqual(withoutOurs(before));
  });

  /**
   * The proof's cost on a data file (docs/cleanup.md, "What the proof reads"): a data file whose
   * version records its size, listed at that size, is present and whole in length with no request;
   * its content is read only by the deep proof (`verifyData`, `cleanup --verify-data`).
   */
  describe("data files whose versions record their sizes", () => {
    /** A LanceDB table whose latest version adds a data file no removed version names (LanceDB records every data file's size). */
    async function appendedTable(): Promise<{ tableDir: string; own: string }> {
      const dbUri = await makeTempDir("lw-prove-sized-");
      dirs.push(dbUri);
      const ds = await buildLanceDataset({
        dbUri,
        steps: [
          { op: "create", rows: 10 },
          { op: "append", rows: 5 },
          { op: "append", rows: 5 },
        ],
      });
      ds.close();
      const tableDir = join(dbUri, "t.lance");
      const store = new LocalStore(tableDir);
      const latest = await lanceFormat.readSnapshot(store, (await lanceFormat.latestVersionFile(store))!);
      const own = latest.referencedFiles.filter((file) => file.role === "data").at(-1)!;
      expect(own.size, "LanceDB 0.31 records the data file's size in the manifest").toBe((await stat(join(tableDir, own.path))).size);
      return { tableDir, own: own.path };
    }

    it("are proven by the listing alone: no data file is read; the deep proof reads the one only kept versions need", async () => {
      for (const verifyData of [false, true]) {
        const { tableDir, own } = await appendedTable();
        const gets: string[] = [];
        const report = await runCleanup(recordingGets(new LocalStore(tableDir), gets), { format: lanceFormat, ...aggressive(), ...(verifyData ? { verifyData } : {}) });
        expect(report.versions_removed).toEqual([1, 2]);
        expect(
          gets.filter((key) => key.startsWith("data/")),
          verifyData ? "the deep proof" : "the default proof",
        ).toEqual(verifyData ? [own] : []);
      }
    });

    it("a same-size overwrite of one: the default proof does not read it, the deep proof refuses the run naming it, nothing deleted", async () => {
      for (const verifyData of [false, true]) {
        const { tableDir, own } = await appendedTable();
        const { size } = await stat(join(tableDir, own));
        await writeFile(join(tableDir, own), randomBytes(size));
        const before = await listTree(tableDir);
        const outcome = await runCleanup(new LocalStore(tableDir), { format: lanceFormat, ...aggressive(), ...(verifyData ? { verifyData } : {}) }).then(
          (report) => report.status,
          (e: Error) => e.message,
        );
        if (!verifyData) {
          // Not worth a request per file: the listing shows the size the version recorded (why: docs/cleanup.md).
          expect(outcome).toBe("completed");
          continue;
        }
        expect(outcome).toContain(
          `cleanup refused: the latest version (3) cannot be read: ${own} (version 3): not a Lance data file: no LANC magic at its end; nothing was deleted`,
        );
        expect(withoutOurs(await listTree(tableDir))).toEqual(withoutOurs(before));
      }
    });
  });

  it("names versions in runs", () => {
    expect(describeList([3])).toBe("3");
    expect(describeList([1, 2])).toBe("1, 2");
    expect(describeList([9, 1, 2, 3, 7])).toBe("1-3, 7 and 9");
  });
});

/** The store, with the key of every GET it serves appended to `gets`. */
function recordingGets(store: ObjectStore, gets: string[]): ObjectStore {
  return new Proxy(store, {
    get(target, name, receiver) {
      if (name === "get")
        return (key: string, range?: ByteRange) => {
          gets.push(key);
          return target.get(key, range);
        };
      const value = Reflect.get(target, name, receiver) as unknown;
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}
