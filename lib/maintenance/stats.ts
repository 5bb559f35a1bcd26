/**
 * What a run removed, as one value (after Lance's RemovalStats): the versions gone, files and
 * bytes by role, and the deletes that failed. Each step records into its own as it works (the
 * deletes file by file as each batch comes back, the removal commit its versions, pruning its
 * failures) and returns it; the pipeline merges them.
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

/** A step's own stats, empty, to record into. */
export function newStats(): RemovalStats {
  return { versionsRemoved: [], filesByRole: {}, bytesRemoved: 0, deleteFailures: [] };
}

/** One file removed (or, in a dry run's explanation, to remove). */
export function recordFile(stats: RemovalStats, file: Pick<PlannedFile, "kind" | "size">): void {
  const entry = (stats.filesByRole[file.kind] ??= { files: 0, bytes: 0 });
  entry.files++;
  entry.bytes += file.size;
  stats.bytesRemoved += file.size;
}

export function recordVersions(stats: RemovalStats, versions: readonly number[]): void {
  stats.versionsRemoved.push(...versions);
}

export function recordFailures(stats: RemovalStats, failures: readonly DeleteFailure[]): void {
  stats.deleteFailures.push(...failures);
}

/** The stats of these files removed (a whole list at once: tests, and a plan explained). */
export function removalStats(files: Iterable<PlannedFile>, versionsRemoved: readonly number[] = [], deleteFailures: readonly DeleteFailure[] = []): RemovalStats {
  const stats = newStats();
  for (const file of files) recordFile(stats, file);
  recordVersions(stats, versionsRemoved);
  recordFailures(stats, deleteFailures);
  return stats;
}

/** The run's stats: every step's, merged (versions once each, ascending; failures in step order). */
export function mergeStats(...steps: readonly RemovalStats[]): RemovalStats {
  const filesByRole: Partial<Record<PlannedKind, KindTotals>> = {};
  for (const stats of steps) {
    for (const [role, totals] of Object.entries(stats.filesByRole)) {
      const entry = (filesByRole[role as PlannedKind] ??= { files: 0, bytes: 0 });
      entry.files += totals!.files;
      entry.bytes += totals!.bytes;
    }
  }
  return {
    versionsRemoved: [...new Set(steps.flatMap((stats) => stats.versionsRemoved))].sort((x, y) => x - y),
    filesByRole,
    bytesRemoved: steps.reduce((sum, stats) => sum + stats.bytesRemoved, 0),
    deleteFailures: steps.flatMap((stats) => stats.deleteFailures),
  };
}
