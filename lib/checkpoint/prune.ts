/**
 * Stage `cleanup_old_checkpoints`: keep the newest `maxCheckpointFiles` checkpoints (2 by
 * default: the newest and one to fall back to) and delete older ones. The only deletes
 * lakewarden ever makes inside `_lakewarden/checkpoints/`; other files there are left alone.
 */
import type { DeleteFailure, ObjectStore } from "../store/object-store.ts";
import type { CheckpointFile } from "./load.ts";
import { listCheckpointFiles } from "./load.ts";

export const DEFAULT_MAX_CHECKPOINT_FILES = 2;

export interface PruneCheckpointsOptions {
  maxCheckpointFiles?: number;
  /** Keys that stay whatever their rank, e.g. the newest checkpoint that loads. */
  keep?: readonly string[];
  /** Checkpoint files already listed. */
  files?: readonly CheckpointFile[];
  /** List and decide, but delete nothing. */
  dryRun?: boolean;
}

export interface PruneCheckpointsResult {
  pruned: string[];
  kept: string[];
  failed: DeleteFailure[];
}

export async function cleanupOldCheckpoints(store: ObjectStore, options: PruneCheckpointsOptions = {}): Promise<PruneCheckpointsResult> {
  const max = options.maxCheckpointFiles ?? DEFAULT_MAX_CHECKPOINT_FILES;
  if (!Number.isSafeInteger(max) || max < 1) throw new RangeError(`maxCheckpointFiles must be at least 1, got ${max}`);
  const files = options.files ? [...options.files] : await listCheckpointFiles(store);
  const newestFirst = files.sort((a, b) => b.version - a.version);
  const protectedKeys = new Set(options.keep ?? []);
  const kept = newestFirst.filter((file, rank) => rank < max || protectedKeys.has(file.key)).map((f) => f.key);
  const doomed = newestFirst.filter((file) => !kept.includes(file.key)).map((f) => f.key);
  if (doomed.length === 0 || options.dryRun) return { pruned: doomed, kept, failed: [] };
  const { deleted, failed } = await store.deleteMany(doomed);
  const failedKeys = new Set(failed.map((f) => f.key));
  return { pruned: deleted.filter((key) => !failedKeys.has(key)), kept, failed };
}
