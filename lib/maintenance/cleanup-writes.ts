/**
 * The steps of a cleanup run that write or delete, each a function of the run and the values of
 * the steps before it, returning what it did (its own stats, warnings and errors among it). The
 * sequence (run-cleanup.ts) asks the run's stop guard before each of them.
 */
import { archiveAndHold, loadNewestCheckpointAfter } from "../checkpoint/archive.ts";
import type { Archived } from "../checkpoint/archive.ts";
import type { CheckpointFile, LoadedCheckpoint } from "../checkpoint/load.ts";
import type { StoredProtection } from "../checkpoint/codec.ts";
import { cleanupOldCheckpoints } from "../checkpoint/prune.ts";
import type { PruneCheckpointsResult } from "../checkpoint/prune.ts";
import { mainBranchTaggedVersions } from "../model/refs.ts";
import type { VersionRecord } from "../model/version-record.ts";
import { ConflictError, PreconditionFailedError } from "../store/errors.ts";
import type { ObjectInfo } from "../store/object-store.ts";
import type { CleanupRun } from "./cleanup-run.ts";
import type { RunStart } from "./cleanup-stages.ts";
import { deleteBatchWork } from "./cleanup-stages.ts";
import { deleteUnreferenced, deletedFiles, plannedDeletes } from "./delete-unreferenced.ts";
import type { DeletionOutcome } from "./delete-unreferenced.ts";
import type { PlannedFile } from "./file-plan.ts";
import { RemovalCommitLostError } from "./errors.ts";
import type { DeletePlan } from "./plan-deletes.ts";
import type { ManifestScan, ProcessedManifests } from "./process-manifests.ts";
import { removedRecords } from "./process-manifests.ts";
import { finishInterruptedCommit, writeRemovalCommit } from "./removal-commit.ts";
import type { IntentFile } from "./run-files.ts";
import { checkpointMissingPerReceipts, expiredReceipts, writeIntent } from "./run-files.ts";
import { clearProgress, deletedEarlier, saveProgress } from "./run-progress.ts";
import type { RemovalStats } from "./stats.ts";
import { newStats, recordFailures, recordVersions } from "./stats.ts";

/** A checkpoint this run wrote, and the lines its load of the one before gave (checkpoints skipped). */
export interface ArchiveStep {
  archived: Archived;
  warnings: string[];
  /**
   * The checkpoint folder as this archive left it: its load's listing with the file it wrote
   * (null when files were set aside or skipped: list again). The prune after the last archive
   * starts from it instead of listing the folder a third time in the run.
   */
  files: CheckpointFile[] | null;
}

/**
 * archive_versions: every record this run read plus those interrupted runs were removing.
 * Before the deletes (`gone` empty, `earlier` null) every version read is still live; after
 * them, the versions the steps removed are not, nor those whose data they took (the plan's
 * unreadable), and the checkpoint written before them is not read back while it is still the newest.
 */
export async function archive(
  run: CleanupRun,
  start: RunStart,
  processed: ProcessedManifests,
  after: { gone: readonly number[]; earlier: ArchiveStep | null } | null = null,
): Promise<ArchiveStep> {
  if (after) await run.lease?.renewIfDue();
  run.progress.stage("writing checkpoint");
  // The newest checkpoint as this run last had it: the one its start loaded, or the one its first
  // archive wrote; taken from memory while the file listed newest is still that one (same ETag),
  // not read and decoded again.
  const loaded = await loadNewestCheckpointAfter(run.store, after?.earlier ? after.earlier.archived.held : start.history.checkpoint);
  // A checkpoint deleted outright leaves no file to fall past: the last receipts name it (once a run: the first archive asks).
  const missing = await checkpointMissingPerReceipts(run.store, after?.earlier ? [] : start.runFiles.receipts, loaded.files);
  if (missing && !loaded.skipped.some((file) => file.key === missing.key)) loaded.skipped.push(missing);
  const seen = new Set(after?.earlier?.warnings ?? []);
  const warnings = [...new Set(loaded.skipped.map((skipped) => `checkpoint skipped: ${skipped.problem}`))].filter((line) => !seen.has(line));
  const gone = new Set(after?.gone ?? []);
  // After the deletes, a version whose data they took (its version file kept) is cleaned up too.
  const unreadable = after ? (processed.plan.unreadable ?? new Map<number, string>()) : new Map<number, string>();
  const records = new Map<number, VersionRecord>();
  for (const intent of start.intents) for (const record of intent.records) records.set(record.version, record);
  for (const [version, scanned] of processed.scan) records.set(version, scanned.record);
  const archived = await archiveAndHold(run.store, {
    previous: loaded.checkpoint,
    records: [...records.values()],
    liveVersions: new Set([...processed.scan.keys()].filter((version) => !gone.has(version) && !unreadable.has(version))),
    taggedVersions: mainBranchTaggedVersions(processed.refs),
    tableFormat: run.format.name,
    now: run.now(),
    protection: protectionState(processed),
    // Set aside, never written over with fewer rows (lib/checkpoint/damaged.ts).
    unreadable: loaded.skipped,
    ...(run.options.maxCheckpointEntries !== undefined ? { maxEntries: run.options.maxCheckpointEntries } : {}),
  });
  // The checkpoint this run wrote before its deletes, brought up to date after them: to the
  // user, one checkpoint written by this run, not a replaced one (a first checkpoint said "replaced").
  const files = filesAfter(loaded, archived);
  const before = after?.earlier?.archived.result;
  if (before?.status === "written" && archived.result.status === "replaced" && archived.result.key === before.key) {
    return { archived: { ...archived, result: { ...archived.result, status: "written" } }, warnings, files };
  }
  return { archived, warnings, files };
}

/** The checkpoint files after an archive: those its load listed, the one it wrote or replaced in place of its name's. */
function filesAfter(loaded: LoadedCheckpoint, archived: Archived): CheckpointFile[] | null {
  // Files set aside (and their originals removed) or skipped: the listing no longer says the folder.
  if (loaded.skipped.length > 0 || archived.result.setAside) return null;
  const held = archived.held;
  if (!held || (archived.result.status !== "written" && archived.result.status !== "replaced")) return loaded.files;
  const written: CheckpointFile = { key: held.key, version: held.version, size: held.size, etag: held.etag, lastModified: new Date(held.createdAtMillis) };
  return [...loaded.files.filter((file) => file.key !== held.key), written].sort((a, b) => a.version - b.version);
}

/** What the checkpoint keeps of history protection, so `versions` can say it (null: none in force). */
function protectionState(processed: ProcessedManifests): StoredProtection | null {
  const protection = processed.plan.protection;
  if (!protection || protection.result === "not-applicable") return null;
  return { boundary: protection.boundary, result: protection.result, reason: protection.reason, removed_earlier: protection.removed_earlier };
}

/** The intent: the records of the versions about to go and the files about to be deleted. Every key written, the intent's first. */
export function writeRunIntent(run: CleanupRun, plan: DeletePlan): Promise<string[]> {
  return writeIntent(
    run.store,
    run.key,
    run.runId,
    { records: removedRecords(plan.processed), files: intentFilesOf(plannedDeletes(plan, (file) => file.version === undefined)) },
    run.now(),
  );
}

/** Finishes a commit an earlier run was stopped in, before this run's first delete (nothing to finish without deletes). */
export async function finishInterrupted(run: CleanupRun, plan: DeletePlan): Promise<void> {
  if (plan.files.toDelete.length > 0) await finishInterruptedCommit(run.store, run.format);
}

/** The format's removal commit (null key: none due), the versions it removed, and what else it changed. */
export interface RemovalCommitStep {
  key: string | null;
  stats: RemovalStats;
  warnings: string[];
}

export async function commitRemoval(run: CleanupRun, plan: DeletePlan): Promise<RemovalCommitStep> {
  const { processed } = plan;
  const key = await writeRemovalCommit(run.store, run.format, processed, run.startedAt).catch((error: unknown) => {
    // Create-only on the base the plan read: refused, another writer's commit is the base now, and this plan is stale.
    if (error instanceof PreconditionFailedError || error instanceof ConflictError) {
      throw new RemovalCommitLostError(run.store.uri, `the removal commit lost to another writer's commit (${error.message}); nothing was deleted`, { cause: error });
    }
    throw error;
  });
  const stats = newStats();
  if (key !== null) recordVersions(stats, processed.plan.removed);
  // What the commit changed besides versions (Iceberg: the expired refs it dropped).
  return { key, stats, warnings: key === null ? [] : processed.plan.formatNotes.map((note) => `${key}: ${note}`) };
}

/** delete_unreferenced, and what its outcome says to the user. */
export interface DeletionStep {
  outcome: DeletionOutcome;
  warnings: string[];
  errors: string[];
}

export async function deleteFiles(run: CleanupRun, start: RunStart, plan: DeletePlan, commit: RemovalCommitStep): Promise<DeletionStep> {
  const { options, lease } = run;
  const saved = start.saved;
  const outcome = await deleteUnreferenced(run.store, run.format, plan, {
    now: run.startedAt,
    formatWrites: { removalCommit: commit.key },
    // The guard before each delete batch.
    shouldStop: () => run.guard.beforeWork(deleteBatchWork(run)),
    progress: run.progress,
    ...(lease ? { beforeBatch: () => lease.renewIfDue() } : {}),
    ...(options.deleteBatchSize !== undefined ? { batchSize: options.deleteBatchSize } : {}),
    ...(options.deleteConcurrency !== undefined ? { deleteConcurrency: options.deleteConcurrency } : {}),
    ...(saved ? { deletedEarlierInChain: () => deletedEarlier(run.store, saved) } : {}),
    pacing: {
      ...(options.signal ? { signal: options.signal } : {}),
      ...options.deletePacing,
      ...(options.maxDeleteRate !== undefined ? { maxRate: options.maxDeleteRate } : {}),
    },
  });
  const warnings: string[] = [];
  const errors: string[] = [];
  if (outcome.filesHeldBack) warnings.push(`${outcome.filesHeldBack}, so the files of removed versions were left for the next run, which finishes the job`);
  const check = outcome.referenceCheck;
  if (check && !check.ok) {
    errors.push(
      `post-delete check: ${filesWere(check.deletedByRun.length)} referenced by kept versions ${check.deletedByRun.length === 1 ? "was" : "were"} deleted: ` +
        check.deletedByRun
          .slice(0, 5)
          .map((m) => `${m.path} (${m.versions})`)
          .join(", "),
    );
  }
  if (check && check.missingBeforeRun.length > 0) {
    warnings.push(
      `${filesWere(check.missingBeforeRun.length)} referenced by kept versions ${check.missingBeforeRun.length === 1 ? "was" : "were"} already missing before this run: ` +
        check.missingBeforeRun
          .slice(0, 5)
          .map((m) => `${m.path} (${m.versions})`)
          .join(", "),
    );
  }
  return { outcome, warnings, errors };
}

function filesWere(n: number): string {
  return n === 1 ? "1 file" : `${n} files`;
}

/**
 * The intents this run settled: the checkpoint now holds their versions, and once every delete
 * is done their file lists are no longer needed as proof either. An intent goes first, its file
 * parts after it: no reader meets an intent without its parts. Parts a run wrote before dying
 * ahead of its intent go too: no intent names them, nothing reads them.
 */
export async function settleIntents(run: CleanupRun, start: RunStart, ownIntent: readonly string[], deletion: DeletionOutcome, checkpoint: ArchiveStep): Promise<string[]> {
  const { store } = run;
  let archived: string[] = [];
  const settled = deletion.failed.length === 0 && deletion.filesHeldBack === null && checkpoint.archived.result.status !== "empty";
  const intentKeys = [...start.intents.map((intent) => intent.key), ...ownIntent.slice(0, 1)];
  if (settled && intentKeys.length > 0) {
    const deleted = await store.deleteMany(intentKeys);
    const failed = new Set(deleted.failed.map((f) => f.key));
    archived = start.intents.map((intent) => intent.key).filter((k) => !failed.has(k));
    const parts = [...start.intents.filter((intent) => !failed.has(intent.key)).flatMap((intent) => intent.parts), ...(failed.has(ownIntent[0]!) ? [] : ownIntent.slice(1))];
    if (parts.length > 0) await store.deleteMany(parts);
  }
  if (start.runFiles.orphanIntentParts.length > 0) await store.deleteMany(start.runFiles.orphanIntentParts.map((part) => part.key));
  return archived;
}

/**
 * The run's own intent taken back when its plan is dropped before any delete (its removal commit
 * lost the race): the next plan is not this one, and an intent left would name versions and files
 * it never removed. The intent goes first, its parts after it, as settleIntents takes them.
 */
export async function withdrawIntent(run: CleanupRun, ownIntent: readonly string[]): Promise<void> {
  if (ownIntent.length === 0) return;
  const deleted = await run.store.deleteMany(ownIntent.slice(0, 1));
  if (deleted.failed.length === 0 && ownIntent.length > 1) await run.store.deleteMany(ownIntent.slice(1));
}

/** cleanup_old_checkpoints, with the deletes that failed in its stats. */
export interface PruneStep {
  pruned: PruneCheckpointsResult;
  stats: RemovalStats;
  warnings: string[];
}

export async function pruneCheckpoints(run: CleanupRun, checkpoint: ArchiveStep): Promise<PruneStep> {
  run.progress.stage("pruning checkpoints");
  const { result, held } = checkpoint.archived;
  const pruned = await cleanupOldCheckpoints(run.store, {
    ...(run.options.maxCheckpointFiles !== undefined ? { maxCheckpointFiles: run.options.maxCheckpointFiles } : {}),
    keep: result.key ? [result.key] : [],
    held,
    ...(checkpoint.files ? { files: checkpoint.files } : {}),
  });
  const stats = newStats();
  recordFailures(stats, pruned.failed);
  return { pruned, stats, warnings: [...(pruned.problems ?? [])] };
}

/** Receipts past their retention, deleted: how many went. */
export async function pruneReceipts(run: CleanupRun, start: RunStart): Promise<number> {
  const expired = expiredReceipts(start.runFiles.receipts, run.options.receiptRetention ?? {}, run.now());
  if (expired.length === 0) return 0;
  const pruned = await run.store.deleteMany(expired);
  return expired.length - pruned.failed.length;
}

/** The chain is done: its saved progress goes (a stale or orphaned one too). How many files went. */
export async function clearChain(run: CleanupRun, start: RunStart): Promise<number> {
  return start.runFiles.progress.length > 0 ? clearProgress(run.store) : 0;
}

/** What a stopped run leaves for the next: what it read, listed and deleted. */
export interface ProgressParts {
  scan: ManifestScan;
  plan: DeletePlan | null;
  deletion?: DeletionOutcome;
}

/** Saves what this run adds to its chain (run-progress.ts): the key saved. */
export function saveChain(run: CleanupRun, start: RunStart, parts: ProgressParts): Promise<string> {
  const { plan, deletion } = parts;
  const saved = start.saved;
  return saveProgress(run.store, saved, {
    runKey: run.key,
    chainId: start.chain.id,
    chainStartedAt: saved?.startedAt ?? run.startedAt,
    latestAtStart: start.latestAtStart,
    scan: parts.scan,
    // Once this run deleted, what is left of the listing replaces the saved one.
    listing: plan && deletion ? { remaining: remainingListing(plan, deletion) } : { added: plan?.listedNow ?? [] },
    cursor: plan?.cursor ?? null,
    deletedNow: plan && deletion ? keysOf(deletedFiles(plan, deletion)) : [],
    now: run.now(),
  });
}

function* keysOf(files: Iterable<PlannedFile>): Iterable<string> {
  for (const file of files) yield file.key;
}

function* intentFilesOf(files: Iterable<{ file: PlannedFile }>): Iterable<IntentFile> {
  for (const { file } of files) yield { key: file.key, lastModifiedMillis: Date.parse(file.lastModified) };
}

/** The plan's listing minus what the deletion deleted: walked together when both are in listing order. */
function* remainingListing(plan: DeletePlan, deletion: DeletionOutcome): Iterable<ObjectInfo> {
  if (plan.files.order === "format") {
    const gone = new Set<string>();
    for (const file of deletedFiles(plan, deletion)) gone.add(file.key);
    for (const object of plan.listing) if (!gone.has(object.key)) yield object;
    return;
  }
  const deleted = deletedFiles(plan, deletion)[Symbol.iterator]();
  let next = deleted.next();
  for (const object of plan.listing) {
    if (!next.done && next.value.key === object.key) {
      next = deleted.next();
      continue;
    }
    yield object;
  }
  if (!next.done) throw new Error(`internal: deleted ${next.value.key} is not in the listing's order`);
}
