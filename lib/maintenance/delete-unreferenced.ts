/**
 * Stage `delete_unreferenced`, its deleting half: carry out a settled DeletePlan.
 *   1. removal: the removed versions' commit files, oldest first (a format that removes
 *      versions by a metadata commit has made that commit before: removal-commit.ts, a step of
 *      the run's own, or made here first for a caller of the stages by hand);
 *   2. a look at the version files again: a removed version whose commit file is there again
 *      (Lance's manifest-path migration copies manifests to new names while we delete the old
 *      ones) is alive, so none of the removed versions' files may go now: they wait for the next
 *      run, which plans with that version live;
 *   3. the files no kept version references.
 * So every version whose commit file exists stays complete at every moment, and a run stopped
 * half way leaves only unreferenced files, which its intent proves were committed.
 */
import type { TableFormat } from "../formats/table-format.ts";
import type { DeleteFailure, ObjectStore } from "../store/object-store.ts";
import { DeletePacer, deleteInBatches } from "./delete-batches.ts";
import type { DeletePacing, DeleteRate } from "./delete-batches.ts";
import type { PlannedFile } from "./file-plan.ts";
import type { DeletePlan } from "./plan-deletes.ts";
import type { ProcessedManifests } from "./process-manifests.ts";
import type { CleanupProgress } from "./progress.ts";
import type { ReferenceCheck } from "./reference-check.ts";
import { checkKeptReferences } from "./reference-check.ts";
import { ReferenceSet } from "./references.ts";
import { finishInterruptedCommit, writeRemovalCommit } from "./removal-commit.ts";
import type { RemovalStats } from "./stats.ts";
import { newStats, recordFailures, recordFile, recordVersions } from "./stats.ts";

export interface DeleteUnreferencedOptions {
  /** Checked between delete batches: true → stop, leaving the rest for the next run. */
  shouldStop?: () => boolean;
  /** Awaited before each delete batch (the pipeline keeps its lease fresh here). */
  beforeBatch?: () => Promise<void>;
  batchSize?: number;
  deleteConcurrency?: number;
  /**
   * Keys earlier runs of this budgeted chain deleted (run-progress.ts), read once after the
   * deletes: the post-delete check counts them as deleted by the run, so a kept version naming
   * one is an error, not old damage.
   */
  deletedEarlierInChain?: () => AsyncIterable<string>;
  /** Delete rate limit and back-off on SlowDown (delete-batches.ts). */
  pacing?: DeletePacing;
  progress?: CleanupProgress;
  now: Date;
  /**
   * The format's writes before the deletes (removal-commit.ts), when the caller made them as
   * steps of their own (the pipeline does, each behind its stop guard): the removal commit's key
   * (null: none was due). Absent: they are made here first, as a caller of the stages by hand needs.
   */
  formatWrites?: { removalCommit: string | null };
}

export interface DeletionOutcome {
  /** Which files of the plan's `toDelete` were deleted: bit i for its i-th file (see deletedFiles). */
  deletedMask: Uint8Array;
  deletedCount: number;
  failed: DeleteFailure[];
  stopped: boolean;
  /** Why the files of removed versions were left for the next run (null: they were not). */
  filesHeldBack: string | null;
  /** Removed versions whose commit file appeared again while the run deleted. */
  reappeared: number[];
  /** Versions whose commit files are all gone now. */
  removedVersions: number[];
  /** The metadata commit that removed versions, for formats that remove that way. */
  removalCommit: string | null;
  referenceCheck: ReferenceCheck | null;
  /** How fast the deletes went (the configured limit, the rate achieved, throttled requests). */
  rate: DeleteRate;
  /** What the deletes removed, recorded file by file as each batch came back (the removal commit's versions in `removedVersions`, not here, when the pipeline made it). */
  stats: RemovalStats;
}

/** The files of the plan the deletion deleted, in the plan's order (read a page at a time). */
export function* deletedFiles(plan: Pick<DeletePlan, "files">, deletion: Pick<DeletionOutcome, "deletedMask">): Iterable<PlannedFile> {
  let index = 0;
  for (const file of plan.files.toDelete) {
    if (isSet(deletion.deletedMask, index++)) yield file;
  }
}

/** The plan's files to delete that `keep` accepts, each with its place in `toDelete` (read a page at a time). */
export function* plannedDeletes(plan: Pick<DeletePlan, "files">, keep: (file: PlannedFile) => boolean): Iterable<{ file: PlannedFile; index: number }> {
  let index = 0;
  for (const file of plan.files.toDelete) {
    if (keep(file)) yield { file, index };
    index++;
  }
}

/** The removed versions' commit files in the plan: a few, one or so a version. */
export function commitFilesOf(plan: Pick<DeletePlan, "files">): { file: PlannedFile; index: number }[] {
  return [...plannedDeletes(plan, (file) => file.version !== undefined)];
}

export async function deleteUnreferenced(store: ObjectStore, format: TableFormat, plan: DeletePlan, options: DeleteUnreferencedOptions): Promise<DeletionOutcome> {
  const { processed, files } = plan;
  const commitFiles = commitFilesOf(plan);
  const commitsOldestFirst = [...commitFiles].sort((a, b) => a.file.version! - b.file.version!);
  options.progress?.stage("deleting files", files.toDelete.length);
  // One pacer for both halves: a SlowDown on commit files slows the files that follow.
  const pacer = new DeletePacer(options.pacing);
  const deletedMask = new Uint8Array(Math.ceil(files.toDelete.length / 8));
  let deletedCount = 0;
  const stats = newStats();
  // The kept versions' references, and the deleted keys they cover (the post-delete check's
  // only question about deleted keys: a few next to a million).
  const keptReferences = keptReferencesReadBeforeListing(processed);
  const deletedKept = new Set<string>();
  // Keys of the batches in flight, with their file and its place in toDelete.
  const inFlight = new Map<string, { file: PlannedFile; index: number }>();
  const batchOptions = {
    pacer,
    ...(options.batchSize !== undefined ? { batchSize: options.batchSize } : {}),
    ...(options.deleteConcurrency !== undefined ? { concurrency: options.deleteConcurrency } : {}),
    ...(options.shouldStop ? { shouldStop: options.shouldStop } : {}),
    ...(options.beforeBatch ? { beforeBatch: options.beforeBatch } : {}),
    onDeleted: (count: number) => options.progress?.advance(count),
    onBatchDone: (keys: readonly string[], deleted: ReadonlySet<string>) => {
      for (const key of keys) {
        const entry = inFlight.get(key);
        inFlight.delete(key);
        if (entry === undefined || !deleted.has(key)) continue;
        setBit(deletedMask, entry.index);
        deletedCount++;
        recordFile(stats, entry.file);
        if (keptReferences.has(key)) deletedKept.add(key);
      }
    },
  };
  function* keysOf(entries: Iterable<{ file: PlannedFile; index: number }>): Iterable<string> {
    for (const entry of entries) {
      inFlight.set(entry.file.key, entry);
      yield entry.file.key;
    }
  }

  let removalCommit = options.formatWrites?.removalCommit ?? null;
  if (!options.formatWrites) {
    if (files.toDelete.length > 0) await finishInterruptedCommit(store, format);
    removalCommit = await writeRemovalCommit(store, format, processed, options.now);
  }
  const first = await deleteInBatches(store, keysOf(commitsOldestFirst), batchOptions);
  const commitKeysDeleted = new Set(commitFiles.filter(({ index }) => isSet(deletedMask, index)).map(({ file }) => file.key));
  let heldBack: string | null = null;
  let reappeared: number[] = [];
  const hasOtherFiles = files.toDelete.length > commitFiles.length;
  if (!first.stopped && hasOtherFiles) {
    if (first.failed.length > 0) {
      // A commit file that could not be deleted keeps its version alive, and every file it names.
      heldBack = first.failed.length === 1 ? "1 version file could not be deleted" : `${first.failed.length} version files could not be deleted`;
    } else if (processed.plan.removed.length > 0) {
      reappeared = await versionsAliveAgain(store, format, processed, commitKeysDeleted);
      if (reappeared.length > 0)
        heldBack = `${reappeared.length === 1 ? "the version file of removed version" : "version files of removed versions"} ${reappeared.join(", ")} appeared again while this run deleted (a writer copying manifests to new names)`;
    }
  }
  const second =
    first.stopped || heldBack !== null
      ? { failed: [] as DeleteFailure[], stopped: first.stopped }
      : await deleteInBatches(store, keysOf(plannedDeletes(plan, (file) => file.version === undefined)), batchOptions);
  const gone = new Set(reappeared);
  for await (const key of options.deletedEarlierInChain?.() ?? []) if (keptReferences.has(key)) deletedKept.add(key);
  const failed = [...first.failed, ...second.failed];
  const removedByCommit = removalCommit !== null ? [...processed.plan.removed] : [];
  const removedByDeletes = versionsRemovedBy(processed, commitFiles, commitKeysDeleted).filter((v) => !gone.has(v));
  recordVersions(stats, options.formatWrites ? removedByDeletes : [...removedByCommit, ...removedByDeletes]);
  recordFailures(stats, failed);
  return {
    deletedMask,
    deletedCount,
    failed,
    stopped: first.stopped || second.stopped,
    filesHeldBack: heldBack,
    reappeared,
    removedVersions: removalCommit !== null ? removedByCommit : removedByDeletes,
    removalCommit,
    referenceCheck: checkKeptReferences(keptReferences, plan.listing, deletedKept, format.managedPrefixes),
    rate: pacer.report(),
    stats,
  };
}

function setBit(mask: Uint8Array, index: number): void {
  mask[index >> 3]! |= 1 << (index & 7);
}

function isSet(mask: Uint8Array, index: number): boolean {
  return (mask[index >> 3]! & (1 << (index & 7))) !== 0;
}

/**
 * Removed versions that have a commit file again (under a name this run did not delete). Keys
 * only, no stat per file (a local disk's listing would stat every version file): a key listed
 * but gone by now counts as alive, which only holds deletes back.
 */
async function versionsAliveAgain(store: ObjectStore, format: TableFormat, processed: ProcessedManifests, deletedKeys: ReadonlySet<string>): Promise<number[]> {
  const removed = new Set(processed.plan.removed);
  const alive = new Set<number>();
  for (const file of await format.listVersionKeys(store)) {
    if (removed.has(file.version) && !deletedKeys.has(file.key)) alive.add(file.version);
  }
  return [...alive].sort((a, b) => a - b);
}

/** Removed versions none of whose commit files (`commitFiles`, commitFilesOf) remain once the keys `deleted` names are gone. */
export function versionsRemovedBy(processed: Pick<ProcessedManifests, "plan">, commitFiles: readonly { file: PlannedFile }[], deleted: ReadonlySet<string>): number[] {
  const planned = new Map<number, string[]>();
  for (const { file } of commitFiles) planned.set(file.version!, [...(planned.get(file.version!) ?? []), file.key]);
  return processed.plan.removed.filter((version) => {
    const keys = planned.get(version);
    return keys !== undefined && keys.every((key) => deleted.has(key));
  });
}

/** Kept versions' references, for versions read in the first scan (before the listing). */
function keptReferencesReadBeforeListing(processed: ProcessedManifests): ReferenceSet {
  const set = new ReferenceSet();
  for (const [version, scanned] of processed.scan) {
    if (scanned.round !== 0 || !processed.decisions.get(version)?.keep) continue;
    // A format that planned its own removal says what it keeps (Delta: not every file an old version names).
    if (processed.keptByFormat) set.addAll(version, processed.keptByFormat.get(version) ?? []);
    else set.addAll(version, scanned.references, scanned.unresolved);
  }
  return set;
}
