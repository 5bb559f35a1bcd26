/**
 * The cleanup pipeline, top to bottom:
 *
 *   take the lease → read latest, refs and interrupted runs' intents
 *     → process_manifests → plan the deletes → plan again while the table moves
 *     → archive history first → write the intent → delete_unreferenced
 *     → archive_versions → cleanup_old_checkpoints → prune receipts
 *   and always: write the receipt, release the lease.
 *
 * Each stage is its own function (and file) that returns what the next one takes; this one
 * only sequences them, carries the deadline, and turns their results into one report at the
 * end. A run stops between steps, never inside a write, and the next run finishes the job:
 * deletes are idempotent, the history of the versions about to be removed is in a checkpoint
 * before their first file goes (so `versions` shows no gap after any stop), the intent proves
 * the files being deleted were committed, and an expired lease is taken over.
 */
import { randomUUID } from "node:crypto";
import { archiveVersions, loadNewestCheckpointAfter } from "../checkpoint/archive.ts";
import type { ArchiveResult } from "../checkpoint/archive.ts";
import type { StoredProtection } from "../checkpoint/codec.ts";
import { loadNewestCheckpoint } from "../checkpoint/load.ts";
import { cleanupOldCheckpoints } from "../checkpoint/prune.ts";
import type { PruneCheckpointsResult } from "../checkpoint/prune.ts";
import { noVersionFilesError } from "../formats/errors.ts";
import { findFormat, pinFormat } from "../formats/index.ts";
import { assertTableRoot } from "../formats/table-root.ts";
import type { TableFormat } from "../formats/table-format.ts";
import { mainBranchTaggedVersions } from "../model/refs.ts";
import type { VersionRecord } from "../model/version-record.ts";
import type { ObjectStore, RequestCounts } from "../store/object-store.ts";
import type { DeletePacing } from "./delete-batches.ts";
import { DEFAULT_DELETE_BATCH_SIZE, MAX_DELETE_BATCH_SIZE } from "./delete-batches.ts";
import { commitFilesOf, deleteUnreferenced, deletedFiles, plannedDeletes, removalCommitDue, versionsRemovedBy } from "./delete-unreferenced.ts";
import type { DeletionOutcome } from "./delete-unreferenced.ts";
import { TableChangedError } from "./errors.ts";
import { Lease, describeTakeover } from "./lease.ts";
import { readStoredConfig } from "./stored-config.ts";
import { readPins } from "../pins/pins.ts";
import { proveKeptState } from "./prove-kept.ts";
import type { KeptStateProof } from "./prove-kept.ts";
import { storageOfPlan } from "./storage-parts.ts";
import type { DeletePlan } from "./plan-deletes.ts";
import { planDeletes } from "./plan-deletes.ts";
import type { CleanupSettings } from "./policy.ts";
import { describePolicy } from "./policy.ts";
import type { ProcessedManifests } from "./process-manifests.ts";
import type { ManifestScan } from "./process-manifests.ts";
import { assertKeptReferencesResolvable, processManifests, removedRecords, scanCoverage } from "./process-manifests.ts";
import { clearProgress, deletedEarlier, loadProgress, saveProgress } from "./run-progress.ts";
import { SpillArea } from "./spill.ts";
import type { PlannedFile } from "./file-plan.ts";
import type { ObjectInfo } from "../store/object-store.ts";
import type { CleanupProgress } from "./progress.ts";
import { silentProgress } from "./progress.ts";
import { replanUntilSettled } from "./replan.ts";
import type { CleanupReport, CleanupStatus, RemovalCommit } from "./cleanup-report.ts";
import { diffCounts, filesRemovedCount, receiptOf } from "./cleanup-report.ts";
import type { IntentFile, IntentRead, ReceiptRetention } from "./run-files.ts";
import { checkpointMissingPerReceipts, expiredReceipts, intentFiles, listRunFiles, readIntents, runKey, writeIntent, writeReceipt } from "./run-files.ts";
import { NotFoundError } from "../store/errors.ts";
import type { RemovalStats } from "./stats.ts";
import { NO_REMOVAL, mergeStats, removalStats } from "./stats.ts";

export interface RunCleanupOptions {
  /** The caller's explicit settings (CLI flags): above every other source (lib/maintenance/policy.ts). */
  settings?: CleanupSettings;
  /** Settings from LAKEWARDEN_* environment variables (a shell's, a Lambda's): below `settings`, above the table's config. */
  environment?: CleanupSettings;
  /** Default: the table's pinned or detected format. */
  format?: TableFormat;
  /** Plan and report only: no lease, no delete, no checkpoint, no receipt. */
  dryRun?: boolean;
  /** Stop cleanly when aborted (between steps; the run is then safe to repeat). */
  signal?: AbortSignal;
  /** Stop cleanly once this time has passed, e.g. a Lambda's end minus a margin. */
  deadline?: Date;
  /**
   * The run's budget (`cleanup --max-duration`): stop cleanly this long after the start (the
   * earlier of this and `deadline` wins). Every stage stops at it, the manifest scan and the
   * listing included, and saves its progress under `_lakewarden/runs/progress/`; the next run
   * resumes from there after re-checking what may have changed.
   */
  maxDurationMs?: number;
  /**
   * New work a run does before its budget (`maxDurationMs`) may stop it, in objects: a version
   * file read, an object listed, a key in a delete batch each count one. A resumed run first
   * re-checks what may have changed (lists the version files, re-plans, writes the checkpoint
   * and the intent again); a budget shorter than that would otherwise stop every run of a chain
   * before it did anything new, and the chain would never end. Default 1: some progress, and
   * a delete batch is all or nothing, so a run that reaches the deletes sends one whole batch.
   * `deadline` and `signal` (a Lambda's end) stop a run regardless.
   */
  minWorkPerRun?: number;
  lease?: { durationMs?: number; owner?: string };
  maxCheckpointFiles?: number;
  maxCheckpointEntries?: number;
  receiptRetention?: ReceiptRetention;
  /** Keys per delete request (default 1000, S3's maximum). */
  deleteBatchSize?: number;
  deleteConcurrency?: number;
  /** Keys deleted per second at most (default: no limit until S3 answers SlowDown, which always slows the deletes). */
  maxDeleteRate?: number;
  /** Back-off settings and injected clock/sleep for the delete pacer (tests). */
  deletePacing?: DeletePacing;
  manifestConcurrency?: number;
  maxReplans?: number;
  progress?: CleanupProgress;
  /** The clock (tests move it; everything time-based reads it). */
  now?: () => Date;
}

/** What the stages returned, as far as the run got. The report is made from this alone. */
interface RunResult {
  status: CleanupStatus;
  stopReason: string | null;
  latestAtStart: number | null;
  processed: ProcessedManifests | null;
  plan: DeletePlan | null;
  replans: string[];
  /** The proof that the kept versions read whole from what remains (null: the run did not get there). */
  proof: KeptStateProof | null;
  deletion: DeletionOutcome | null;
  removed: RemovalStats;
  checkpoint: ArchiveResult | null;
  pruned: PruneCheckpointsResult | null;
  intentsArchived: string[];
  receiptsPruned: number;
  /** The chain of budgeted runs this run belongs to, and what it saved or cleared. */
  chain: { id: string; run: number; resumed: boolean; progressSaved: string | null; progressCleared: number };
  warnings: string[];
  errors: string[];
}

interface RunContext {
  store: ObjectStore;
  format: TableFormat;
  options: RunCleanupOptions;
  runId: string;
  key: string;
  startedAt: Date;
  now: () => Date;
  progress: CleanupProgress;
  lease: Lease | null;
  /** Where the run's listing and plan keep their full pages (disposed when the run ends). */
  spill: SpillArea;
  deadline: Date | null;
  /** Between stages: true → stop now. */
  shouldStop: () => boolean;
  /** Before a piece of a stage's work on this many objects: true → stop; false → it counts as done. */
  beforeWork: (objects: number) => boolean;
}

export const DEFAULT_MIN_WORK_PER_RUN = 1;

export async function runCleanup(store: ObjectStore, options: RunCleanupOptions = {}): Promise<CleanupReport> {
  const now = options.now ?? (() => new Date());
  const startedAt = now();
  const runId = randomUUID();
  const requestsBefore = store.stats.snapshot();
  const resolved = options.format ? { format: options.format, source: "named" as const } : await findFormat(store);
  const format = resolved.format;
  // Cleaning a branch's folder as a table would be blind to the tags and child branches that
  // pin its versions (recorded at the root): refuse before the lease writes anything there.
  await assertTableRoot(store, format, "clean the table from its root, which keeps what every branch needs");
  // Opened before the lease, so a temp folder it cannot write stops the run with nothing held;
  // disposed if the lease is not taken (another run holds it), so no folder is left behind.
  const spill = SpillArea.open();
  let lease: Lease | null;
  try {
    lease = options.dryRun
      ? null
      : await Lease.acquire(store, { runId, now, ...(options.lease?.durationMs !== undefined ? { durationMs: options.lease.durationMs } : {}), ...(options.lease?.owner ? { owner: options.lease.owner } : {}) });
  } catch (error) {
    spill.dispose();
    throw error;
  }
  const context: RunContext = {
    store,
    format,
    options,
    runId,
    key: runKey(startedAt, runId),
    startedAt,
    now,
    progress: options.progress ?? silentProgress,
    lease,
    spill,
    deadline: null,
    shouldStop: () => false,
    beforeWork: () => false,
  };
  const budgetEnd = options.maxDurationMs !== undefined ? new Date(startedAt.getTime() + options.maxDurationMs) : undefined;
  const deadline = [options.deadline, budgetEnd].filter((d): d is Date => d !== undefined).sort((a, b) => a.getTime() - b.getTime())[0] ?? null;
  context.deadline = deadline;
  // The budget stops a run only once it did its minimum of new work; the hard deadline and the
  // abort signal stop it at once.
  const minWork = options.minWorkPerRun ?? DEFAULT_MIN_WORK_PER_RUN;
  let work = 0;
  context.shouldStop = () => {
    if (options.signal?.aborted) return true;
    if (deadline === null) return false;
    // One clock read a check, as before: a test clock that moves as it is read moves as it did.
    const at = now().getTime();
    if (options.deadline !== undefined && at >= options.deadline.getTime()) return true;
    return budgetEnd !== undefined && at >= budgetEnd.getTime() && work >= minWork;
  };
  context.beforeWork = (objects) => {
    if (context.shouldStop()) return true;
    work += objects;
    return false;
  };
  const result = emptyResult();
  if (lease?.tookOverFrom && lease.tookOverFrom.released_at === null) {
    // Taking over a released lease is the normal case; only an expired one means a run died holding it.
    result.warnings.push(describeTakeover(lease.tookOverFrom, lease.tookOverBecause));
  }
  let report: CleanupReport | null = null;
  try {
    // Detected once, remembered with our own files (never in a dry run, never in a branch's folder).
    if (lease && resolved.source === "detected") await pinFormat(store, format);
    await cleanTable(context, result);
    return (report = reportOf(context, result, requestsBefore));
  } catch (error) {
    result.status = "failed";
    result.errors.push(error instanceof Error ? error.message : String(error));
    report = reportOf(context, result, requestsBefore);
    throw error;
  } finally {
    context.progress.finish();
    if (lease && report) {
      try {
        report.receipt = await writeReceipt(store, context.key, receiptOf(report));
      } catch (error) {
        report.warnings.push(`receipt not written: ${(error as Error).message}`);
      }
      if (!(await lease.release())) report.warnings.push("lease not released: it expires by itself");
      report.requests = diffCounts(store.stats.snapshot(), requestsBefore);
    }
    context.spill.dispose();
  }
}

/** The stages in order; each records its result in `result`, which is what a stop leaves. */
async function cleanTable(run: RunContext, result: RunResult): Promise<void> {
  const { store, format, options, progress } = run;
  const stop = (where: string): void => {
    result.status = "stopped";
    result.stopReason = `stopped ${where} (deadline or abort signal); run again to finish`;
    result.warnings.push(result.stopReason);
  };
  /** Saves what this run adds to the chain (never in a dry run), then stops. */
  const saveAndStop = async (where: string, parts: { scan: ManifestScan | null; plan: DeletePlan | null; deletion?: DeletionOutcome }): Promise<void> => {
    if (!options.dryRun) {
      const { plan, deletion } = parts;
      result.chain.progressSaved = await saveProgress(store, saved, {
        runKey: run.key,
        chainId: result.chain.id,
        chainStartedAt: saved?.startedAt ?? run.startedAt,
        latestAtStart,
        scan: parts.scan,
        // Once this run deleted, what is left of the listing replaces the saved one.
        listing: plan && deletion ? { remaining: remainingListing(plan, deletion) } : { added: plan?.listedNow ?? [] },
        cursor: plan?.cursor ?? null,
        deletedNow: plan && deletion ? keysOf(deletedFiles(plan, deletion)) : [],
        now: run.now(),
      });
    }
    stop(`${where}; progress saved`);
  };

  // The latest version as of now: it and everything committed from here on are kept.
  const [latest, refs, runFiles, storedConfig, history, pins] = await Promise.all([
    format.latestVersionFile(store),
    format.readRefs(store),
    listRunFiles(store),
    readStoredConfig(store),
    loadNewestCheckpoint(store),
    readPins(store, run.startedAt),
  ]);
  result.warnings.push(...pins.problems);
  if (!latest) {
    // A listing taken while a writer renames version files (LanceDB's manifest-path migration)
    // can miss every one of them; a second look tells that race from a folder with no table.
    if (await format.latestVersionFile(store)) {
      throw new TableChangedError(store.uri, "version files moved while cleanup listed them (a rename or migration in progress); nothing was deleted, run again");
    }
    throw noVersionFilesError(store.uri, format);
  }
  // A budget-stopped run's progress: what it read, listed and deleted. Only a shortcut: every
  // decision below is made again on fresh refs, a fresh version listing and a fresh re-plan.
  const loaded = options.dryRun ? { saved: null, problem: null } : await loadProgress(store, runFiles.progress, run.now(), run.spill);
  if (loaded.problem) result.warnings.push(loaded.problem);
  let saved = loaded.saved;
  if (saved && latest.version < saved.latestAtStart) {
    result.warnings.push(`the latest version went from ${saved.latestAtStart} to ${latest.version} since the saved progress: starting over`);
    saved = null;
  }
  // The chain keeps everything at or above the latest version its first run read.
  const latestAtStart = saved ? saved.latestAtStart : latest.version;
  result.latestAtStart = latestAtStart;
  result.chain = { id: saved?.chainId ?? run.runId, run: (saved?.runs ?? 0) + 1, resumed: saved !== null, progressSaved: null, progressCleared: 0 };
  const intents = await readIntents(store, runFiles.intents);
  result.warnings.push(...intents.problems);
  if (run.shouldStop()) return stop("before reading manifests");

  const processed = await processManifests(store, format, {
    settings: options.settings ?? {},
    ...(options.environment ? { environment: options.environment } : {}),
    storedConfig,
    removedEarlier: [
      ...intents.read.flatMap((intent) => intent.records.map((record) => record.version)),
      ...(history.checkpoint?.protection?.removed_earlier ?? []),
    ],
    refs,
    pins: pins.active,
    latestAtStart,
    now: run.startedAt,
    progress,
    ...(saved ? { previous: saved.scan, resumed: true } : {}),
    shouldStop: () => run.beforeWork(1),
    ...(options.manifestConcurrency !== undefined ? { concurrency: options.manifestConcurrency } : {}),
  });
  if (processed.scanComplete === false) {
    const coverage = scanCoverage(processed.scan);
    return saveAndStop(`while reading version files (${coverage.held} of ${coverage.listed} read)`, { scan: processed.scan, plan: null });
  }
  result.processed = processed;
  result.warnings.push(...(processed.policy.warnings ?? []));
  assertKeptReferencesResolvable(processed, store.uri);
  if (run.shouldStop()) return saveAndStop("after reading manifests, before listing", { scan: processed.scan, plan: null });

  const proven = await provenByIntents(store, intents.read, { ...processed.policy, now: run.startedAt });
  const planOptions = { now: run.startedAt, proven, progress, spill: run.spill };
  const listed = await planDeletes(store, format, processed, {
    ...planOptions,
    ...(saved ? { resume: { listed: saved.listed, cursor: saved.cursor } } : {}),
    shouldStop: () => run.beforeWork(1),
  });
  if (listed.cursor && !listed.cursor.done) {
    return saveAndStop(`while listing files (${listed.listing.length} listed so far)`, { scan: processed.scan, plan: listed });
  }
  result.plan = listed;
  result.processed = listed.processed;
  if (options.dryRun) {
    // The same proof the run makes before its first delete: a dry run refuses what the run would.
    progress.stage("proving kept versions");
    result.proof = await proveKeptState(store, format, listed);
    result.status = "dry-run";
    // A format that removes versions by a metadata commit removes every planned version at once.
    const commitFiles = commitFilesOf(result.plan);
    const versions = format.removal === "metadata-commit" ? processed.plan.removed : versionsRemovedBy(processed, commitFiles, new Set(commitFiles.map(({ file }) => file.key)));
    result.removed = removalStats(result.plan.files.toDelete, versions);
    return;
  }

  const settled = await replanUntilSettled(store, format, result.plan, {
    ...planOptions,
    ...(options.maxReplans !== undefined ? { maxReplans: options.maxReplans } : {}),
    ...(options.manifestConcurrency !== undefined ? { manifestConcurrency: options.manifestConcurrency } : {}),
  });
  const plan = settled.plan;
  result.plan = plan;
  result.processed = plan.processed;
  result.replans = settled.replans;
  assertKeptReferencesResolvable(plan.processed, store.uri);
  // Never make a table worse: every version the plan keeps reads whole from what will remain,
  // proven before anything is written or deleted (a failure throws: nothing is touched).
  progress.stage("proving kept versions");
  result.proof = await proveKeptState(store, format, plan);
  await run.lease?.renewIfDue();

  // History first: once the checkpoint holds the versions about to be removed, no stop from
  // here on leaves `versions` or `version-at` with a gap. A stop due before the checkpoint or the
  // intent is a stop before any write: nothing below (a format's removal commit included) may run
  // without both.
  const planned = { scan: plan.processed.scan, plan: { ...plan, cursor: listed.cursor ?? { prefixIndex: 0, after: null, done: true } } };
  const removing = plan.processed.plan.removed.length > 0;
  let ownIntent: string[] = [];
  if (removing) {
    if (run.shouldStop()) return saveAndStop("before writing the checkpoint", planned);
    progress.stage("writing checkpoint");
    result.checkpoint = await archive(run, plan.processed, intents.read, null, result.warnings, null, runFiles.receipts);
    if (run.shouldStop()) return saveAndStop("after writing the checkpoint, before deleting", planned);
    ownIntent = await writeIntent(store, run.key, run.runId, { records: removedRecords(plan.processed), files: intentFilesOf(plannedDeletes(plan, (file) => file.version === undefined)) }, run.now());
  }
  if (run.shouldStop()) return saveAndStop("before deleting", planned);

  const deletion = await deleteUnreferenced(store, format, plan, {
    now: run.startedAt,
    shouldStop: () => run.beforeWork(Math.min(options.deleteBatchSize ?? DEFAULT_DELETE_BATCH_SIZE, MAX_DELETE_BATCH_SIZE)),
    progress,
    ...(run.lease ? { beforeBatch: () => run.lease!.renewIfDue() } : {}),
    ...(options.deleteBatchSize !== undefined ? { batchSize: options.deleteBatchSize } : {}),
    ...(options.deleteConcurrency !== undefined ? { deleteConcurrency: options.deleteConcurrency } : {}),
    ...(saved ? { deletedEarlierInChain: () => deletedEarlier(store, saved!) } : {}),
    pacing: {
      ...(options.signal ? { signal: options.signal } : {}),
      ...options.deletePacing,
      ...(options.maxDeleteRate !== undefined ? { maxRate: options.maxDeleteRate } : {}),
    },
  });
  result.deletion = deletion;
  // What the format's removal commit changed besides versions (Iceberg: the expired refs it dropped).
  if (deletion.removalCommit !== null) result.warnings.push(...plan.processed.plan.formatNotes.map((note) => `${deletion.removalCommit}: ${note}`));
  result.removed = removalStats(deletedFiles(plan, deletion), deletion.removedVersions, deletion.failed);
  if (deletion.filesHeldBack) result.warnings.push(`${deletion.filesHeldBack}, so the files of removed versions were left for the next run, which finishes the job`);
  describeReferenceCheck(deletion, result);
  const listedAndDeleted = { ...planned, deletion };
  if (deletion.stopped) return saveAndStop(`after deleting ${deletion.deletedCount} of ${plan.files.toDelete.length} files`, listedAndDeleted);
  if (run.shouldStop()) return saveAndStop("after deleting, before writing the checkpoint", listedAndDeleted);

  await run.lease?.renewIfDue();
  progress.stage("writing checkpoint");
  const before = result.checkpoint;
  result.checkpoint = await archive(run, plan.processed, intents.read, deletion, result.warnings, before, before ? [] : runFiles.receipts);
  // The checkpoint this run wrote before its deletes, brought up to date after them: to the
  // user, one checkpoint written by this run, not a replaced one (a first checkpoint said "replaced").
  if (before?.status === "written" && result.checkpoint.status === "replaced" && result.checkpoint.key === before.key) result.checkpoint.status = "written";
  // The checkpoint now holds the intents' versions; once every delete is done, their file
  // lists are no longer needed as proof either.
  const settledIntents = deletion.failed.length === 0 && deletion.filesHeldBack === null && result.checkpoint.status !== "empty";
  // An intent goes first, its file parts after it: no reader meets an intent without its parts.
  const intentKeys = [...intents.read.map((intent) => intent.key), ...ownIntent.slice(0, 1)];
  if (settledIntents && intentKeys.length > 0) {
    const deleted = await store.deleteMany(intentKeys);
    const failed = new Set(deleted.failed.map((f) => f.key));
    result.intentsArchived = intents.read.map((intent) => intent.key).filter((k) => !failed.has(k));
    const parts = [...intents.read.filter((intent) => !failed.has(intent.key)).flatMap((intent) => intent.parts), ...(failed.has(ownIntent[0]!) ? [] : ownIntent.slice(1))];
    if (parts.length > 0) await store.deleteMany(parts);
  }
  // Parts a run wrote before dying ahead of its intent: no intent names them, nothing reads them.
  if (runFiles.orphanIntentParts.length > 0) await store.deleteMany(runFiles.orphanIntentParts.map((part) => part.key));

  progress.stage("pruning checkpoints");
  result.pruned = await cleanupOldCheckpoints(store, {
    ...(options.maxCheckpointFiles !== undefined ? { maxCheckpointFiles: options.maxCheckpointFiles } : {}),
    keep: result.checkpoint.key ? [result.checkpoint.key] : [],
  });
  result.removed = mergeStats(result.removed, { ...NO_REMOVAL, deleteFailures: result.pruned.failed });
  result.warnings.push(...(result.pruned.problems ?? []));

  const expired = expiredReceipts(runFiles.receipts, options.receiptRetention ?? {}, run.now());
  if (expired.length > 0) {
    const pruned = await store.deleteMany(expired);
    result.receiptsPruned = expired.length - pruned.failed.length;
  }
  // The chain is done: its saved progress goes (a stale or orphaned one too).
  if (runFiles.progress.length > 0) result.chain.progressCleared = await clearProgress(store);
  result.status = "completed";
}

/**
 * archive_versions: every record this run read plus those interrupted runs were removing.
 * Before the deletes (`deletion` null) every version read is still live; after them, the
 * removed ones are not.
 */
async function archive(run: RunContext, processed: ProcessedManifests, intents: readonly IntentRead[], deletion: DeletionOutcome | null, warnings: string[], earlier: ArchiveResult | null, receipts: readonly ObjectInfo[]): Promise<ArchiveResult> {
  // After the deletes: the checkpoint written before them is not read back while it is still the newest.
  const loaded = await loadNewestCheckpointAfter(run.store, earlier);
  // A checkpoint deleted outright leaves no file to fall past: the last receipts name it.
  const missing = await checkpointMissingPerReceipts(run.store, receipts, loaded.files);
  if (missing && !loaded.skipped.some((file) => file.key === missing.key)) loaded.skipped.push(missing);
  for (const skipped of loaded.skipped) {
    const line = `checkpoint skipped: ${skipped.problem}`;
    if (!warnings.includes(line)) warnings.push(line);
  }
  const gone = new Set(deletion?.removedVersions ?? []);
  const records = new Map<number, VersionRecord>();
  for (const intent of intents) for (const record of intent.records) records.set(record.version, record);
  for (const [version, scanned] of processed.scan) records.set(version, scanned.record);
  const live = new Set([...processed.scan.keys()].filter((version) => !gone.has(version)));
  return archiveVersions(run.store, {
    previous: loaded.checkpoint,
    records: [...records.values()],
    liveVersions: live,
    taggedVersions: mainBranchTaggedVersions(processed.refs),
    tableFormat: run.format.name,
    now: run.now(),
    protection: protectionState(processed),
    // Set aside, never written over with fewer rows (lib/checkpoint/damaged.ts).
    unreadable: loaded.skipped,
    ...(run.options.maxCheckpointEntries !== undefined ? { maxEntries: run.options.maxCheckpointEntries } : {}),
  });
}

/** What the checkpoint keeps of history protection, so `versions` can say it (null: none in force). */
function protectionState(processed: ProcessedManifests): StoredProtection | null {
  const protection = processed.plan.protection;
  if (!protection || protection.result === "not-applicable") return null;
  return { boundary: protection.boundary, result: protection.result, reason: protection.reason, removed_earlier: protection.removed_earlier };
}

/**
 * Files interrupted runs planned to delete, with the reason their intent gives: the proof that a
 * file younger than the safety window was committed. An older file needs no proof (its age lets
 * it go), so only the young ones are kept: a crashed million-file run's intent costs memory for
 * the files written lately, not for all it named. A file whose time the intent does not know
 * (written before intents kept times) counts as young.
 */
export async function provenByIntents(store: ObjectStore, intents: readonly IntentRead[], window: { safetyWindowMs: number; deleteUnverified: boolean; now: Date }): Promise<Map<string, string>> {
  const proven = new Map<string, string>();
  if (window.deleteUnverified || window.safetyWindowMs <= 0) return proven;
  const oldestYoung = window.now.getTime() - window.safetyWindowMs;
  for (const intent of intents) {
    const reason = `planned for deletion by interrupted run ${intent.runId} (its intent proves it was committed)`;
    try {
      for await (const file of intentFiles(store, intent)) {
        if (!(file.lastModifiedMillis <= oldestYoung)) proven.set(file.key, reason);
      }
    } catch (error) {
      // Without its proof a young file waits out the safety window: kept, never lost.
      if (!(error instanceof NotFoundError)) throw error;
    }
  }
  return proven;
}

function filesWere(n: number): string {
  return n === 1 ? "1 file" : `${n} files`;
}

function describeReferenceCheck(deletion: DeletionOutcome, result: RunResult): void {
  const check = deletion.referenceCheck;
  if (!check) return;
  if (!check.ok) {
    result.errors.push(
      `post-delete check: ${filesWere(check.deletedByRun.length)} referenced by kept versions ${check.deletedByRun.length === 1 ? "was" : "were"} deleted: ` +
        check.deletedByRun.slice(0, 5).map((m) => `${m.path} (${m.versions})`).join(", "),
    );
  }
  if (check.missingBeforeRun.length > 0) {
    result.warnings.push(
      `${filesWere(check.missingBeforeRun.length)} referenced by kept versions ${check.missingBeforeRun.length === 1 ? "was" : "were"} already missing before this run: ` +
        check.missingBeforeRun.slice(0, 5).map((m) => `${m.path} (${m.versions})`).join(", "),
    );
  }
}

function emptyResult(): RunResult {
  return {
    status: "failed",
    stopReason: null,
    latestAtStart: null,
    processed: null,
    plan: null,
    replans: [],
    proof: null,
    deletion: null,
    removed: NO_REMOVAL,
    checkpoint: null,
    pruned: null,
    intentsArchived: [],
    receiptsPruned: 0,
    chain: { id: "", run: 1, resumed: false, progressSaved: null, progressCleared: 0 },
    warnings: [],
    errors: [],
  };
}

/** The metadata commit the plan calls for (report.removal_commit), and whether it was written. */
function removalCommitOf(run: RunContext, result: RunResult): RemovalCommit | null {
  const processed = result.processed;
  if (!processed || !removalCommitDue(run.format, processed)) return null;
  const key = result.deletion?.removalCommit ?? null;
  return {
    status: run.options.dryRun ? "would write" : key !== null ? "written" : "not written",
    base: processed.scan.get(processed.latestAtStart)?.file.key ?? null,
    key,
    versions_removed: [...processed.plan.removed],
    changes: [...processed.plan.formatNotes],
  };
}

/** The one place the report is made: from what the stages returned. */
function reportOf(run: RunContext, result: RunResult, requestsBefore: RequestCounts): CleanupReport {
  const finishedAt = run.now();
  const processed = result.processed;
  const plan = result.plan;
  return {
    table: run.store.uri,
    format: run.format.name,
    run_id: run.runId,
    status: result.status,
    stop_reason: result.stopReason,
    dry_run: Boolean(run.options.dryRun),
    started_at: run.startedAt.toISOString(),
    finished_at: finishedAt.toISOString(),
    duration_ms: finishedAt.getTime() - run.startedAt.getTime(),
    policy: processed ? describePolicy(processed.policy, processed.plan.applied) : null,
    latest_version_at_start: result.latestAtStart,
    versions_removed: result.removed.versionsRemoved,
    versions_kept: processed?.plan.kept.length ?? 0,
    versions: processed ? processed.plan.decisions.map((d) => ({ version: d.version, timestamp_millis: d.timestampMillis, keep: d.keep, reason: d.reason })) : [],
    tagged_old_versions: processed?.plan.taggedOld ?? [],
    protection: processed?.plan.protection ?? null,
    files_removed: result.removed.filesByRole,
    bytes_removed: result.removed.bytesRemoved,
    files: plan?.files.files ?? [],
    files_planned: plan?.files.planned ?? 0,
    files_kept_reported: plan?.files.reported.length ?? 0,
    delete_failures: result.removed.deleteFailures,
    delete_rate: result.deletion?.rate ?? null,
    references_outside_root: processed ? [...processed.kept.outside, ...processed.removed.outside] : [],
    replans: result.replans,
    removal_commit: removalCommitOf(run, result),
    proof: result.proof ? { files_checked: result.proof.filesChecked, files_headed: result.proof.filesHeaded, files_read: result.proof.filesRead, content_skipped: result.proof.contentSkipped } : null,
    reference_check: result.deletion?.referenceCheck ?? null,
    checkpoint: result.checkpoint,
    checkpoints_pruned: result.pruned?.pruned ?? [],
    intents_archived: result.intentsArchived,
    receipts_pruned: result.receiptsPruned,
    budget: {
      deadline: run.deadline?.toISOString() ?? null,
      max_duration_ms: run.options.maxDurationMs ?? null,
      chain_id: result.chain.id || run.runId,
      run_in_chain: result.chain.run,
      resumed: result.chain.resumed,
      progress_saved: result.chain.progressSaved,
      progress_files_cleared: result.chain.progressCleared,
    },
    receipt: null,
    lease: run.lease ? { run_id: run.runId, expires_at: run.lease.expiresAt.toISOString(), took_over_from: run.lease.tookOverFrom?.run_id ?? null } : null,
    requests: diffCounts(run.store.stats.snapshot(), requestsBefore),
    // What the run deleted, from its removal totals: the plan's files are not walked again.
    storage: plan ? storageOfPlan(plan, run.format, result.deletion ? { files: filesRemovedCount({ files_removed: result.removed.filesByRole }), bytes: result.removed.bytesRemoved } : null) : null,
    warnings: result.warnings,
    errors: result.errors,
  };
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
