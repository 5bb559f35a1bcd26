/**
 * Delete pacing: batches start at the configured rate, and SlowDown answers slow the deletes
 * down (rate halved, full-jitter backoff, throttled keys sent again) without failing anything.
 * The clock is a fake one moved only by the pacer's waits, so rates are exact, not timed.
 */
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DeletePacer, deleteInBatches } from "../../lib/maintenance/delete-batches.ts";
import type { DeletePacing } from "../../lib/maintenance/delete-batches.ts";
import { runCleanup } from "../../lib/maintenance/run-cleanup.ts";
import { FaultInjectingStore } from "../support/fault-injecting-store.ts";
import { LocalStore } from "../../lib/store/local-store.ts";
import { buildLanceDataset, makeTempDir, removeDir } from "../support/lance-datasets.ts";
import { compareContents, readContents } from "./lance-checks.ts";

let dir: string;
const keys = Array.from({ length: 60 }, (_, i) => `data/f${String(i).padStart(2, "0")}.lance`);

beforeEach(async () => {
  dir = await makeTempDir("lw-delete-pacing-");
});
afterEach(() => removeDir(dir));

/** A clock that moves only when the pacer waits; every wait is recorded. */
function fakeTime(): { pacing: DeletePacing; waits: number[] } {
  let now = 1_000_000;
  const waits: number[] = [];
  return {
    waits,
    pacing: {
      clock: () => now,
      sleep: async (ms) => {
        waits.push(ms);
        now += ms;
      },
      random: () => 0.5,
    },
  };
}

async function filled(): Promise<LocalStore> {
  const store = new LocalStore(join(dir, "t"));
  for (const key of keys) await store.put(key, new Uint8Array([1]));
  return store;
}

async function remaining(store: LocalStore): Promise<string[]> {
  const left: string[] = [];
  for await (const object of store.list("data/")) left.push(object.key);
  return left;
}

describe("delete pacing", () => {
  it("starts batches no faster than the configured rate", async () => {
    const store = await filled();
    const time = fakeTime();
    const result = await deleteInBatches(store, keys, { batchSize: 10, concurrency: 2, pacing: { ...time.pacing, maxRate: 100 } });
    expect(result.failed).toEqual([]);
    expect(result.deleted.size).toBe(60);
    // 60 keys at 100 keys/s: the sixth batch may start 500 ms after the first.
    expect(result.rate).toMatchObject({ max_per_second: 100, keys_deleted: 60, throttled_requests: 0, elapsed_ms: 500 });
    expect(result.rate.achieved_per_second).toBe(120);
    expect(await remaining(store)).toEqual([]);
  });

  it("injected SlowDown answers slow the delete rate and nothing fails", async () => {
    const calm = fakeTime();
    const unthrottled = await deleteInBatches(await filled(), keys, { batchSize: 10, concurrency: 2, pacing: { ...calm.pacing, maxRate: 100 } });

    const store = new FaultInjectingStore(await filled(), { throttleDeletes: [2, 3, 5] });
    const time = fakeTime();
    const pacer = new DeletePacer({ ...time.pacing, maxRate: 100 });
    const result = await deleteInBatches(store, keys, { batchSize: 10, concurrency: 2, pacer });
    expect(store.throttledCount).toBe(3);
    expect(result.failed).toEqual([]);
    expect(result.deleted.size).toBe(60);
    expect(await remaining(store.inner as LocalStore)).toEqual([]);
    expect(result.rate.throttled_requests).toBe(3);
    // Slower than the same deletes unthrottled, and the limit came down from 100 keys/s.
    expect(result.rate.achieved_per_second!).toBeLessThan(unthrottled.rate.achieved_per_second!);
    expect(result.rate.final_limit_per_second!).toBeLessThan(100);
    // Full jitter: each backoff is random · min(cap, 200 ms · 2^attempt).
    expect(time.waits).toContain(100);
  });

  it("keys still throttled after the last attempt are failures, reported throttled", async () => {
    const store = new FaultInjectingStore(await filled(), { throttleDeletes: () => true });
    const time = fakeTime();
    const result = await deleteInBatches(store, keys.slice(0, 5), { pacing: { ...time.pacing, maxAttempts: 3 } });
    expect(store.throttledCount).toBe(3);
    expect(result.deleted.size).toBe(0);
    expect(result.failed.map((f) => f.throttled)).toEqual([true, true, true, true, true]);
  });

  it("under a rate below a batch, a batch holds one second of keys, so the pace is even", async () => {
    const store = await filled();
    const time = fakeTime();
    const sizes: number[] = [];
    const result = await deleteInBatches(store, keys, { concurrency: 1, pacing: { ...time.pacing, maxRate: 20 }, onBatchDone: (batch) => sizes.push(batch.length) });
    expect(sizes).toEqual([20, 20, 20]);
    expect(time.waits).toEqual([1000, 1000]);
    expect(result.rate.elapsed_ms).toBe(2000);
    expect(await remaining(store)).toEqual([]);
  });

  it("an abort ends a paced wait at once and no batch starts after it (a Ctrl-C does not sit out the pace)", async () => {
    const store = await filled();
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    const started = Date.now();
    const result = await deleteInBatches(store, keys, { concurrency: 1, pacing: { maxRate: 1, signal: controller.signal }, shouldStop: () => controller.signal.aborted });
    const elapsed = Date.now() - started;
    // At 1 key a second the 60 keys take a minute; the run stops right after the abort instead,
    // with the batch in hand deleted and the rest left for the next run.
    expect(elapsed).toBeLessThan(2000);
    expect(result.stopped).toBe(true);
    expect(result.deleted.size).toBe(2);
    expect((await remaining(store)).length).toBe(58);
  });

  it("refuses a rate that is not positive", () => {
    expect(() => new DeletePacer({ maxRate: 0 })).toThrow(/positive/);
  });

  it("a cleanup whose deletes S3 throttles completes with every delete done, and its receipt reports the rate", async () => {
    const ds = await buildLanceDataset({
      dbUri: dir,
      steps: [
        { op: "create", rows: 20 },
        { op: "append", rows: 10 },
        { op: "overwrite", rows: 15 },
        { op: "append", rows: 5 },
      ],
    });
    ds.close();
    const cutoff = new Date(Date.now() + 1000);
    const before = await readContents(dir);
    const store = new FaultInjectingStore(new LocalStore(join(dir, "t.lance")), { throttleDeletes: [1, 2, 4] });
    const time = fakeTime();
    const report = await runCleanup(store, { settings: { olderThanMs: 0 }, now: () => cutoff, deleteBatchSize: 2, maxDeleteRate: 50, deletePacing: time.pacing });
    expect(report.status).toBe("completed");
    expect(report.delete_failures).toEqual([]);
    expect(report.versions_removed.length).toBeGreaterThan(0);
    expect(report.delete_rate).toMatchObject({ max_per_second: 50, throttled_requests: 3 });
    const receipt = JSON.parse(new TextDecoder().decode((await store.get(report.receipt!)).body));
    expect(receipt.delete_rate).toMatchObject({ max_per_second: 50, throttled_requests: 3 });
    expect(receipt.delete_rate.achieved_per_second).toBeGreaterThan(0);
    const after = await readContents(dir);
    expect(compareContents(before, after)).toEqual([]);
  });
});
