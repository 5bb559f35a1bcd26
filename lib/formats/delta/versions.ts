/**
 * One summary per commit in `_delta_log/`: version, timestamp (in-commit timestamp where enabled,
 * else the commit file's modification time), and the commit's provenance (commitInfo: operation,
 * operation parameters as strings, read version, operation metrics as numbers, txnId).
 * The log's current protocol and metadata decide the timestamp rule, so the latest snapshot is
 * read first (and its protocol checked).
 *
 * The totals of many versions at once (versionTotals): one replay of the log, from the state at
 * the first version asked for, then each commit after it applied in order, so a history of N
 * commits costs N commit reads and at most one checkpoint, not a replay per version.
 */
import type { ObjectInfo, ObjectStore } from "../../store/object-store.ts";
import { mapConcurrent } from "../../store/map-concurrent.ts";
import { CorruptFileError, UnsupportedFeatureError } from "../errors.ts";
import type { AddAction, CommitInfoAction, DeltaAction } from "./actions.ts";
import { commitTimestamp, timestampPolicy } from "./commit-timestamps.ts";
import type { TimestampPolicy, TimestampSource } from "./commit-timestamps.ts";
import { listLog } from "./log-listing.ts";
import type { LogListing } from "./log-listing.ts";
import { recordCount } from "./head-state.ts";
import type { DeltaTotals } from "./head-state.ts";
import { commitInfoOf, fileId, loadSnapshot, readCommitActions } from "./snapshot.ts";

export interface DeltaCommitSummary {
  version: number;
  timestampMillis: number;
  timestampSource: TimestampSource;
  operation: string | null;
  operationParameters: Record<string, string>;
  readVersion: number | null;
  metrics: Record<string, number>;
  txnId: string | null;
  commitFile: ObjectInfo;
}

const CONCURRENCY = 8;
/** Commits read ahead of the replay at most. */
const REPLAY_WINDOW = 256;

/** operationParameters values as strings: strings as they are, other JSON values as JSON text; nulls left out. */
export function flattenParameters(parameters: Record<string, unknown> | undefined | null): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(parameters ?? {})) {
    if (value === null || value === undefined) continue;
    out[key] = typeof value === "string" ? value : JSON.stringify(value);
  }
  return out;
}

/** operationMetrics (Spark writes them as strings of numbers) as numbers; anything not numeric is left out. */
export function numericMetrics(metrics: Record<string, unknown> | undefined | null): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [key, value] of Object.entries(metrics ?? {})) {
    const n = typeof value === "number" ? value : typeof value === "string" && value.trim() !== "" ? Number(value) : Number.NaN;
    if (Number.isFinite(n)) out[key] = n;
  }
  return out;
}

export function summarizeCommit(version: number, commitInfo: CommitInfoAction | null, file: ObjectInfo, policy: TimestampPolicy, uri: string): DeltaCommitSummary {
  const { millis, source } = commitTimestamp(policy, version, commitInfo, file.lastModified, uri);
  const readVersion = commitInfo?.readVersion;
  return {
    version,
    timestampMillis: millis,
    timestampSource: source,
    operation: typeof commitInfo?.operation === "string" ? commitInfo.operation : null,
    operationParameters: flattenParameters(commitInfo?.operationParameters),
    readVersion: typeof readVersion === "number" ? readVersion : null,
    metrics: numericMetrics(commitInfo?.operationMetrics),
    txnId: typeof commitInfo?.txnId === "string" ? commitInfo.txnId : null,
    commitFile: file,
  };
}

/** Every commit the log holds, ascending. */
export async function readDeltaVersions(store: ObjectStore, options: { listing?: LogListing } = {}): Promise<DeltaCommitSummary[]> {
  const listing = options.listing ?? (await listLog(store));
  const snapshot = await loadSnapshot(store);
  const policy = timestampPolicy(snapshot.protocol, snapshot.metadata);
  const files = [...listing.commits.entries()].sort((a, b) => a[0] - b[0]);
  return mapConcurrent(files, CONCURRENCY, async ([version, file]) => {
    const actions = await readCommitActions(store, version, file);
    return summarizeCommit(version, commitInfoOf(actions), file, policy, store.uriOf(file.key));
  });
}

/**
 * The live files' totals as a replay goes: an add makes its (path, DV) live or replaces it, a
 * remove takes it out (the same rule as ReplayState). Each total moves by the file that changed,
 * so a version's totals cost its own actions, not the table's size. Equal to deltaTotals of
 * the snapshot at every version.
 */
export class RunningTotals {
  private readonly files = new Map<string, AddAction>();
  private size = 0;
  private rowsKnown = 0;
  private withoutStats = 0;
  private deletionFiles = 0;
  private deletedRows = 0;

  static of(adds: readonly AddAction[]): RunningTotals {
    const totals = new RunningTotals();
    for (const add of adds) totals.add(add);
    return totals;
  }

  apply(action: DeltaAction): void {
    if ("add" in action) this.add(action.add);
    else if ("remove" in action) this.take(fileId(action.remove.path, action.remove.deletionVector));
  }

  private add(add: AddAction): void {
    const id = fileId(add.path, add.deletionVector);
    this.take(id);
    this.files.set(id, add);
    this.count(add, 1);
  }

  private take(id: string): void {
    const old = this.files.get(id);
    if (!old) return;
    this.files.delete(id);
    this.count(old, -1);
  }

  private count(add: AddAction, sign: 1 | -1): void {
    this.size += sign * add.size;
    const rows = recordCount(add);
    if (rows === null) this.withoutStats += sign;
    else this.rowsKnown += sign * rows;
    if (add.deletionVector) {
      this.deletionFiles += sign;
      this.deletedRows += sign * (add.deletionVector.cardinality ?? 0);
    }
  }

  totals(): DeltaTotals {
    const rows = this.withoutStats > 0 ? null : this.rowsKnown;
    return {
      total_fragments: this.files.size,
      total_data_files: this.files.size,
      total_files_size: this.size,
      total_deletion_files: this.deletionFiles,
      total_data_file_rows: rows,
      total_deletion_file_rows: this.deletedRows,
      total_rows: rows === null ? null : rows - this.deletedRows,
    };
  }
}

/**
 * The totals of each commit in `commits` (version → its commit file), from one replay per run of
 * consecutive versions: the state at the run's first version (loadSnapshot: its checkpoint and
 * the commits after it; nothing for version 0), then each later commit of the run applied to it.
 * A run whose first state cannot be rebuilt (a damaged checkpoint with no commit 0 to fall back
 * to, a protocol lakewarden cannot read) gets null totals: its versions are still listed, their
 * numbers unknown rather than wrong.
 */
export async function versionTotals(store: ObjectStore, commits: ReadonlyMap<number, ObjectInfo>): Promise<Map<number, DeltaTotals | null>> {
  const out = new Map<number, DeltaTotals | null>();
  for (const run of consecutiveRuns([...commits.keys()])) {
    const first = run[0]!;
    const start = first === 0 ? new RunningTotals() : await stateAt(store, first);
    const replayed = first === 0 ? run : run.slice(1);
    if (start === null) {
      for (const version of run) out.set(version, null);
      continue;
    }
    if (first !== 0) out.set(first, start.totals());
    // Read ahead in parallel, a window at a time (a long log is not held whole); applied strictly in version order.
    for (let from = 0; from < replayed.length; from += REPLAY_WINDOW) {
      const window = replayed.slice(from, from + REPLAY_WINDOW);
      const actions = await mapConcurrent(window, CONCURRENCY, (version) => readCommitActions(store, version, commits.get(version)));
      window.forEach((version, i) => {
        for (const action of actions[i]!) start.apply(action);
        out.set(version, start.totals());
      });
    }
  }
  return out;
}

async function stateAt(store: ObjectStore, version: number): Promise<RunningTotals | null> {
  try {
    return RunningTotals.of((await loadSnapshot(store, version)).adds);
  } catch (error) {
    if (error instanceof CorruptFileError || error instanceof UnsupportedFeatureError) return null;
    throw error;
  }
}

function consecutiveRuns(versions: number[]): number[][] {
  const sorted = [...new Set(versions)].sort((a, b) => a - b);
  const runs: number[][] = [];
  for (const version of sorted) {
    const run = runs.at(-1);
    if (run && run.at(-1)! + 1 === version) run.push(version);
    else runs.push([version]);
  }
  return runs;
}
