/**
 * Stage `delete_unreferenced`: list the format's folders in full, plan every candidate with its
 * reason, re-read tags, branches and the latest version right before deleting (and plan again
 * if they moved), then delete: the removed versions' version files first (oldest first), then
 * the files. So every version whose version file exists stays complete at every moment, and a
 * run stopped half way leaves only unreferenced files, which its intent (written by the
 * pipeline in `beforeDelete`) proves were committed, so the next run deletes them at once.
 */
import type { Refs, TableFormat } from "../formats/table-format.ts";
import { refsFingerprint } from "../model/refs.ts";
import type { DeleteFailure, ObjectInfo, ObjectStore } from "../store/object-store.ts";
import { TableChangedError } from "./errors.ts";
import type { FilePlan, PlannedFile } from "./file-plan.ts";
import { planFiles } from "./file-plan.ts";
import { listManagedFiles } from "./listing.ts";
import type { ProcessedManifests } from "./process-manifests.ts";
import { assertKeptReferencesResolvable, processManifests } from "./process-manifests.ts";
import type { CleanupProgress } from "./progress.ts";
import type { ReferenceCheck } from "./reference-check.ts";
import { checkKeptReferences } from "./reference-check.ts";
import { ReferenceSet } from "./references.ts";
import { deleteInBatches } from "./delete-batches.ts";

export const DEFAULT_MAX_REPLANS = 5;

export interface DeleteUnreferencedOptions {
  now: Date;
  /** Plan only: no re-check, no intent, no delete. */
  dryRun?: boolean;
  /** Runs right before the first delete (the pipeline renews its lease and writes its intent here). */
  beforeDelete?: (plan: FilePlan, processed: ProcessedManifests) => Promise<void>;
  /** Checked between delete batches: true → stop, leaving the rest for the next run. */
  shouldStop?: () => boolean;
  /** Awaited before each delete batch (the pipeline keeps its lease fresh here). */
  beforeBatch?: () => Promise<void>;
  /** Re-plans allowed when the table moves under us (default 5); after that the last plan stands. */
  maxReplans?: number;
  batchSize?: number;
  deleteConcurrency?: number;
  manifestConcurrency?: number;
  /** Keys proven committed by an interrupted run's intent, with the reason to give. */
  proven?: ReadonlyMap<string, string>;
  progress?: CleanupProgress;
}

export interface DeletionOutcome {
  /** The manifests decision the deletes followed (after any re-plan). */
  processed: ProcessedManifests;
  plan: FilePlan;
  listing: ObjectInfo[];
  replans: string[];
  /** Files actually deleted (empty in a dry run). */
  deleted: PlannedFile[];
  failed: DeleteFailure[];
  stopped: boolean;
  /** True when files were left for the next run because some version files could not be deleted. */
  filesHeldBack: boolean;
  /** Versions whose version files are all gone now (in a dry run: those that would be). */
  removedVersions: number[];
  referenceCheck: ReferenceCheck | null;
}

export async function deleteUnreferenced(
  store: ObjectStore,
  format: TableFormat,
  initial: ProcessedManifests,
  options: DeleteUnreferencedOptions,
): Promise<DeletionOutcome> {
  const listing = await listManagedFiles(store, format, options.progress);
  const plan = (processed: ProcessedManifests): FilePlan =>
    planFiles({
      listing,
      format,
      decisions: processed.decisions,
      kept: processed.kept,
      removed: processed.removed,
      safetyWindowMs: processed.policy.safetyWindowMs,
      deleteUnverified: processed.policy.deleteUnverified,
      nowMillis: options.now.getTime(),
      ...(options.proven ? { proven: options.proven } : {}),
    });
  let processed = initial;
  let filePlan = plan(processed);
  const base = { listing, failed: [] as DeleteFailure[], stopped: false, filesHeldBack: false };
  if (options.dryRun) {
    return { ...base, processed, plan: filePlan, replans: [], deleted: [], removedVersions: versionsGone(filePlan, filePlan.toDelete, processed), referenceCheck: null };
  }

  const replans: string[] = [];
  const maxReplans = options.maxReplans ?? DEFAULT_MAX_REPLANS;
  for (let round = 0; round < maxReplans; round++) {
    const change = await whatChanged(store, format, processed);
    if (change === null) break;
    replans.push(change.reason);
    processed = await processManifests(store, format, {
      policy: processed.policy,
      refs: change.refs,
      latestAtStart: processed.latestAtStart,
      now: options.now,
      previous: processed.scan,
      ...(options.manifestConcurrency !== undefined ? { concurrency: options.manifestConcurrency } : {}),
    });
    filePlan = plan(processed);
  }

  assertKeptReferencesResolvable(processed, store.uri);
  await options.beforeDelete?.(filePlan, processed);
  const manifests = filePlan.toDelete.filter((f) => f.version !== undefined).sort((a, b) => a.version! - b.version!);
  const files = filePlan.toDelete.filter((f) => f.version === undefined);
  options.progress?.stage("deleting files", filePlan.toDelete.length);
  const batchOptions = {
    ...(options.batchSize !== undefined ? { batchSize: options.batchSize } : {}),
    ...(options.deleteConcurrency !== undefined ? { concurrency: options.deleteConcurrency } : {}),
    ...(options.shouldStop ? { shouldStop: options.shouldStop } : {}),
    ...(options.beforeBatch ? { beforeBatch: options.beforeBatch } : {}),
    onDeleted: (count: number) => options.progress?.advance(count),
  };
  const first = await deleteInBatches(store, manifests.map((f) => f.key), batchOptions);
  // A version file that could not be deleted keeps its version alive, and with it every file it
  // names: deleting files now could break it. Its files wait for the next run.
  const heldBack = first.failed.length > 0 && files.length > 0;
  const second =
    first.stopped || heldBack
      ? { deleted: new Set<string>(), failed: [], stopped: first.stopped }
      : await deleteInBatches(store, files.map((f) => f.key), batchOptions);
  const deletedKeys = new Set([...first.deleted, ...second.deleted]);
  const deleted = filePlan.toDelete.filter((f) => deletedKeys.has(f.key));
  const checkSet = keptReferencesReadBeforeListing(processed);
  return {
    ...base,
    processed,
    plan: filePlan,
    replans,
    deleted,
    failed: [...first.failed, ...second.failed],
    stopped: first.stopped || second.stopped,
    filesHeldBack: heldBack,
    removedVersions: versionsGone(filePlan, deleted, processed),
    referenceCheck: checkKeptReferences(checkSet, listing, deletedKeys, format.managedPrefixes),
  };
}

interface Change {
  reason: string;
  refs: Refs;
}

/** Reads tags, branches and the latest version again; null when nothing moved. */
async function whatChanged(store: ObjectStore, format: TableFormat, processed: ProcessedManifests): Promise<Change | null> {
  const [refs, latest] = await Promise.all([format.readRefs(store), format.latestVersionFile(store)]);
  let newestRead = -1;
  for (const version of processed.scan.keys()) newestRead = Math.max(newestRead, version);
  if (latest === null || latest.version < processed.latestAtStart) {
    throw new TableChangedError(
      store.uri,
      `the latest version went from ${processed.latestAtStart} to ${latest?.version ?? "none"} while cleanup planned; nothing was deleted`,
    );
  }
  const reasons: string[] = [];
  if (refsFingerprint(refs) !== refsFingerprint(processed.refs)) reasons.push("tags or branches changed");
  if (latest.version > newestRead) reasons.push(`version ${latest.version} was committed`);
  return reasons.length === 0 ? null : { reason: `${reasons.join(" and ")} while planning: planned again`, refs };
}



/** Removed versions none of whose version files remain. */
function versionsGone(plan: FilePlan, deleted: readonly PlannedFile[], processed: ProcessedManifests): number[] {
  const deletedKeys = new Set(deleted.map((f) => f.key));
  const planned = new Map<number, string[]>();
  for (const file of plan.toDelete) {
    if (file.version === undefined) continue;
    planned.set(file.version, [...(planned.get(file.version) ?? []), file.key]);
  }
  return processed.plan.removed.filter((version) => {
    const keys = planned.get(version);
    return keys !== undefined && keys.every((key) => deletedKeys.has(key));
  });
}

/** Kept versions' references, for versions read in the first scan (before the listing). */
function keptReferencesReadBeforeListing(processed: ProcessedManifests): ReferenceSet {
  const set = new ReferenceSet();
  for (const [version, scanned] of processed.scan) {
    if (scanned.round === 0 && processed.decisions.get(version)?.keep) set.addAll(version, scanned.references, scanned.unresolved);
  }
  return set;
}
