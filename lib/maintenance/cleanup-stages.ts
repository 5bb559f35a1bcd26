/**
 * The reading and planning stages of a cleanup run, each a function of the run and the values of
 * the stages before it, returning the value the next one takes: nothing here writes or deletes.
 * A dry run and a real run go through the same ones; `explainPlan` says what the run's write
 * steps (cleanup-writes.ts) would do with the plan, to the file.
 */
import { loadNewestCheckpoint } from "../checkpoint/load.ts";
import type { LoadedCheckpoint } from "../checkpoint/load.ts";
import { noVersionError, noVersionYetLine, NoVersionYetError } from "../formats/errors.ts";
import type { Refs } from "../formats/table-format.ts";
import { NotFoundError } from "../store/errors.ts";
import type { ObjectStore } from "../store/object-store.ts";
import type { CleanupRun } from "./cleanup-run.ts";
import { DEFAULT_DELETE_BATCH_SIZE, MAX_DELETE_BATCH_SIZE } from "./delete-batches.ts";
import { commitFilesOf, versionsRemovedBy } from "./delete-unreferenced.ts";
import { TableChangedError } from "./errors.ts";
import { readPins } from "../pins/pins.ts";
import type { DeletePlan, PlanDeletesOptions } from "./plan-deletes.ts";
import { planDeletes } from "./plan-deletes.ts";
import type { ProcessedManifests } from "./process-manifests.ts";
import { assertKeptReferencesResolvable, processManifests } from "./process-manifests.ts";
import { proveKeptState } from "./prove-kept.ts";
import type { KeptStateProof } from "./prove-kept.ts";
import { removesByCommit } from "./removal-commit.ts";
import { admitOrRefuse } from "./admission.ts";
import type { SettledPlan } from "./replan.ts";
import { replanUntilSettled } from "./replan.ts";
import type { IntentRead, RunFiles } from "./run-files.ts";
import { intentFiles, listRunFiles, readIntents } from "./run-files.ts";
import type { SavedProgress } from "./run-progress.ts";
import { loadProgress } from "./run-progress.ts";
import type { RemovalStats } from "./stats.ts";
import { removalStats } from "./stats.ts";
import { readStoredConfig } from "./stored-config.ts";
import type { VersionPin } from "./version-plan.ts";

/** What the run read before it planned: the latest version, refs, pins, its own files and an earlier run's progress. */
export interface RunStart {
  /** It and everything committed from here on are kept (a chain keeps its first run's). */
  latestAtStart: number;
  refs: Refs;
  runFiles: RunFiles;
  storedConfig: Record<string, string>;
  history: LoadedCheckpoint;
  pins: readonly VersionPin[];
  /** A budget-stopped run's progress this run goes on from (null: none, or not usable). */
  saved: SavedProgress | null;
  /** Interrupted runs' intents: their versions go into the history, their files are proof. */
  intents: IntentRead[];
  /** The chain of budgeted runs this run belongs to. */
  chain: { id: string; run: number; resumed: boolean };
  warnings: string[];
}

/** A table with no version yet (an Iceberg table without a snapshot): nothing is due, nothing is touched; why, in one line. */
export interface NothingToDo {
  nothingToDo: string;
}

export async function readStart(run: CleanupRun): Promise<RunStart | NothingToDo> {
  const { store, format, options } = run;
  const [latest, refs, runFiles, storedConfig, history, pins] = await Promise.all([
    format.latestVersionFile(store),
    format.readRefs(store),
    listRunFiles(store),
    readStoredConfig(store),
    loadNewestCheckpoint(store),
    readPins(store, run.startedAt),
  ]);
  const warnings = [...pins.problems];
  if (!latest) {
    // A listing taken while a writer renames version files (LanceDB's manifest-path migration)
    // can miss every one of them; a second look tells that race from a folder with no table.
    if (await format.latestVersionFile(store)) {
      throw new TableChangedError(store.uri, "version files moved while cleanup listed them (a rename or migration in progress); nothing was deleted, run again");
    }
    const why = await noVersionError(store, format);
    if (why instanceof NoVersionYetError) return { nothingToDo: noVersionYetLine(format) };
    throw why;
  }
  // May this table be maintained at all (the format's gates): refused before anything is planned.
  await admitOrRefuse(store, format, latest);
  // A budget-stopped run's progress: what it read, listed and deleted. Only a shortcut: every
  // decision after this is made again on fresh refs, a fresh version listing and a fresh re-plan.
  const loaded = options.dryRun ? { saved: null, problem: null } : await loadProgress(store, runFiles.progress, run.now(), run.spill);
  if (loaded.problem) warnings.push(loaded.problem);
  let saved = loaded.saved;
  if (saved && latest.version < saved.latestAtStart) {
    warnings.push(`the latest version went from ${saved.latestAtStart} to ${latest.version} since the saved progress: starting over`);
    saved = null;
  }
  const intents = await readIntents(store, runFiles.intents);
  warnings.push(...intents.problems);
  return {
    latestAtStart: saved ? saved.latestAtStart : latest.version,
    refs,
    runFiles,
    storedConfig,
    history,
    pins: pins.active,
    saved,
    intents: intents.read,
    chain: { id: saved?.chainId ?? run.runId, run: (saved?.runs ?? 0) + 1, resumed: saved !== null },
    warnings,
  };
}

/** process_manifests: every version file read (or, stopped by the budget, those read so far: `scanStopped`) and decided. */
export async function readVersions(run: CleanupRun, start: RunStart): Promise<ProcessedManifests> {
  const { options } = run;
  const processed = await processManifests(run.store, run.format, {
    settings: options.settings ?? {},
    ...(options.environment ? { environment: options.environment } : {}),
    storedConfig: start.storedConfig,
    removedEarlier: [...start.intents.flatMap((intent) => intent.records.map((record) => record.version)), ...(start.history.checkpoint?.protection?.removed_earlier ?? [])],
    refs: start.refs,
    pins: start.pins,
    latestAtStart: start.latestAtStart,
    now: run.startedAt,
    progress: run.progress,
    ...(start.saved ? { previous: start.saved.scan, resumed: true } : {}),
    shouldStop: () => run.guard.beforeWork(1),
    ...(options.manifestConcurrency !== undefined ? { concurrency: options.manifestConcurrency } : {}),
  });
  if (!processed.scanStopped) assertKeptReferencesResolvable(processed, run.store.uri);
  return processed;
}

/** A plan and the options it was made with (a re-plan plans again with the same). */
export interface ListedPlan {
  plan: DeletePlan;
  planOptions: PlanDeletesOptions;
}

/** The deletes planned on a full listing of the format's folders (or, stopped by the budget, a partial listing: cursor not done). */
export async function listAndPlan(run: CleanupRun, start: RunStart, processed: ProcessedManifests): Promise<ListedPlan> {
  const proven = await provenByIntents(run.store, start.intents, { ...processed.policy, now: run.startedAt });
  const planOptions: PlanDeletesOptions = { now: run.startedAt, proven, progress: run.progress, spill: run.spill };
  const plan = await planDeletes(run.store, run.format, processed, {
    ...planOptions,
    ...(start.saved ? { resume: { listed: start.saved.listed, cursor: start.saved.cursor } } : {}),
    shouldStop: () => run.guard.beforeWork(1),
  });
  return { plan, planOptions };
}

/** The plan made again while tags, branches or the latest version moved since it was made. */
export async function replan(run: CleanupRun, listed: ListedPlan): Promise<SettledPlan> {
  const { options } = run;
  const settled = await replanUntilSettled(run.store, run.format, listed.plan, {
    ...listed.planOptions,
    ...(options.maxReplans !== undefined ? { maxReplans: options.maxReplans } : {}),
    ...(options.manifestConcurrency !== undefined ? { manifestConcurrency: options.manifestConcurrency } : {}),
  });
  assertKeptReferencesResolvable(settled.plan.processed, run.store.uri);
  // The listing's cursor stays the first plan's: where the saved progress says the listing got to.
  return { ...settled, plan: { ...settled.plan, cursor: listed.plan.cursor ?? { prefixIndex: 0, after: null, done: true } } };
}

/**
 * Never make a table worse: every version the plan keeps reads whole from what will remain,
 * proven before anything is written or deleted (a failure throws: nothing is touched). A dry run
 * makes the same proof, so it refuses what the run would.
 */
export async function prove(run: CleanupRun, plan: DeletePlan): Promise<KeptStateProof> {
  run.progress.stage("proving kept versions");
  const proof = await proveKeptState(run.store, run.format, plan, { verifyData: run.options.verifyData === true });
  await run.lease?.renewIfDue();
  return proof;
}

/**
 * What the run's write steps would remove with this plan, as they would record it: every file
 * the plan deletes, and the versions gone once they are (by the removal commit, every planned
 * version at once; else each version whose commit files all go).
 */
export function explainPlan(run: CleanupRun, plan: DeletePlan): RemovalStats {
  const { processed } = plan;
  const commitFiles = commitFilesOf(plan);
  const versions = removesByCommit(run.format) ? processed.plan.removed : versionsRemovedBy(processed, commitFiles, new Set(commitFiles.map(({ file }) => file.key)));
  return removalStats(plan.files.toDelete, versions);
}

/** Keys a delete batch counts as work, for the budget's minimum. */
export function deleteBatchWork(run: CleanupRun): number {
  return Math.min(run.options.deleteBatchSize ?? DEFAULT_DELETE_BATCH_SIZE, MAX_DELETE_BATCH_SIZE);
}

/**
 * Files interrupted runs planned to delete, with the reason their intent gives: the proof that a
 * file younger than the safety window was committed. An older file needs no proof (its age lets
 * it go), so only the young ones are kept: a crashed million-file run's intent costs memory for
 * the files written lately, not for all it named. A file whose time the intent does not know
 * (written before intents kept times) counts as young.
 */
export async function provenByIntents(
  store: ObjectStore,
  intents: readonly IntentRead[],
  window: { safetyWindowMs: number; deleteUnverified: boolean; now: Date },
): Promise<Map<string, string>> {
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
