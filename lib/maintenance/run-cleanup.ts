/**
 * The cleanup pipeline, top to bottom:
 *
 *   take the lease → read latest, refs and interrupted runs' intents
 *     → process_manifests → delete_unreferenced → archive_versions → cleanup_old_checkpoints
 *     → prune receipts → write the receipt → release the lease
 *
 * Each stage is its own function (and file); this one only sequences them, carries the
 * deadline, and reports. A run stops between steps, never inside a write, and the next run
 * finishes the job: deletes are idempotent, an intent written before the first delete keeps the
 * history of the versions being removed and the proof for the files being deleted, and an
 * expired lease is taken over.
 */
import { randomUUID } from "node:crypto";
import { archiveVersions } from "../checkpoint/archive.ts";
import { loadNewestCheckpoint } from "../checkpoint/load.ts";
import { cleanupOldCheckpoints } from "../checkpoint/prune.ts";
import { noVersionFilesError } from "../formats/errors.ts";
import { assertTableRoot } from "../formats/table-root.ts";
import { findFormat, pinFormat } from "../formats/index.ts";
import type { TableFormat } from "../formats/table-format.ts";
import type { ObjectStore } from "../store/object-store.ts";
import { mainBranchTaggedVersions } from "../model/refs.ts";
import type { VersionRecord } from "../model/version-record.ts";
import { deleteUnreferenced } from "./delete-unreferenced.ts";
import type { DeletionOutcome } from "./delete-unreferenced.ts";
import { Lease } from "./lease.ts";
import type { CleanupSettings } from "./policy.ts";
import { describePolicy } from "./policy.ts";
import { assertKeptReferencesResolvable, processManifests, removedRecords } from "./process-manifests.ts";
import type { CleanupProgress } from "./progress.ts";
import { silentProgress } from "./progress.ts";
import type { CleanupReport } from "./report.ts";
import { diffCounts, receiptOf, totalsByKind } from "./report.ts";
import type { IntentRead, ReceiptRetention } from "./run-files.ts";
import { expiredReceipts, listRunFiles, readIntents, runKey, writeIntent, writeReceipt } from "./run-files.ts";

export interface RunCleanupOptions {
  /** Caller defaults (CLI flags, Lambda environment); the table's `lakewarden.*` config overrides them. */
  settings?: CleanupSettings;
  /** Default: detected from the table (Lance today). */
  format?: TableFormat;
  /** Plan and report only: no lease, no delete, no checkpoint, no receipt. */
  dryRun?: boolean;
  /** Stop cleanly when aborted (between steps; the run is then safe to repeat). */
  signal?: AbortSignal;
  /** Stop cleanly once this time has passed, e.g. a Lambda's end minus a margin. */
  deadline?: Date;
  lease?: { durationMs?: number; owner?: string };
  maxCheckpointFiles?: number;
  maxCheckpointEntries?: number;
  receiptRetention?: ReceiptRetention;
  /** Keys per delete request (default 1000, S3's maximum). */
  deleteBatchSize?: number;
  deleteConcurrency?: number;
  manifestConcurrency?: number;
  maxReplans?: number;
  progress?: CleanupProgress;
  /** The clock (tests move it; everything time-based reads it). */
  now?: () => Date;
}

export async function runCleanup(store: ObjectStore, options: RunCleanupOptions = {}): Promise<CleanupReport> {
  const now = options.now ?? (() => new Date());
  const progress = options.progress ?? silentProgress;
  const startedAt = now();
  const runId = randomUUID();
  const key = runKey(startedAt, runId);
  const requestsBefore = store.stats.snapshot();
  const shouldStop = (): boolean => Boolean(options.signal?.aborted) || (options.deadline !== undefined && now() >= options.deadline);
  const report = emptyReport(store, runId, startedAt, Boolean(options.dryRun));
  const finish = (): CleanupReport => {
    const finishedAt = now();
    report.finished_at = finishedAt.toISOString();
    report.duration_ms = finishedAt.getTime() - startedAt.getTime();
    report.requests = diffCounts(store.stats.snapshot(), requestsBefore);
    return report;
  };

  const resolved = options.format ? { format: options.format, source: "named" as const } : await findFormat(store);
  const format = resolved.format;
  report.format = format.name;
  // Cleaning a branch's folder as a table would be blind to the tags and child branches that
  // pin its versions (recorded at the root): refuse before the lease writes anything there.
  await assertTableRoot(store, format, "clean the table from its root, which keeps what every branch needs");
  const lease = options.dryRun
    ? null
    : await Lease.acquire(store, { runId, now, ...(options.lease?.durationMs !== undefined ? { durationMs: options.lease.durationMs } : {}), ...(options.lease?.owner ? { owner: options.lease.owner } : {}) });
  // Detected once, remembered with our own files (never in a dry run, never in a branch's folder).
  if (lease && resolved.source === "detected") await pinFormat(store, format);
  if (lease) {
    report.lease = { run_id: runId, expires_at: lease.expiresAt.toISOString(), took_over_from: lease.tookOverFrom?.run_id ?? null };
    // Taking over a released lease is the normal case; only an expired one means a run died holding it.
    if (lease.tookOverFrom && lease.tookOverFrom.released_at === null) {
      report.warnings.push(`took over the expired lease of run ${lease.tookOverFrom.run_id} (${lease.tookOverFrom.owner}): that run stopped without releasing it`);
    }
  }

  try {
    // The latest version as of now: it and everything committed from here on are kept.
    const [latest, refs, runFiles] = await Promise.all([format.latestVersionFile(store), format.readRefs(store), listRunFiles(store)]);
    if (!latest) throw noVersionFilesError(store.uri, format);
    report.latest_version_at_start = latest.version;
    const intents = await readIntents(store, runFiles.intents);
    report.warnings.push(...intents.problems);
    if (shouldStop()) return stopped(report, "before reading manifests");

    const processed = await processManifests(store, format, {
      settings: options.settings ?? {},
      refs,
      latestAtStart: latest.version,
      now: startedAt,
      progress,
      ...(options.manifestConcurrency !== undefined ? { concurrency: options.manifestConcurrency } : {}),
    });
    report.policy = describePolicy(processed.policy);
    assertKeptReferencesResolvable(processed, store.uri);
    if (shouldStop()) return stopped(report, "after reading manifests, before deleting");

    let ownIntent: string | null = null;
    const outcome = await deleteUnreferenced(store, format, processed, {
      now: startedAt,
      dryRun: Boolean(options.dryRun),
      progress,
      shouldStop,
      ...(lease ? { beforeBatch: () => lease.renewIfDue() } : {}),
      proven: provenByIntents(intents.read),
      beforeDelete: async (plan, final) => {
        await lease?.renewIfDue();
        if (shouldStop() || !plan.toDelete.some((file) => file.version !== undefined)) return;
        const files = plan.toDelete.filter((file) => file.version === undefined).map((file) => file.key);
        ownIntent = await writeIntent(store, key, runId, { records: removedRecords(final), files }, now());
      },
      ...(options.deleteBatchSize !== undefined ? { batchSize: options.deleteBatchSize } : {}),
      ...(options.deleteConcurrency !== undefined ? { deleteConcurrency: options.deleteConcurrency } : {}),
      ...(options.manifestConcurrency !== undefined ? { manifestConcurrency: options.manifestConcurrency } : {}),
      ...(options.maxReplans !== undefined ? { maxReplans: options.maxReplans } : {}),
    });
    describeOutcome(report, outcome);
    if (options.dryRun) {
      report.status = "dry-run";
      return report;
    }
    if (outcome.stopped) return stopped(report, `after deleting ${outcome.deleted.length} of ${outcome.plan.toDelete.length} files`);
    if (shouldStop()) return stopped(report, "after deleting, before writing the checkpoint");

    await lease?.renewIfDue();
    progress.stage("writing checkpoint");
    const loaded = await loadNewestCheckpoint(store);
    report.warnings.push(...loaded.skipped.map((s) => `checkpoint skipped: ${s.problem}`));
    report.checkpoint = await archiveVersions(store, {
      previous: loaded.checkpoint,
      records: recordsToArchive(outcome, intents.read),
      liveVersions: liveAfter(outcome),
      taggedVersions: mainBranchTaggedVersions(outcome.processed.refs),
      tableFormat: format.name,
      now: now(),
      ...(options.maxCheckpointEntries !== undefined ? { maxEntries: options.maxCheckpointEntries } : {}),
    });
    // The checkpoint now holds the intents' versions; once every delete is done, their file
    // lists are no longer needed as proof either.
    const settled = outcome.failed.length === 0 && !outcome.filesHeldBack && report.checkpoint.status !== "empty";
    const intentKeys = [...intents.read.map((intent) => intent.key), ...(ownIntent ? [ownIntent] : [])];
    if (settled && intentKeys.length > 0) {
      const result = await store.deleteMany(intentKeys);
      const failed = new Set(result.failed.map((f) => f.key));
      report.intents_archived = intents.read.map((intent) => intent.key).filter((k) => !failed.has(k));
    }

    progress.stage("pruning checkpoints");
    const pruned = await cleanupOldCheckpoints(store, {
      ...(options.maxCheckpointFiles !== undefined ? { maxCheckpointFiles: options.maxCheckpointFiles } : {}),
      keep: report.checkpoint.key ? [report.checkpoint.key] : [],
    });
    report.checkpoints_pruned = pruned.pruned;
    report.delete_failures.push(...pruned.failed);

    const expired = expiredReceipts(runFiles.receipts, options.receiptRetention ?? {}, now());
    if (expired.length > 0) {
      const result = await store.deleteMany(expired);
      report.receipts_pruned = expired.length - result.failed.length;
    }
    report.status = "completed";
    return report;
  } catch (error) {
    report.status = "failed";
    report.errors.push(error instanceof Error ? error.message : String(error));
    throw error;
  } finally {
    progress.finish();
    finish();
    if (lease) {
      try {
        report.receipt = await writeReceipt(store, key, receiptOf(report));
      } catch (error) {
        report.warnings.push(`receipt not written: ${(error as Error).message}`);
      }
      if (!(await lease.release())) report.warnings.push("lease not released: it expires by itself");
      finish();
    }
  }
}

/** Files interrupted runs planned to delete, with the reason their intent gives. */
function provenByIntents(intents: readonly IntentRead[]): Map<string, string> {
  const proven = new Map<string, string>();
  for (const intent of intents) {
    for (const file of intent.files) proven.set(file, `planned for deletion by interrupted run ${intent.runId} (its intent proves it was committed)`);
  }
  return proven;
}

/** Every record this run read, plus those interrupted runs were removing (their files may be gone). */
function recordsToArchive(outcome: DeletionOutcome, intents: readonly IntentRead[]): VersionRecord[] {
  const records = new Map<number, VersionRecord>();
  for (const intent of intents) for (const record of intent.records) records.set(record.version, record);
  for (const [version, scanned] of outcome.processed.scan) records.set(version, scanned.record);
  return [...records.values()];
}

/** Versions whose version file still exists after the deletes. */
function liveAfter(outcome: DeletionOutcome): Set<number> {
  const gone = new Set(outcome.removedVersions);
  return new Set([...outcome.processed.scan.keys()].filter((version) => !gone.has(version)));
}

function describeOutcome(report: CleanupReport, outcome: DeletionOutcome): void {
  const { processed, plan } = outcome;
  const done = report.dry_run ? plan.toDelete : outcome.deleted;
  report.versions = processed.plan.decisions.map((d) => ({ version: d.version, timestamp_millis: d.timestampMillis, keep: d.keep, reason: d.reason }));
  report.versions_removed = outcome.removedVersions;
  report.versions_kept = processed.plan.kept.length;
  report.tagged_old_versions = processed.plan.taggedOld;
  report.protection = processed.plan.protection;
  report.files_removed = totalsByKind(done);
  report.bytes_removed = done.reduce((sum, f) => sum + f.size, 0);
  report.files = plan.files;
  report.files_kept_reported = plan.reported.length;
  report.delete_failures = [...outcome.failed];
  report.references_outside_root = [...processed.kept.outside, ...processed.removed.outside];
  report.replans = outcome.replans;
  report.reference_check = outcome.referenceCheck;
  if (outcome.filesHeldBack) {
    report.warnings.push(
      `${outcome.failed.length} version file(s) could not be deleted, so the files of removed versions were left for the next run, which finishes the job`,
    );
  }
  if (outcome.referenceCheck && !outcome.referenceCheck.ok) {
    report.errors.push(
      `post-delete check: ${outcome.referenceCheck.deletedByRun.length} file(s) referenced by kept versions were deleted: ` +
        outcome.referenceCheck.deletedByRun.slice(0, 5).map((m) => `${m.path} (${m.versions})`).join(", "),
    );
  }
  if (outcome.referenceCheck && outcome.referenceCheck.missingBeforeRun.length > 0) {
    report.warnings.push(
      `${outcome.referenceCheck.missingBeforeRun.length} file(s) referenced by kept versions were already missing before this run: ` +
        outcome.referenceCheck.missingBeforeRun.slice(0, 5).map((m) => `${m.path} (${m.versions})`).join(", "),
    );
  }
}

function stopped(report: CleanupReport, where: string): CleanupReport {
  report.status = "stopped";
  report.stop_reason = `stopped ${where} (deadline or abort signal); run again to finish`;
  report.warnings.push(report.stop_reason);
  return report;
}

function emptyReport(store: ObjectStore, runId: string, startedAt: Date, dryRun: boolean): CleanupReport {
  return {
    table: store.uri,
    format: "",
    run_id: runId,
    status: "failed",
    stop_reason: null,
    dry_run: dryRun,
    started_at: startedAt.toISOString(),
    finished_at: startedAt.toISOString(),
    duration_ms: 0,
    policy: null,
    latest_version_at_start: null,
    versions_removed: [],
    versions_kept: 0,
    versions: [],
    tagged_old_versions: [],
    protection: null,
    files_removed: {},
    bytes_removed: 0,
    files: [],
    files_kept_reported: 0,
    delete_failures: [],
    references_outside_root: [],
    replans: [],
    reference_check: null,
    checkpoint: null,
    checkpoints_pruned: [],
    intents_archived: [],
    receipts_pruned: 0,
    receipt: null,
    lease: null,
    requests: { get: 0, head: 0, list: 0, put: 0, delete: 0 },
    warnings: [],
    errors: [],
  };
}
