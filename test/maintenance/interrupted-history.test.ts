/**
 * Issue: a stopped or killed cleanup must not hide history. On a 40-version LanceDB table, a
 * cleanup dies at its k-th mutating request (nothing after it reaches the store, as with
 * SIGKILL), for every k; right after, `versions` and `version-at` answer as they would after a
 * complete run for every version already removed (no gap), and the next run completes.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lanceFormat } from "../../lib/formats/lance/lance-format.ts";
import { readHistory } from "../../lib/head/timeline-source.ts";
import { runCleanup } from "../../lib/maintenance/run-cleanup.ts";
import type { RunCleanupOptions } from "../../lib/maintenance/run-cleanup.ts";
import type { VersionRecord } from "../../lib/model/version-record.ts";
import { FaultInjectingStore } from "../support/fault-injecting-store.ts";
import { LocalStore } from "../../lib/store/local-store.ts";
import { versionAt } from "../../lib/versions/version-at.ts";
import { buildLanceDataset, makeTempDir, removeDir, type DatasetStep } from "../support/lance-datasets.ts";
import { compareContents, copyTree, readContents, type TableContents } from "./lance-checks.ts";

const VERSIONS = 40;
const dirs: string[] = [];
let template: string;
let before: TableContents;
let historyBefore: VersionRecord[];
let cutoff: Date;

async function freshCopy(): Promise<{ dir: string; store: LocalStore }> {
  const dir = await makeTempDir("lw-interrupted-");
  dirs.push(dir);
  await copyTree(template, dir);
  return { dir, store: new LocalStore(join(dir, "t.lance")) };
}

const options = (now: Date): RunCleanupOptions => ({ settings: { olderThanMs: 0, retainVersions: 3 }, now: () => now, deleteBatchSize: 3 });
const facts = (records: readonly VersionRecord[]) => records.map(({ is_cleaned_up: _c, ...rest }) => rest);

/** What `versions` and `version-at` must say, checked against the store as it is now. */
async function assertNoGap(store: LocalStore, context: string): Promise<void> {
  const history = await readHistory(store);
  expect(facts(history.records), context).toEqual(facts(historyBefore));
  const live = new Set((await lanceFormat.listVersionFiles(store)).map((f) => f.version));
  for (const record of history.records) expect(record.is_cleaned_up, `${context}: version ${record.version}`).toBe(!live.has(record.version));
  for (const record of historyBefore) {
    expect(versionAt(history.records, record.timestamp_millis)?.version, `${context}: version-at of version ${record.version}`).toBe(record.version);
  }
}

beforeAll(async () => {
  template = await makeTempDir("lw-interrupted-template-");
  dirs.push(template);
  const steps: DatasetStep[] = [{ op: "create", rows: 10 }];
  for (let v = 2; v <= VERSIONS; v++) steps.push(v % 7 === 0 ? { op: "delete", where: `id = ${v}` } : { op: "append", rows: 2 });
  const ds = await buildLanceDataset({ dbUri: template, steps });
  ds.close();
  expect(ds.written).toHaveLength(VERSIONS);
  await new Promise((resolve) => setTimeout(resolve, 20));
  cutoff = new Date();
  before = await readContents(template);
  historyBefore = (await readHistory(new LocalStore(join(template, "t.lance")))).records;
});
afterAll(async () => {
  for (const dir of dirs) await removeDir(dir);
});

describe("a cleanup that dies at its k-th mutating request, on a 40-version table", () => {
  it("for every k: no gap in versions or version-at right after, and the next run completes", async () => {
    const counting = new FaultInjectingStore((await freshCopy()).store);
    const reference = await runCleanup(counting, options(cutoff));
    expect(reference.versions_removed).toHaveLength(VERSIONS - 3);
    const mutations = counting.mutationCount;

    for (let k = 1; k <= mutations; k++) {
      const { dir, store } = await freshCopy();
      // Every mutating request from the k-th on fails: the process is gone as far as the store can tell.
      const dead = Array.from({ length: mutations + 10 }, (_, i) => ({ at: k + i }));
      const outcome = await runCleanup(new FaultInjectingStore(store, { failMutations: dead }), options(cutoff)).then(
        (report) => report.status,
        (error: Error) => `failed: ${error.message}`,
      );
      const context = `died at mutation ${k} of ${mutations} (${outcome})`;
      await assertNoGap(store, context);
      // Every kept version still reads with LanceDB (checked on every fifth k: a full read is slow).
      if (k % 5 === 0) expect(compareContents(before, await readContents(dir)), context).toEqual([]);

      const rerun = await runCleanup(store, options(new Date(cutoff.getTime() + 20 * 60_000)));
      expect(rerun.status, context).toBe("completed");
      await assertNoGap(store, `${context}, after the rerun`);
      expect(
        (await readHistory(store)).records.filter((r) => r.is_cleaned_up).map((r) => r.version),
        context,
      ).toEqual(reference.versions_removed);
    }
  });

  it("stopped by its deadline or an abort between delete batches: no gap either", async () => {
    for (const abortAfter of [1, 3, 9]) {
      const { store } = await freshCopy();
      const controller = new AbortController();
      let batches = 0;
      const aborting = Object.create(store) as LocalStore;
      aborting.deleteMany = async (keys) => {
        const result = await store.deleteMany(keys);
        if (++batches === abortAfter) controller.abort();
        return result;
      };
      const report = await runCleanup(aborting, { ...options(cutoff), signal: controller.signal });
      expect(report.status).toBe("stopped");
      await assertNoGap(store, `aborted after delete batch ${abortAfter}`);
    }
  });
});
