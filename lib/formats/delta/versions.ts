/**
 * One summary per commit in `_delta_log/`: version, timestamp (in-commit timestamp where enabled,
 * else the commit file's modification time), and the commit's provenance (commitInfo: operation,
 * operation parameters as strings, read version, operation metrics as numbers, txnId).
 * The log's current protocol and metadata decide the timestamp rule, so the latest snapshot is
 * read first (and its protocol checked).
 */
import type { ObjectInfo, ObjectStore } from "../../store/object-store.ts";
import { mapConcurrent } from "../../store/map-concurrent.ts";
import type { CommitInfoAction } from "./actions.ts";
import { commitTimestamp, timestampPolicy } from "./commit-timestamps.ts";
import type { TimestampPolicy, TimestampSource } from "./commit-timestamps.ts";
import { listLog } from "./log-listing.ts";
import type { LogListing } from "./log-listing.ts";
import { commitInfoOf, loadSnapshot, readCommitActions } from "./snapshot.ts";

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
