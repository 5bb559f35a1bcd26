/**
 * A crash at any step leaves the table readable, and the next run finishes the job: the
 * pipeline runs against a store that fails its k-th mutating request (lease writes, the intent,
 * every delete batch, the checkpoint, pruning, the receipt), for every k, then runs again.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lanceFormat } from "../../lib/formats/lance/lance-format.ts";
import { loadNewestCheckpoint } from "../../lib/checkpoint/load.ts";
import { runCleanup } from "../../lib/maintenance/run-cleanup.ts";
import type { RunCleanupOptions } from "../../lib/maintenance/run-cleanup.ts";
import { FaultInjectingStore } from "../support/fault-injecting-store.ts";
import { LocalStore } from "../../lib/store/local-store.ts";
import { readTimeline } from "../../lib/versions/timeline.ts";
import type { VersionRecord } from "../../lib/model/version-record.ts";
import { buildLanceDataset, makeTempDir, removeDir } from "../support/lance-datasets.ts";
import { compareContents, copyTree, listTree, readContents, type TableContents } from "./lance-checks.ts";

const dirs: string[] = [];
let template: string;
let before: TableContents;
let historyBefore: VersionRecord[];
let cutoff: Date;

async function freshCopy(): Promise<string> {
  const dir = await makeTempDir("lw-faults-");
  dirs.push(dir);
  await copyTree(template, dir);
  return dir;
}

/** Small delete batches, so a run makes many mutating requests to fail. */
const options = (now: Date): RunCleanupOptions => ({ settings: { olderThanMs: 0 }, now: () => now, deleteBatchSize: 2 });

const outsideOurFolder = (files: string[]) => files.filter((f) => !f.startsWith("_lakewarden/"));
const history = (records: readonly VersionRecord[]) => records.map(({ is_cleaned_up: _c, ...rest }) => rest);

beforeAll(async () => {
  template = await makeTempDir("lw-faults-template-");
  dirs.push(template);
  const ds = await buildLanceDataset({
    dbUri: template,
    steps: [
      { op: "create", rows: 20 },
      { op: "append", rows: 10 },
      { op: "delete", where: "id % 4 = 1" },
      { op: "createIndex" },
      { op: "tag", name: "indexed" },
      { op: "append", rows: 10 },
      { op: "overwrite", rows: 15 },
      { op: "append", rows: 5 },
    ],
  });
  ds.close();
  await new Promise((resolve) => setTimeout(resolve, 20));
  cutoff = new Date();
  before = await readContents(template);
  historyBefore = (await readTimeline(new LocalStore(join(template, "t.lance")), lanceFormat)).records;
});
afterAll(async () => {
  for (const dir of dirs) await removeDir(dir);
});

describe("cleanup under a store that fails its k-th mutating request", () => {
  it("for every k: the table stays readable, a rerun completes, the checkpoint loads, history is whole", async () => {
    // A clean run on a copy: how many mutating requests a run makes, and where it ends.
    const referenceDir = await freshCopy();
    const counting = new FaultInjectingStore(new LocalStore(join(referenceDir, "t.lance")));
    const reference = await runCleanup(counting, options(cutoff));
    expect(reference.versions_removed).toEqual([1, 2, 3, 5, 6]);
    const mutations = counting.mutationCount;
    expect(mutations).toBeGreaterThanOrEqual(12);
    const finalFiles = outsideOurFolder(await listTree(join(referenceDir, "t.lance")));
    const cleanedUp = (await readTimeline(new LocalStore(join(referenceDir, "t.lance")), lanceFormat)).records.filter((r) => r.is_cleaned_up).map((r) => r.version);
    expect(cleanedUp).toEqual([1, 2, 3, 5, 6]);

    for (let k = 1; k <= mutations; k++) {
      const dir = await freshCopy();
      const store = new LocalStore(join(dir, "t.lance"));
      const faulty = new FaultInjectingStore(store, { failMutations: [{ at: k }] });
      const outcome = await runCleanup(faulty, options(cutoff)).then(
        (report) => `finished ${report.status} with ${report.delete_failures.length} failed deletes`,
        (error: Error) => `failed: ${error.message}`,
      );
      const context = `k=${k} (${outcome})`;
      expect(faulty.mutationCount, context).toBeGreaterThanOrEqual(k);

      // Readable right after the fault: latest, tags and every version left read as before.
      expect(compareContents(before, await readContents(dir)), context).toEqual([]);

      // The next run finishes the job (its clock is past any lease the failed run left behind).
      const rerun = await runCleanup(store, options(new Date(cutoff.getTime() + 20 * 60_000)));
      expect(rerun.status, context).toBe("completed");
      expect(rerun.errors, context).toEqual([]);
      expect(outsideOurFolder(await listTree(join(dir, "t.lance"))), context).toEqual(finalFiles);
      expect(compareContents(before, await readContents(dir)), context).toEqual([]);

      // The checkpoint loads and holds every version, the removed ones flagged.
      const loaded = await loadNewestCheckpoint(store);
      expect(loaded.skipped, context).toEqual([]);
      expect(
        loaded.checkpoint?.records.map((r) => r.version),
        context,
      ).toEqual(historyBefore.map((r) => r.version));
      const timeline = await readTimeline(store, lanceFormat);
      expect(history(timeline.records), context).toEqual(history(historyBefore));
      expect(
        timeline.records.filter((r) => r.is_cleaned_up).map((r) => r.version),
        context,
      ).toEqual(cleanedUp);
    }
  });
});

describe("a run stopped by its deadline or abort signal", () => {
  it("a deadline already passed stops before reading manifests, deletes nothing and releases the lease", async () => {
    const dir = await freshCopy();
    const store = new LocalStore(join(dir, "t.lance"));
    const files = await listTree(join(dir, "t.lance"));
    const report = await runCleanup(store, { ...options(cutoff), deadline: new Date(cutoff.getTime() - 1) });
    expect(report).toMatchObject({ status: "stopped", stop_reason: expect.stringMatching(/^stopped before reading manifests/) });
    expect(outsideOurFolder(await listTree(join(dir, "t.lance")))).toEqual(files);
    expect((await runCleanup(store, options(cutoff))).status).toBe("completed");
  });

  it("aborted between delete batches: the table stays readable and the next run finishes the job", async () => {
    const referenceDir = await freshCopy();
    await runCleanup(new LocalStore(join(referenceDir, "t.lance")), options(cutoff));
    const finalFiles = outsideOurFolder(await listTree(join(referenceDir, "t.lance")));

    for (const abortAfter of [1, 4, 7]) {
      const dir = await freshCopy();
      const store = new LocalStore(join(dir, "t.lance"));
      const controller = new AbortController();
      // The real store, with the abort signal fired after the n-th delete batch it serves.
      let batches = 0;
      const aborting = Object.create(store) as LocalStore;
      aborting.deleteMany = async (keys) => {
        const result = await store.deleteMany(keys);
        if (++batches === abortAfter) controller.abort();
        return result;
      };
      const report = await runCleanup(aborting, { ...options(cutoff), deleteBatchSize: 1, signal: controller.signal });
      const context = `abort after batch ${abortAfter}`;
      expect(report.status, context).toBe("stopped");
      expect(report.stop_reason, context).toMatch(/after deleting \d+ of \d+ files/);
      expect(compareContents(before, await readContents(dir)), context).toEqual([]);

      const rerun = await runCleanup(store, options(cutoff));
      expect(rerun.status, context).toBe("completed");
      expect(outsideOurFolder(await listTree(join(dir, "t.lance"))), context).toEqual(finalFiles);
      const timeline = await readTimeline(store, lanceFormat);
      expect(history(timeline.records), context).toEqual(history(historyBefore));
      expect(
        timeline.records.filter((r) => r.is_cleaned_up).map((r) => r.version),
        context,
      ).toEqual([1, 2, 3, 5, 6]);
    }
  });
});
