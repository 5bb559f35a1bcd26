/**
 * Deletes keys in batches (one store request per batch) with a bounded number of batches in
 * flight, and stops between batches when asked: a run stopped there is safe to run again.
 */
import type { DeleteFailure, ObjectStore } from "../store/object-store.ts";

export const DEFAULT_DELETE_BATCH_SIZE = 1000;
export const DEFAULT_DELETE_CONCURRENCY = 4;

export interface BatchDeleteOptions {
  batchSize?: number;
  concurrency?: number;
  /** Checked before each batch starts; true → no new batch starts. */
  shouldStop?: () => boolean;
  /** Awaited before each batch (the pipeline renews its lease here); a throw stops the deletes. */
  beforeBatch?: () => Promise<void>;
  onDeleted?: (count: number) => void;
}

export interface BatchDeleteResult {
  deleted: Set<string>;
  failed: DeleteFailure[];
  /** True when batches were left undone because of `shouldStop`. */
  stopped: boolean;
}

export async function deleteInBatches(store: ObjectStore, keys: readonly string[], options: BatchDeleteOptions = {}): Promise<BatchDeleteResult> {
  const batchSize = options.batchSize ?? DEFAULT_DELETE_BATCH_SIZE;
  const concurrency = options.concurrency ?? DEFAULT_DELETE_CONCURRENCY;
  const batches: string[][] = [];
  for (let i = 0; i < keys.length; i += batchSize) batches.push(keys.slice(i, i + batchSize));
  const deleted = new Set<string>();
  const failed: DeleteFailure[] = [];
  let stopped = false;
  let next = 0;
  const errors: unknown[] = [];
  const lane = async (): Promise<void> => {
    while (next < batches.length && errors.length === 0) {
      if (options.shouldStop?.()) {
        stopped = true;
        return;
      }
      const batch = batches[next++]!;
      try {
        await options.beforeBatch?.();
        const result = await store.deleteMany(batch);
        const failedKeys = new Set(result.failed.map((f) => f.key));
        for (const key of result.deleted) if (!failedKeys.has(key)) deleted.add(key);
        failed.push(...result.failed);
        options.onDeleted?.(batch.length);
      } catch (error) {
        errors.push(error);
      }
    }
  };
  // Every lane is awaited before a failure is rethrown: a caller that releases its lease on
  // the error must not have batches still deleting behind its back.
  await Promise.all(Array.from({ length: Math.min(concurrency, batches.length) }, lane));
  if (errors.length > 0) throw errors[0];
  return { deleted, failed, stopped };
}
