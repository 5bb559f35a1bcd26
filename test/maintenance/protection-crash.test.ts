/**
 * History protection after a crash: a run killed after three version-file deletes below the
 * boundary, then a tag created below it. The history below the boundary is partial already, so
 * the next runs finish what is due, keep what the tag needs, and say so in the receipt and in
 * `versions`; the boundary does not lift while a version below it remains; nothing is unreadable.
 */
import * as lancedb from "@lancedb/lancedb";
import { afterAll, describe, expect, it } from "vitest";
import { BufferIO } from "../../lib/cli/io.ts";
import { runCli } from "../../lib/cli/run-cli.ts";
import { runCleanup } from "../../lib/maintenance/run-cleanup.ts";
import { StoreUnavailableError } from "../../lib/store/errors.ts";
import { LocalStore } from "../../lib/store/local-store.ts";
import { buildLanceDataset, makeTempDir, removeDir, type DatasetStep } from "../support/lance-datasets.ts";
import { compareContents, readContents } from "./lance-checks.ts";

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await removeDir(dir);
});

/** The real store, dead (every mutating request fails) once it has deleted `n` version files. */
function dyingAfterVersionDeletes(store: LocalStore, n: number): LocalStore {
  let versionDeletes = 0;
  const dead = (): boolean => versionDeletes >= n;
  const dying = Object.create(store) as LocalStore;
  dying.deleteMany = async (keys) => {
    if (dead()) throw new StoreUnavailableError(`${store.uri}: killed`, { uri: store.uri });
    const result = await store.deleteMany(keys);
    versionDeletes += keys.filter((key) => key.startsWith("_versions/")).length;
    return result;
  };
  dying.put = async (key, body, options) => {
    if (dead()) throw new StoreUnavailableError(`${store.uri}: killed`, { uri: store.uri });
    return store.put(key, body, options);
  };
  return dying;
}

describe("history protection after a crash and a new tag", () => {
  it("finishes what is due, keeps what the tag needs, says so, and never lifts the boundary early", async () => {
    const dbUri = await makeTempDir("lw-protect-crash-");
    dirs.push(dbUri);
    const steps: DatasetStep[] = [{ op: "create", rows: 4 }, ...Array.from({ length: 39 }, () => ({ op: "append", rows: 1 }) as const)];
    const ds = await buildLanceDataset({ dbUri, steps });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const start = new Date();
    const store = new LocalStore(ds.tableUri);
    const settings = { olderThanMs: 0, retainVersions: 1, protectBefore: 31 };

    // Killed after three version-file deletes below the boundary (one key per delete request).
    const killed = await runCleanup(dyingAfterVersionDeletes(store, 3), { settings, now: () => start, deleteBatchSize: 1, deleteConcurrency: 1 }).catch((error: Error) => error);
    expect(killed).toBeInstanceOf(Error);
    const before = await readContents(dbUri);
    expect([...before.versions.keys()].slice(0, 2)).toEqual([4, 5]);

    // Then someone tags version 29, below the boundary.
    await (await ds.table.tags()).create("keep-29", 29);
    ds.close();

    const later = new Date(start.getTime() + 20 * 60_000);
    const second = await runCleanup(store, { settings, now: () => later });
    expect(second.status).toBe("completed");
    expect(second.protection).toMatchObject({ boundary: 31, result: "partial", removed_earlier: [1, 2, 3] });
    expect(second.protection!.reason).toMatch(/an earlier run removed 3 of the versions below 31/);
    expect(second.protection!.reason).toMatch(/29: tagged "keep-29"/);
    expect(second.versions_removed).toEqual([...range(4, 28), 30, ...range(31, 39)]);
    expect(second.versions_kept).toBe(2);

    // `versions` says it too, from the checkpoint.
    const io = new BufferIO();
    expect(await runCli(["versions", ds.tableUri], io)).toBe(0);
    expect(io.stdout).toMatch(/^history protection before version 31: partial: an earlier run removed 3 of the versions below 31/m);

    // The boundary does not lift: the next run still reports the partial history, 29 stays.
    const third = await runCleanup(store, { settings, now: () => new Date(later.getTime() + 60_000) });
    expect(third.protection).toMatchObject({ boundary: 31, result: "partial", below: [29] });
    expect(third.versions_removed).toEqual([]);

    // Nothing left is unreadable: the tag and the latest read as before.
    expect(compareContents(before, await readContents(dbUri))).toEqual([]);
    const db = await lancedb.connect(dbUri);
    const table = await db.openTable("t");
    await table.checkout("keep-29");
    expect(await table.countRows()).toBe(ds.written.find((w) => w.version === 29)!.rowCount);
    table.close();
    db.close();
  });
});

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}
