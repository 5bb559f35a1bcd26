/** The one place a cleanup's report is made: from the values its stages returned, as far as the run got. */
import type { KeptStateProof } from "./prove-kept.ts";
import type { CleanupRun } from "./cleanup-run.ts";
import type { RunStart } from "./cleanup-stages.ts";
import type { ArchiveStep, DeletionStep, PruneStep, RemovalCommitStep } from "./cleanup-writes.ts";
import type { DeletePlan } from "./plan-deletes.ts";
import { describePolicy } from "./policy.ts";
import type { ProcessedManifests } from "./process-manifests.ts";
import { removalCommitDue } from "./removal-commit.ts";
import type { CleanupReport, CleanupStatus, RemovalCommit } from "./cleanup-report.ts";
import { diffCounts, filesRemovedCount } from "./cleanup-report.ts";
import type { RemovalStats } from "./stats.ts";
import { NO_REMOVAL, mergeStats } from "./stats.ts";
import { storageOfPlan } from "./storage-parts.ts";
import type { RequestCounts } from "../store/object-store.ts";

/** What the stages returned, each set once by the sequence (run-cleanup.ts) as its stage returns: the report's only source. */
export interface Reached {
  /** Why the run had nothing to do at all (a table with no version yet): then nothing else is reached. */
  nothingToDo?: string;
  start?: RunStart;
  /** A complete scan's decisions. */
  processed?: ProcessedManifests;
  /** The plan on a complete listing, and once settled, the settled plan. */
  plan?: DeletePlan;
  replans?: string[];
  proof?: KeptStateProof;
  /** A dry run: what the write steps would record with the plan (cleanup-stages.ts explainPlan). */
  explained?: RemovalStats;
  checkpointBefore?: ArchiveStep;
  commit?: RemovalCommitStep;
  deletion?: DeletionStep;
  checkpointAfter?: ArchiveStep;
  intentsArchived?: string[];
  pruned?: PruneStep;
  receiptsPruned?: number;
  progressCleared?: number;
}

/** How the run ended, besides what it reached. */
export interface Ended {
  status: CleanupStatus;
  stopReason: string | null;
  progressSaved: string | null;
  /** Lines from outside the stages: the lease taken over (first), the stop (last). */
  warningsBefore: string[];
  warningsAfter: string[];
  errors: string[];
}

/** The run's stats: every step's own, merged (a dry run: the plan's explanation). */
export function statsOf(got: Reached): RemovalStats {
  if (got.explained) return got.explained;
  const steps = [got.commit?.stats, got.deletion?.outcome.stats, got.pruned?.stats].filter((s): s is RemovalStats => s !== undefined);
  return steps.length === 0 ? NO_REMOVAL : mergeStats(...steps);
}

export function reportOf(run: CleanupRun, got: Reached, ended: Ended, requestsBefore: RequestCounts): CleanupReport {
  const finishedAt = run.now();
  const plan = got.plan ?? null;
  const processed = plan?.processed ?? got.processed ?? null;
  const removed = statsOf(got);
  const deletion = got.deletion?.outcome ?? null;
  const checkpoint = got.checkpointAfter ?? got.checkpointBefore ?? null;
  const start = got.start;
  return {
    table: run.store.uri,
    format: run.format.name,
    run_id: run.runId,
    status: ended.status,
    stop_reason: ended.stopReason,
    nothing_to_do: got.nothingToDo ?? null,
    dry_run: Boolean(run.options.dryRun),
    started_at: run.startedAt.toISOString(),
    finished_at: finishedAt.toISOString(),
    duration_ms: finishedAt.getTime() - run.startedAt.getTime(),
    policy: processed ? describePolicy(processed.policy, processed.plan.applied) : null,
    latest_version_at_start: start?.latestAtStart ?? null,
    versions_removed: removed.versionsRemoved,
    versions_kept: processed?.plan.kept.length ?? 0,
    versions: processed ? processed.plan.decisions.map((d) => ({ version: d.version, timestamp_millis: d.timestampMillis, keep: d.keep, reason: d.reason })) : [],
    tagged_old_versions: processed?.plan.taggedOld ?? [],
    protection: processed?.plan.protection ?? null,
    files_removed: removed.filesByRole,
    bytes_removed: removed.bytesRemoved,
    files: plan?.files.files ?? [],
    files_planned: plan?.files.planned ?? 0,
    files_kept_reported: plan?.files.reported.length ?? 0,
    delete_failures: removed.deleteFailures,
    delete_rate: deletion?.rate ?? null,
    references_outside_root: processed ? [...processed.kept.outside, ...processed.removed.outside] : [],
    replans: got.replans ?? [],
    removal_commit: removalCommitOf(run, processed, got.commit ?? null),
    proof: got.proof
      ? {
          files_checked: got.proof.filesChecked,
          files_headed: got.proof.filesHeaded,
          files_read: got.proof.filesRead,
          files_proven_by_size: got.proof.filesProvenBySize,
          content_skipped: got.proof.contentSkipped,
        }
      : null,
    reference_check: deletion?.referenceCheck ?? null,
    checkpoint: checkpoint?.archived.result ?? null,
    checkpoints_pruned: got.pruned?.pruned.pruned ?? [],
    intents_archived: got.intentsArchived ?? [],
    receipts_pruned: got.receiptsPruned ?? 0,
    budget: {
      deadline: run.guard.deadline?.toISOString() ?? null,
      max_duration_ms: run.options.maxDurationMs ?? null,
      chain_id: start?.chain.id ?? run.runId,
      run_in_chain: start?.chain.run ?? 1,
      resumed: start?.chain.resumed ?? false,
      progress_saved: ended.progressSaved,
      progress_files_cleared: got.progressCleared ?? 0,
    },
    receipt: null,
    lease: run.lease ? { run_id: run.runId, expires_at: run.lease.expiresAt.toISOString(), took_over_from: run.lease.tookOverFrom?.run_id ?? null } : null,
    requests: diffCounts(run.store.stats.snapshot(), requestsBefore),
    // What the run deleted, from its removal totals: the plan's files are not walked again.
    storage: plan ? storageOfPlan(plan, run.format, deletion ? { files: filesRemovedCount({ files_removed: removed.filesByRole }), bytes: removed.bytesRemoved } : null) : null,
    warnings: [
      ...ended.warningsBefore,
      ...(start?.warnings ?? []),
      ...(got.processed?.policy.warnings ?? []),
      ...(got.checkpointBefore?.warnings ?? []),
      ...(got.commit?.warnings ?? []),
      ...(got.deletion?.warnings ?? []),
      ...(got.checkpointAfter?.warnings ?? []),
      ...(got.pruned?.warnings ?? []),
      ...ended.warningsAfter,
    ],
    errors: [...(got.deletion?.errors ?? []), ...ended.errors],
  };
}

/** The metadata commit the plan calls for (report.removal_commit), and whether it was written. */
function removalCommitOf(run: CleanupRun, processed: ProcessedManifests | null, commit: RemovalCommitStep | null): RemovalCommit | null {
  if (!processed || !removalCommitDue(run.format, processed)) return null;
  const key = commit?.key ?? null;
  return {
    status: run.options.dryRun ? "would write" : key !== null ? "written" : "not written",
    base: processed.scan.get(processed.latestAtStart)?.file.key ?? null,
    key,
    versions_removed: [...processed.plan.removed],
    changes: [...processed.plan.formatNotes],
  };
}
