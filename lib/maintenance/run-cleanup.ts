/**
 * The cleanup run: take the lease, run the stages in order (`cleanTable`, read top to bottom),
 * and always: make the report from what they returned, write the receipt, release the lease.
 *
 * Each stage is its own function (cleanup-stages.ts reads and plans, cleanup-writes.ts writes
 * and deletes) that returns what the next one takes. A run stops between steps, never inside a
 * write: the stop guard is asked before every step that writes or deletes, and the next run
 * finishes the job. Deletes are idempotent, the history of the versions about to be removed is
 * in a checkpoint before their first file goes (so `versions` shows no gap after any stop), the
 * intent proves the files being deleted were committed, and an expired lease is taken over.
 */
import { randomUUID } from "node:crypto";
import { findFormat, pinFormat } from "../formats/index.ts";
import { assertTableRoot } from "../formats/table-root.ts";
import type { ObjectStore } from "../store/object-store.ts";
import type { CleanupRun, RunCleanupOptions } from "./cleanup-run.ts";
import { DEFAULT_MIN_WORK_PER_RUN } from "./cleanup-run.ts";
import type { Ended, Reached } from "./run-report.ts";
import { reportOf } from "./run-report.ts";
import { explainPlan, listAndPlan, prove, readStart, readVersions, replan } from "./cleanup-stages.ts";
import type { ProgressParts } from "./cleanup-writes.ts";
import {
  archive,
  clearChain,
  commitRemoval,
  deleteFiles,
  finishInterrupted,
  pruneCheckpoints,
  pruneReceipts,
  saveChain,
  settleIntents,
  withdrawIntent,
  writeRunIntent,
} from "./cleanup-writes.ts";
import { RemovalCommitLostError } from "./errors.ts";
import { Lease, describeTakeover } from "./lease.ts";
import { silentProgress } from "./progress.ts";
import { removalCommitDue } from "./removal-commit.ts";
import type { CleanupReport } from "./cleanup-report.ts";
import { receiptOf, diffCounts } from "./cleanup-report.ts";
import { runKey, writeReceipt } from "./run-files.ts";
import { SpillArea } from "./spill.ts";
import { mergeStats } from "./stats.ts";
import { stopGuard } from "./stop-guard.ts";

export type { RunCleanupOptions } from "./cleanup-run.ts";
export { DEFAULT_MIN_WORK_PER_RUN } from "./cleanup-run.ts";
export { provenByIntents } from "./cleanup-stages.ts";

export const DEFAULT_COMMIT_REPLANS = 3;

/** How the stages ended: all ran, a dry run's plan was explained, or a stop was due before `where` (with what to save for the next run). */
type Ending = { status: "completed" | "dry-run" } | { status: "stopped"; where: string; save: ProgressParts | null };

/**
 * The stages in order, each taking what the ones before returned; `got` keeps their values for
 * the report (each set once, here). The guard is asked before every step that writes or deletes.
 */
async function cleanTable(run: CleanupRun, got: Reached): Promise<Ending> {
  const { guard } = run;
  const stop = (where: string, save: ProgressParts | null = null): Ending => ({ status: "stopped", where, save });
  const started = await readStart(run);
  if ("nothingToDo" in started) {
    got.nothingToDo = started.nothingToDo;
    return { status: run.options.dryRun ? "dry-run" : "completed" };
  }
  const start = (got.start = started);
  if (guard.due()) return stop("before reading manifests");
  const processed = await readVersions(run, start);
  const read = processed.scanStopped;
  if (read) return stop(`while reading version files (${read.held} of ${read.listed} read)`, { scan: processed.scan, plan: null });
  got.processed = processed;
  if (guard.due()) return stop("after reading manifests, before listing", { scan: processed.scan, plan: null });
  const listed = await listAndPlan(run, start, processed);
  if (listed.plan.cursor && !listed.plan.cursor.done) return stop(`while listing files (${listed.plan.listing.length} listed so far)`, { scan: processed.scan, plan: listed.plan });
  got.plan = listed.plan;
  if (run.options.dryRun) {
    got.proof = await prove(run, listed.plan);
    got.explained = explainPlan(run, listed.plan);
    return { status: "dry-run" };
  }
  const settled = await replan(run, listed);
  const plan = (got.plan = settled.plan);
  got.replans = settled.replans;
  got.proof = await prove(run, plan);

  // History first: once the checkpoint holds the versions about to be removed, no stop from
  // here on leaves `versions` or `version-at` with a gap; nothing below runs without it and the intent.
  const planned = { scan: plan.processed.scan, plan };
  const removing = plan.processed.plan.removed.length > 0;
  if (removing && guard.due()) return stop("before writing the checkpoint", planned);
  const before = removing ? (got.checkpointBefore = await archive(run, start, plan.processed)) : null;
  if (removing && guard.due()) return stop("after writing the checkpoint, before deleting", planned);
  const ownIntent = removing ? await writeRunIntent(run, plan) : [];
  if (guard.due()) return stop("before deleting", planned);
  await finishInterrupted(run, plan);
  if (removalCommitDue(run.format, plan.processed) && guard.due()) return stop("before the removal commit", planned);
  const commit = (got.commit = await commitRemoval(run, plan).catch(async (error: unknown) => {
    if (error instanceof RemovalCommitLostError) await withdrawIntent(run, ownIntent);
    throw error;
  }));
  const deletion = (got.deletion = await deleteFiles(run, start, plan, commit));
  const deleted = { ...planned, deletion: deletion.outcome };
  if (deletion.outcome.stopped) return stop(`after deleting ${deletion.outcome.deletedCount} of ${plan.files.toDelete.length} files`, deleted);
  if (guard.due()) return stop("after deleting, before writing the checkpoint", deleted);
  const gone = mergeStats(commit.stats, deletion.outcome.stats).versionsRemoved;
  const after = (got.checkpointAfter = await archive(run, start, plan.processed, { gone, earlier: before }));
  if (guard.due()) return stop("after writing the checkpoint, before pruning", deleted);
  // The tidy-ups after the checkpoint touch files of their own and none guards another: one round
  // trip for all four, each finished (or failed) before the receipt and the lease's release.
  const [intents, pruned, receipts, cleared] = await Promise.allSettled([
    settleIntents(run, start, ownIntent, deletion.outcome, after),
    pruneCheckpoints(run, after),
    pruneReceipts(run, start),
    clearChain(run, start),
  ]);
  if (intents.status === "fulfilled") got.intentsArchived = intents.value;
  if (pruned.status === "fulfilled") got.pruned = pruned.value;
  if (receipts.status === "fulfilled") got.receiptsPruned = receipts.value;
  if (cleared.status === "fulfilled") got.progressCleared = cleared.value;
  for (const step of [intents, pruned, receipts, cleared]) if (step.status === "rejected") throw step.reason;
  return { status: "completed" };
}

/**
 * A cleanup run; one whose removal commit lost the race to another writer (its create-only write
 * refused: nothing was deleted) is followed by a new run planned on the new base, a bounded
 * number of times, as runCleanupThroughCatalog does for a commit the catalog refuses. The report
 * is the last run's, its re-plans led by why the earlier runs were planned again.
 */
export async function runCleanup(store: ObjectStore, options: RunCleanupOptions = {}): Promise<CleanupReport> {
  const { maxCommitReplans = DEFAULT_COMMIT_REPLANS } = options;
  const lost: string[] = [];
  for (;;) {
    try {
      const report = await cleanupOnce(store, options);
      return lost.length === 0 ? report : { ...report, replans: [...lost, ...report.replans] };
    } catch (error) {
      if (!(error instanceof RemovalCommitLostError) || lost.length >= maxCommitReplans) throw error;
      lost.push(`${error.message}: planned again on the new base`);
    }
  }
}

async function cleanupOnce(store: ObjectStore, options: RunCleanupOptions): Promise<CleanupReport> {
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
      : await Lease.acquire(store, {
          runId,
          now,
          ...(options.lease?.durationMs !== undefined ? { durationMs: options.lease.durationMs } : {}),
          ...(options.lease?.owner ? { owner: options.lease.owner } : {}),
        });
  } catch (error) {
    spill.dispose();
    throw error;
  }
  // The budget stops a run only once it did its minimum of new work; the hard deadline and the
  // abort signal stop it at once.
  const guard = stopGuard({
    now,
    startedAt,
    deadline: options.deadline,
    maxDurationMs: options.maxDurationMs,
    minWorkPerRun: options.minWorkPerRun ?? DEFAULT_MIN_WORK_PER_RUN,
    signal: options.signal,
  });
  const run: CleanupRun = { store, format, options, runId, key: runKey(startedAt, runId), startedAt, now, progress: options.progress ?? silentProgress, lease, spill, guard };
  // Taking over a released lease is the normal case; only an expired one means a run died holding it.
  const takeover = lease?.tookOverFrom && lease.tookOverFrom.released_at === null ? [describeTakeover(lease.tookOverFrom, lease.tookOverBecause)] : [];
  const got: Reached = {};
  let report: CleanupReport | null = null;
  try {
    // Detected once, remembered with our own files (never in a dry run, never in a branch's folder).
    if (lease && resolved.source === "detected") await pinFormat(store, format);
    const ending = await cleanTable(run, got);
    return (report = reportOf(run, got, await endedAs(run, got, ending, takeover), requestsBefore));
  } catch (error) {
    const failed: Ended = {
      status: "failed",
      stopReason: null,
      progressSaved: null,
      warningsBefore: takeover,
      warningsAfter: [],
      errors: [error instanceof Error ? error.message : String(error)],
    };
    report = reportOf(run, got, failed, requestsBefore);
    throw error;
  } finally {
    run.progress.finish();
    if (lease && report) {
      // The receipt is a record of the run, not a step a next run waits for: written beside the release.
      const [receipt, released] = await Promise.allSettled([writeReceipt(store, run.key, receiptOf(report)), lease.release()]);
      if (receipt.status === "fulfilled") report.receipt = receipt.value;
      else report.warnings.push(`receipt not written: ${(receipt.reason as Error).message}`);
      if (released.status === "rejected" || !released.value) report.warnings.push("lease not released: it expires by itself");
      report.requests = diffCounts(store.stats.snapshot(), requestsBefore);
    }
    spill.dispose();
  }
}

/** How the run ended: a stopped run saves what it adds to its chain first (never in a dry run). */
async function endedAs(run: CleanupRun, got: Reached, ending: Ending, takeover: string[]): Promise<Ended> {
  const ended: Ended = { status: ending.status, stopReason: null, progressSaved: null, warningsBefore: takeover, warningsAfter: [], errors: [] };
  if (ending.status !== "stopped") return ended;
  const progressSaved = ending.save && !run.options.dryRun && got.start ? await saveChain(run, got.start, ending.save) : null;
  const stopReason = `stopped ${ending.where}${ending.save ? "; progress saved" : ""} (deadline or abort signal); run again to finish`;
  return { ...ended, stopReason, progressSaved, warningsAfter: [stopReason] };
}
