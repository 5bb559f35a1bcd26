/**
 * Deletes keys in batches (one store request per batch, at most 1,000 keys as S3 allows) with a
 * bounded number of batches in flight, paced, and stops between batches when asked: a run
 * stopped there is safe to run again.
 *
 * Pacing: batches start no faster than the allowed rate (keys per second, shared by every lane).
 * A batch S3 answers with SlowDown or 503 (after the SDK's own retries, see s3-errors.ts) is not
 * a failure yet: the allowed rate halves (below what was achieved so far), the throttled keys
 * wait a backoff with full jitter (random in [0, min(cap, base·2^attempt)]) and go again, up to
 * `maxAttempts`; batches that pass raise the rate again by a tenth, up to the configured maximum.
 * Only keys still throttled after the last attempt are reported failed.
 */
import { setTimeout as sleepFor } from "node:timers/promises";
import type { DeleteFailure, ObjectStore } from "../store/object-store.ts";

export const DEFAULT_DELETE_BATCH_SIZE = 1000;
export const MAX_DELETE_BATCH_SIZE = 1000;
export const DEFAULT_DELETE_CONCURRENCY = 4;
/** Attempts per throttled batch, the first included. */
export const DEFAULT_THROTTLE_ATTEMPTS = 8;
const BASE_BACKOFF_MS = 200;
const MAX_BACKOFF_MS = 20_000;
/** The rate never drops below this many keys per second, however often S3 says slow down. */
const MIN_RATE = 1;

export interface DeletePacing {
  /** Keys deleted per second at most (default: no limit until S3 throttles). */
  maxRate?: number;
  /** Attempts per batch whose keys S3 throttled (default 8). */
  maxAttempts?: number;
  baseBackoffMs?: number;
  maxBackoffMs?: number;
  /** Ends every wait at once when it aborts (Ctrl-C, SIGTERM, a Lambda's end), so a paced run stops without sitting out its pace. */
  signal?: AbortSignal;
  /** Injected for tests: waiting, randomness and the clock (milliseconds). */
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
  clock?: () => number;
}

export interface BatchDeleteOptions {
  batchSize?: number;
  concurrency?: number;
  pacing?: DeletePacing;
  /** One pacer shared by several calls (the pipeline's commit files, then the rest); overrides `pacing`. */
  pacer?: DeletePacer;
  /** Checked before each batch starts; true → no new batch starts. */
  shouldStop?: () => boolean;
  /** Awaited before each batch (the pipeline renews its lease here); a throw stops the deletes. */
  beforeBatch?: () => Promise<void>;
  onDeleted?: (count: number) => void;
  /**
   * Called with each batch's keys once the batch is done (deleted or failed for good). When
   * given, the result's `deleted` stays empty: a caller deleting a million keys keeps what it
   * needs of them itself instead of a set of every key.
   */
  onBatchDone?: (keys: readonly string[], deleted: ReadonlySet<string>) => void;
}

/** How fast the deletes went, for the report and the receipt. */
export interface DeleteRate {
  /** The configured limit in keys per second (null: none). */
  max_per_second: number | null;
  /** Keys deleted per second over the time spent deleting (null when nothing was deleted). */
  achieved_per_second: number | null;
  keys_deleted: number;
  elapsed_ms: number;
  /** Delete requests S3 answered with SlowDown or 503 (each retried after a backoff). */
  throttled_requests: number;
  /** The allowed rate at the end, after slowing down for throttling (null: never limited). */
  final_limit_per_second: number | null;
}

export interface BatchDeleteResult {
  deleted: Set<string>;
  failed: DeleteFailure[];
  /** True when batches were left undone because of `shouldStop`. */
  stopped: boolean;
  rate: DeleteRate;
}

/** The allowed rate, shared by every lane: a schedule of batch start times plus AIMD on throttling. */
export class DeletePacer {
  readonly maxRate: number | null;
  private limit: number;
  private nextStart = 0;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly clock: () => number;
  private readonly random: () => number;
  private readonly base: number;
  private readonly cap: number;
  readonly maxAttempts: number;
  readonly startedAt: number;
  keysDeleted = 0;
  throttled = 0;

  constructor(pacing: DeletePacing = {}) {
    if (pacing.maxRate !== undefined && !(pacing.maxRate > 0)) throw new RangeError(`delete rate must be a positive number of keys per second, got ${pacing.maxRate}`);
    this.maxRate = pacing.maxRate ?? null;
    this.limit = pacing.maxRate ?? Number.POSITIVE_INFINITY;
    const signal = pacing.signal;
    this.sleep = pacing.sleep ?? ((ms) => (signal ? sleepFor(ms, undefined, { signal }).catch(() => undefined) : sleepFor(ms).then(() => undefined)));
    this.clock = pacing.clock ?? Date.now;
    this.random = pacing.random ?? Math.random;
    this.base = pacing.baseBackoffMs ?? BASE_BACKOFF_MS;
    this.cap = pacing.maxBackoffMs ?? MAX_BACKOFF_MS;
    this.maxAttempts = pacing.maxAttempts ?? DEFAULT_THROTTLE_ATTEMPTS;
    this.startedAt = this.clock();
  }

  /** The allowed rate now, in keys per second (Infinity: unlimited). */
  get currentLimit(): number {
    return this.limit;
  }

  /** Waits until a batch of `keys` may start at the allowed rate. */
  async admit(keys: number): Promise<void> {
    if (!Number.isFinite(this.limit)) return;
    const now = this.clock();
    const start = Math.max(now, this.nextStart);
    this.nextStart = start + (keys * 1000) / this.limit;
    if (start > now) await this.sleep(start - now);
  }

  /** S3 said slow down: halve the rate (below what was achieved), then wait a full-jitter backoff. */
  async throttledBackoff(attempt: number): Promise<void> {
    this.throttled++;
    const achieved = this.achievedRate();
    const from = Number.isFinite(this.limit) ? this.limit : (achieved ?? 2 * MIN_RATE * 1000);
    this.limit = Math.max(MIN_RATE, Math.min(from, achieved ?? from) / 2);
    const ceiling = Math.min(this.cap, this.base * 2 ** attempt);
    await this.sleep(Math.floor(this.random() * ceiling));
  }

  /** A batch went through: raise the rate by a tenth, up to the maximum (or back to none). */
  succeeded(keys: number): void {
    this.keysDeleted += keys;
    if (!Number.isFinite(this.limit)) return;
    const raised = this.limit * 1.1;
    this.limit = this.maxRate === null ? raised : Math.min(this.maxRate, raised);
  }

  achievedRate(): number | null {
    const elapsed = this.clock() - this.startedAt;
    if (this.keysDeleted === 0 || elapsed <= 0) return null;
    return (this.keysDeleted * 1000) / elapsed;
  }

  report(): DeleteRate {
    const achieved = this.achievedRate();
    return {
      max_per_second: this.maxRate,
      achieved_per_second: achieved === null ? null : Math.round(achieved * 10) / 10,
      keys_deleted: this.keysDeleted,
      elapsed_ms: this.clock() - this.startedAt,
      throttled_requests: this.throttled,
      final_limit_per_second: Number.isFinite(this.limit) ? Math.round(this.limit * 10) / 10 : null,
    };
  }
}

export async function deleteInBatches(store: ObjectStore, keys: Iterable<string>, options: BatchDeleteOptions = {}): Promise<BatchDeleteResult> {
  const pacer = options.pacer ?? new DeletePacer(options.pacing);
  // Under a rate limit a batch holds at most one second of keys: the pace stays even, and a stop
  // (shouldStop, checked between batches) waits at most about a second, not 1,000 keys' worth.
  const pacedBatch = pacer.maxRate === null ? Number.POSITIVE_INFINITY : Math.max(1, Math.floor(pacer.maxRate));
  const batchSize = Math.min(options.batchSize ?? DEFAULT_DELETE_BATCH_SIZE, MAX_DELETE_BATCH_SIZE, pacedBatch);
  const concurrency = options.concurrency ?? DEFAULT_DELETE_CONCURRENCY;
  // Batches are cut as lanes take them: the keys are read as they are deleted, never held whole.
  const source = keys[Symbol.iterator]();
  let lookahead: IteratorResult<string> = source.next();
  const hasMore = (): boolean => !lookahead.done;
  const takeBatch = (): string[] => {
    const batch: string[] = [];
    while (!lookahead.done && batch.length < batchSize) {
      batch.push(lookahead.value);
      lookahead = source.next();
    }
    return batch;
  };
  const deleted = new Set<string>();
  const failed: DeleteFailure[] = [];
  let stopped = false;
  const errors: unknown[] = [];
  const deleteBatch = async (batch: readonly string[]): Promise<void> => {
    const batchDeleted = options.onBatchDone ? new Set<string>() : deleted;
    try {
      await deleteKeys(batch, batchDeleted);
    } finally {
      options.onBatchDone?.(batch, batchDeleted);
    }
  };
  const deleteKeys = async (batch: readonly string[], deleted: Set<string>): Promise<void> => {
    let pending = batch;
    for (let attempt = 0; pending.length > 0; attempt++) {
      await pacer.admit(pending.length);
      const result = await store.deleteMany(pending);
      const failedKeys = new Set(result.failed.map((f) => f.key));
      let done = 0;
      for (const key of result.deleted) {
        if (!failedKeys.has(key)) {
          deleted.add(key);
          done++;
        }
      }
      const throttled = result.failed.filter((f) => f.throttled);
      failed.push(...result.failed.filter((f) => !f.throttled));
      if (done > 0) pacer.succeeded(done);
      options.onDeleted?.(done + result.failed.length - throttled.length);
      if (throttled.length === 0) return;
      if (attempt + 1 >= pacer.maxAttempts) {
        failed.push(...throttled);
        options.onDeleted?.(throttled.length);
        return;
      }
      await pacer.throttledBackoff(attempt);
      pending = throttled.map((f) => f.key);
    }
  };
  const lane = async (): Promise<void> => {
    while (hasMore() && errors.length === 0) {
      if (options.shouldStop?.()) {
        stopped = true;
        return;
      }
      const batch = takeBatch();
      try {
        await options.beforeBatch?.();
        await deleteBatch(batch);
      } catch (error) {
        errors.push(error);
      }
    }
  };
  // Every lane is awaited before a failure is rethrown: a caller that releases its lease on
  // the error must not have batches still deleting behind its back.
  await Promise.all(Array.from({ length: concurrency }, lane));
  if (errors.length > 0) throw errors[0];
  return { deleted, failed, stopped, rate: pacer.report() };
}
