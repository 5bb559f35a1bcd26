/**
 * What a run removed, as one value each step returns and the pipeline merges (after Lance's
 * RemovalStats): the versions gone, files and bytes by role, and the deletes that failed.
 */
import type { DeleteFailure } from "../store/object-store.ts";
import type { PlannedFile, PlannedKind } from "./file-plan.ts";

export interface KindTotals {
  files: number;
  bytes: number;
}

export interface RemovalStats {
  versionsRemoved: number[];
  filesByRole: Partial<Record<PlannedKind, KindTotals>>;
  bytesRemoved: number;
  deleteFailures: DeleteFailure[];
}

export const NO_REMOVAL: RemovalStats = Object.freeze({ versionsRemoved: [], filesByRole: {}, bytesRemoved: 0, deleteFailures: [] }) as RemovalStats;

export function removalStats(files: Iterable<PlannedFile>, versionsRemoved: readonly number[] = [], deleteFailures: readonly DeleteFailure[] = []): RemovalStats {
  const filesByRole: Partial<Record<PlannedKind, KindTotals>> = {};
  let bytesRemoved = 0;
  for (const file of files) {
    const entry = (filesByRole[file.kind] ??= { files: 0, bytes: 0 });
    entry.files++;
    entry.bytes += file.size;
    bytesRemoved += file.size;
  }
  return { versionsRemoved: [...versionsRemoved], filesByRole, bytesRemoved, deleteFailures: [...deleteFailures] };
}

export function mergeStats(a: RemovalStats, b: RemovalStats): RemovalStats {
  const filesByRole: Partial<Record<PlannedKind, KindTotals>> = {};
  for (const stats of [a, b]) {
    for (const [role, totals] of Object.entries(stats.filesByRole)) {
      const entry = (filesByRole[role] ??= { files: 0, bytes: 0 });
      entry.files += totals!.files;
      entry.bytes += totals!.bytes;
    }
  }
  return {
    versionsRemoved: [...new Set([...a.versionsRemoved, ...b.versionsRemoved])].sort((x, y) => x - y),
    filesByRole,
    bytesRemoved: a.bytesRemoved + b.bytesRemoved,
    deleteFailures: [...a.deleteFailures, ...b.deleteFailures],
  };
}
