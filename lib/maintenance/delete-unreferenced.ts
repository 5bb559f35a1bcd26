/**
 * Stage `delete_unreferenced`, its deleting half: carry out a settled DeletePlan.
 *   1. removal: the removed versions' commit files, oldest first (or, for a format that removes
 *      versions by a metadata commit, that commit);
 *   2. a look at the version files again: a removed version whose commit file is there again
 *      (Lance's manifest-path migration copies manifests to new names while we delete the old
 *      ones) is alive, so none of the removed versions' files may go now: they wait for the next
 *      run, which plans with that version live;
 *   3. the files no kept version references.
 * So every version whose commit file exists stays complete at every moment, and a run stopped
 * half way leaves only unreferenced files, which its intent proves were committed.
 */
import type { TableFormat, VersionFile } from "../formats/table-format.ts";
import type { DeleteFailure, ObjectInfo, ObjectStore } from "../store/object-store.ts";
import { DeletePacer, deleteInBatches } from "./delete-batches.ts";
import type { DeletePacing, DeleteRate } from "./delete-batches.ts";
import type { PlannedFile } from "./file-plan.ts";
import type { DeletePlan } from "./plan-deletes.ts";
import type { ProcessedManifests } from "./process-manifests.ts";
import type { CleanupProgress } from "./progress.ts";
import type { ReferenceCheck } from "./reference-check.ts";
import { checkKeptReferences } from "./reference-check.ts";
import { ReferenceSet } from "./references.ts";

export interface DeleteUnreferencedOptions {
  /** Checked between delete batches: true → stop, leaving the rest for the next run. */
  shouldStop?: () => boolean;
  /** Awaited before each delete batch (the pipeline keeps its lease fresh here). */
  beforeBatch?: () => Promise<void>;
  batchSize?: number;
  deleteConcurrency?: number;
  /**
   * Keys earlier runs of this budgeted chain deleted (run-progress.ts): the post-delete check
   * counts them as deleted by the run, so a kept version naming one is an error, not old damage.
   */
  deletedEarlierInChain?: ReadonlySet<string>;
  /** Delete rate limit and back-off on SlowDown (delete-batches.ts). */
  pacing?: DeletePacing;
  progress?: CleanupProgress;
  now: Date;
}

export interface DeletionOutcome {
  /** Files actually deleted. */
  deleted: PlannedFile[];
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
}

export async function deleteUnreferenced(store: ObjectStore, format: TableFormat, plan: DeletePlan, options: DeleteUnreferencedOptions): Promise<DeletionOutcome> {
  const { processed, files } = plan;
  const commitFiles = files.toDelete.filter((f) => f.version !== undefined).sort((a, b) => a.version! - b.version!);
  const otherFiles = files.toDelete.filter((f) => f.version === undefined);
  options.progress?.stage("deleting files", files.toDelete.length);
  // One pacer for both halves: a SlowDown on commit files slows the files that follow.
  const pacer = new DeletePacer(options.pacing);
  const batchOptions = {
    pacer,
    ...(options.batchSize !== undefined ? { batchSize: options.batchSize } : {}),
    ...(options.deleteConcurrency !== undefined ? { concurrency: options.deleteConcurrency } : {}),
    ...(options.shouldStop ? { shouldStop: options.shouldStop } : {}),
    ...(options.beforeBatch ? { beforeBatch: options.beforeBatch } : {}),
    onDeleted: (count: number) => options.progress?.advance(count),
  };

  if (files.toDelete.length > 0) await format.finishInterruptedCommit?.(store);
  const removalCommit = await commitRemoval(store, format, processed, options.now);
  const first = await deleteInBatches(store, commitFiles.map((f) => f.key), batchOptions);
  let heldBack: string | null = null;
  let reappeared: number[] = [];
  if (!first.stopped && otherFiles.length > 0) {
    if (first.failed.length > 0) {
      // A commit file that could not be deleted keeps its version alive, and every file it names.
      heldBack = `${first.failed.length} version file(s) could not be deleted`;
    } else if (processed.plan.removed.length > 0) {
      reappeared = await versionsAliveAgain(store, format, processed, new Set(first.deleted));
      if (reappeared.length > 0) heldBack = `version file(s) of removed version(s) ${reappeared.join(", ")} appeared again while this run deleted (a writer copying manifests to new names)`;
    }
  }
  const second =
    first.stopped || heldBack !== null
      ? { deleted: new Set<string>(), failed: [] as DeleteFailure[], stopped: first.stopped }
      : await deleteInBatches(store, otherFiles.map((f) => f.key), batchOptions);
  // One set of every key deleted, grown from the bigger half (a spread of both would copy a
  // million keys twice more on a big table).
  const deletedKeys = second.deleted;
  for (const key of first.deleted) deletedKeys.add(key);
  const deleted = files.toDelete.filter((f) => deletedKeys.has(f.key));
  const gone = new Set(reappeared);
  return {
    deleted,
    failed: [...first.failed, ...second.failed],
    stopped: first.stopped || second.stopped,
    filesHeldBack: heldBack,
    reappeared,
    removedVersions: removalCommit !== null ? [...processed.plan.removed] : versionsRemovedBy(plan, deleted).filter((v) => !gone.has(v)),
    removalCommit,
    referenceCheck: checkKeptReferences(
      keptReferencesReadBeforeListing(processed),
      withEarlierDeletes(plan.listing, options.deletedEarlierInChain),
      options.deletedEarlierInChain?.size ? withKeys(deletedKeys, options.deletedEarlierInChain) : deletedKeys,
      format.managedPrefixes,
    ),
    rate: pacer.report(),
  };
}

/** The listing as the chain saw it: what is listed now plus what earlier runs of the chain deleted. */
function* withEarlierDeletes(listing: Iterable<ObjectInfo>, deleted: ReadonlySet<string> | undefined): Iterable<ObjectInfo> {
  yield* listing;
  if (!deleted?.size) return;
  const gone = new Date(0);
  for (const key of deleted) yield { key, size: 0, etag: "", lastModified: gone };
}

function withKeys(into: Set<string>, more: ReadonlySet<string>): Set<string> {
  for (const key of more) into.add(key);
  return into;
}

/**
 * For formats that remove versions by writing metadata (Iceberg expiry): that commit, before any
 * delete; also when it only makes the other changes the format's rules name (expired refs).
 */
async function commitRemoval(store: ObjectStore, format: TableFormat, processed: ProcessedManifests, now: Date): Promise<string | null> {
  if (!removalCommitDue(format, processed) || !format.commitRemoval) return null;
  // The version file the plan read, not the latest now: a commit that landed since makes the
  // removal commit fail instead of applying the plan to a table it did not read.
  const base = processed.scan.get(processed.latestAtStart)?.file ?? (await format.latestVersionFile(store));
  if (!base) return null;
  return (await format.commitRemoval(store, { remove: processed.plan.removed, base: base as VersionFile, now })).key;
}

/** True when the format removes by a metadata commit and the plan has versions or other changes for it. */
export function removalCommitDue(format: TableFormat, processed: ProcessedManifests): boolean {
  return format.removal === "metadata-commit" && (processed.plan.removed.length > 0 || processed.plan.formatNotes.length > 0);
}

/** Removed versions that have a commit file again (under a name this run did not delete). */
async function versionsAliveAgain(store: ObjectStore, format: TableFormat, processed: ProcessedManifests, deletedKeys: ReadonlySet<string>): Promise<number[]> {
  const removed = new Set(processed.plan.removed);
  const alive = new Set<number>();
  for (const file of await format.listVersionFiles(store)) {
    if (removed.has(file.version) && !deletedKeys.has(file.key)) alive.add(file.version);
  }
  return [...alive].sort((a, b) => a - b);
}

/** Removed versions none of whose commit files remain once `deleted` are gone. */
export function versionsRemovedBy(plan: DeletePlan, deleted: readonly PlannedFile[]): number[] {
  const deletedKeys = new Set<string>();
  for (const file of deleted) if (file.version !== undefined) deletedKeys.add(file.key);
  const planned = new Map<number, string[]>();
  for (const file of plan.files.toDelete) {
    if (file.version === undefined) continue;
    planned.set(file.version, [...(planned.get(file.version) ?? []), file.key]);
  }
  return plan.processed.plan.removed.filter((version) => {
    const keys = planned.get(version);
    return keys !== undefined && keys.every((key) => deletedKeys.has(key));
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
