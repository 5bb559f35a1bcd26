/**
 * Delta Lake behind the format-neutral TableFormat interface (lib/formats/table-format.ts).
 *
 * Versions are the commits `_delta_log/{v:020}.json` from which the table can be rebuilt (from
 * commit 0, or from a complete checkpoint at or below them); a version's snapshot is the replay of
 * the newest complete checkpoint at or below it plus the commits after it (snapshot.ts), checked
 * against the features lakewarden supports (protocol.ts).
 *
 * What a version references, for cleanup: the commits and the checkpoint (with its sidecars) it
 * replays from, its own `.crc`, its live data files and their deletion-vector files, and the
 * change-data files its own commit wrote. Everything under `_delta_log/` that is not a commit,
 * checkpoint, `.crc` or sidecar (`_last_checkpoint`, compaction files, `_autostats/`, Hadoop side
 * files), and every path Delta's VACUUM treats as hidden, is the format's own and never a candidate.
 *
 * Cleanup is admitted (admit) only when lakewarden supports every reader and writer feature of
 * the latest version's protocol; otherwise it is refused (UnsupportedFeatureError) before anything
 * is planned, dry run included: no file is deleted.
 *
 * What cleanup removes is Delta's own rules, planned by planRemoval (removal.ts) on the
 * pipeline's listing: VACUUM by tombstones, log cleanup below a kept checkpoint, and
 * checkpointProtection. The table's `delta.logRetentionDuration` and
 * `delta.deletedFileRetentionDuration` are the policy's defaults (declaredRetention), so a flag
 * or a `lakewarden.*` key can still say otherwise.
 */
import type { ObjectInfo, ObjectStore } from "../../store/object-store.ts";
import { ADMITTED } from "../table-format.ts";
import type { Admission, CleanupView, DeclaredRetention, FileReference, FileRole, TableFormat, TableSnapshot, UnresolvedReference, VersionFile } from "../table-format.ts";
import { NO_REFS } from "../../model/refs.ts";
import type { VersionRecord } from "../../model/version-record.ts";
import { numberedVersionIdentity } from "../../model/version-record.ts";
import type { AddAction, CdcAction, DeltaAction } from "./actions.ts";
import { commitTimestamp, timestampPolicy } from "./commit-timestamps.ts";
import type { TimestampPolicy } from "./commit-timestamps.ts";
import { readParquetFooter } from "./data-file-footer.ts";
import { deletionVectorKey, deltaLiveFiles, deltaSchemaFields, deltaSections, deltaTotals } from "./head-state.ts";
import { latestVersionFile, startDeltaLookup, toVersionFile } from "./latest-lookup.ts";
import { listLog } from "./log-listing.ts";
import type { LogListing } from "./log-listing.ts";
import { LOG_PREFIX, SIDECARS_PREFIX, commitKey, parseLogKey } from "./log-names.ts";
import { resolveDeltaPath } from "./paths.ts";
import { proveDeltaFile } from "./prove-file.ts";
import { planDeltaRemoval } from "./removal.ts";
import { cleanupRefusal } from "./protocol.ts";
import { defineFormat } from "../define-format.ts";
import { commitInfoOf, loadSnapshot, readCommitActions, sharedSnapshot } from "./snapshot.ts";
import type { DeltaSnapshot } from "./snapshot.ts";
import { cleanupProperties } from "./table-properties.ts";
import { isHiddenFromVacuum } from "./vacuum.ts";
import { flattenParameters, numericMetrics, summarizeCommit, versionTotals } from "./versions.ts";
import type { DeltaTotals } from "./head-state.ts";
import { mapConcurrent } from "../../store/map-concurrent.ts";
import { formatsWrittenAlongside } from "./uniform.ts";
import { scannedState } from "./scan-replay.ts";
import { deltaScanFiles } from "./scan-file-view.ts";

export const DELTA_LOG_PREFIX = LOG_PREFIX;

/** Complete checkpoints whose own commit is listed: the points a replay can start from. */
function replayStarts(listing: LogListing): number[] {
  return [...new Set(listing.checkpoints.filter((c) => c.complete).map((c) => c.version))].sort((a, b) => a - b);
}

/** Versions that can be rebuilt: every commit at or above the first replay start (commit 0, or the oldest complete checkpoint). */
function rebuildableCommits(listing: LogListing): [number, ObjectInfo][] {
  const commits = [...listing.commits.entries()].sort((a, b) => a[0] - b[0]);
  if (listing.commits.has(0)) return commits;
  const first = replayStarts(listing)[0];
  return first === undefined ? [] : commits.filter(([v]) => v >= first);
}

async function listVersionFiles(store: ObjectStore): Promise<VersionFile[]> {
  const listing = await listLog(store);
  return rebuildableCommits(listing).map(([version, info]) => toVersionFile(info, version));
}

async function findVersionFile(store: ObjectStore, version: number): Promise<VersionFile> {
  const info = await store.head(commitKey(version));
  return toVersionFile(info, version);
}

/** One LIST: a page of `_delta_log/` holding a commit (hidden side files sort before commits). */
async function detect(store: ObjectStore): Promise<boolean> {
  let listed = 0;
  for await (const object of store.list(LOG_PREFIX, { delimiter: "/", maxKeys: 1000 })) {
    listed++;
    if (parseLogKey(object.key)?.kind === "commit") return true;
  }
  return listed === 1000 ? (await latestVersionFile(store)) !== null : false;
}

/** A bucket key `{root}/_delta_log/{v:020}.json`: its table root (`""` for a table at the bucket's root). */
function tableRootOfCommitKey(key: string): string | null {
  const at = key.lastIndexOf(`/${LOG_PREFIX}`);
  if (at === -1 && !key.startsWith(LOG_PREFIX)) return null;
  const logKey = at === -1 ? key : key.slice(at + 1);
  return parseLogKey(logKey)?.kind === "commit" ? (at === -1 ? "" : key.slice(0, at)) : null;
}

function parseVersionKey(key: string): number | null {
  const parsed = parseLogKey(key);
  return parsed?.kind === "commit" ? parsed.version : null;
}

function resolver(store: ObjectStore): (path: string) => ReturnType<typeof resolveDeltaPath> {
  return (path) => resolveDeltaPath(path, [store.uri]);
}

/** What a version's record and references are made of: a snapshot, or a scan's replayed state (scan-replay.ts). */
type VersionState = Pick<DeltaSnapshot, "version" | "protocol" | "metadata" | "adds" | "checkpoint" | "replayedCommits" | "commitInfo" | "commitFile" | "listing">;

function toVersionRecord(snapshot: VersionState, uri: string): VersionRecord {
  const info = snapshot.commitInfo;
  const { millis } = commitTimestamp(timestampPolicy(snapshot.protocol, snapshot.metadata), snapshot.version, info, snapshot.commitFile.lastModified, uri);
  return {
    version: snapshot.version,
    timestamp_millis: millis,
    ...deltaTotals(snapshot),
    is_tagged: false,
    is_cleaned_up: false,
    transaction_uuid: typeof info?.txnId === "string" ? info.txnId : null,
    read_version: typeof info?.readVersion === "number" ? info.readVersion : null,
    operation_type: typeof info?.operation === "string" ? info.operation : null,
    transaction_properties: flattenParameters(info?.operationParameters),
    ...numberedVersionIdentity(snapshot.version, snapshot.version > 0 ? snapshot.version - 1 : null),
    metrics: numericMetrics(info?.operationMetrics),
  };
}

interface References {
  files: FileReference[];
  unresolved: UnresolvedReference[];
}

/** `ownActions`: version N's own commit, when the caller has it. */
async function referencesOf(store: ObjectStore, snapshot: VersionState, ownActions?: readonly DeltaAction[]): Promise<References> {
  const resolve = resolver(store);
  const files: FileReference[] = [];
  const unresolved: UnresolvedReference[] = [];
  const seen = new Set<string>();
  const add = (path: string, role: FileRole, size?: number) => {
    if (seen.has(path)) return;
    seen.add(path);
    files.push(size === undefined ? { path, role } : { path, role, size });
  };
  const listing = snapshot.listing;
  const commit = (v: number) => {
    const info = listing.commits.get(v);
    if (info) add(info.key, "commit", info.size);
  };
  for (const v of snapshot.replayedCommits) commit(v);
  commit(snapshot.version);
  if (snapshot.checkpoint) {
    for (const key of snapshot.checkpoint.files) add(key, "checkpoint");
    for (const key of snapshot.checkpoint.sidecars) add(key, "sidecar");
  }
  const crc = listing.crcs.get(snapshot.version);
  if (crc) add(crc.key, "statistics", crc.size);

  const reference = (path: string, role: FileRole, size?: number) => {
    const resolved = resolve(path);
    if (resolved.kind === "key") add(resolved.key, role, size);
    else unresolved.push({ path, kind: resolved.kind, reason: resolved.reason });
  };
  const withDv = (action: AddAction) => {
    reference(action.path, "data", action.size);
    const dv = deletionVectorKey(action, resolve);
    if (dv.key) add(dv.key, "delete");
    if (dv.unresolved) unresolved.push(dv.unresolved);
  };
  for (const action of snapshot.adds) withDv(action);
  // Change-data files are named only by the commit that wrote them.
  const own = ownActions ?? (await readCommitActions(store, snapshot.version, snapshot.commitFile));
  for (const action of own) if ("cdc" in action) reference((action.cdc as CdcAction).path, "change-data", (action.cdc as CdcAction).size);
  return { files, unresolved };
}

async function readSnapshot(store: ObjectStore, file: VersionFile): Promise<TableSnapshot> {
  const snapshot = await loadSnapshot(store, file.version);
  const uri = store.uriOf(file.key);
  const resolve = resolver(store);
  const references = await referencesOf(store, snapshot);
  const live = deltaLiveFiles(snapshot, resolve);
  const raw = (await store.get(snapshot.commitFile.key)).body;
  return {
    record: toVersionRecord(snapshot, uri),
    referencedFiles: references.files,
    unresolvedReferences: references.unresolved,
    liveFiles: live.liveFiles,
    schema: deltaSchemaFields(snapshot.metadata.schemaString),
    config: { ...snapshot.metadata.configuration },
    raw,
    versionFile: file,
    sections: deltaSections(snapshot, resolve),
  };
}

const UNKNOWN_TOTALS: DeltaTotalsOrUnknown = {
  total_fragments: null,
  total_data_files: null,
  total_files_size: null,
  total_deletion_files: null,
  total_data_file_rows: null,
  total_deletion_file_rows: null,
  total_rows: null,
};

type DeltaTotalsOrUnknown = { [K in keyof DeltaTotals]: DeltaTotals[K] | null };

function objectInfoOf(file: VersionFile): ObjectInfo {
  return { key: file.key, size: file.size, etag: file.etag, lastModified: file.lastModified };
}

/**
 * A version's record for history from its commit file alone (one GET; the log is not replayed
 * for each version, which made a long log without a checkpoint quadratic). The timestamp rule
 * comes from the latest state, read once per store and minute. Alone, a version's totals would
 * need a replay of its own, so they are null here; readRecords gives many versions with totals
 * from one replay.
 */
async function readRecord(store: ObjectStore, file: VersionFile): Promise<VersionRecord> {
  return recordOf(store, file, await timestampPolicyOf(store), UNKNOWN_TOTALS);
}

/**
 * Many versions' records with their totals (files, size, rows): one replay over the versions
 * asked for (versionTotals), reading each commit once, and the checkpoint under the first.
 */
async function readRecords(store: ObjectStore, files: readonly VersionFile[]): Promise<VersionRecord[]> {
  const policy = await timestampPolicyOf(store);
  const totals = await versionTotals(store, new Map(files.map((file) => [file.version, objectInfoOf(file)])));
  return mapConcurrent([...files], RECORD_CONCURRENCY, (file) => recordOf(store, file, policy, totals.get(file.version) ?? UNKNOWN_TOTALS));
}

const RECORD_CONCURRENCY = 16;

async function recordOf(store: ObjectStore, file: VersionFile, policy: TimestampPolicy, totals: DeltaTotalsOrUnknown): Promise<VersionRecord> {
  const info = objectInfoOf(file);
  const actions = await readCommitActions(store, file.version, info);
  const summary = summarizeCommit(file.version, commitInfoOf(actions), info, policy, store.uriOf(file.key));
  return {
    version: file.version,
    timestamp_millis: summary.timestampMillis,
    ...totals,
    is_tagged: false,
    is_cleaned_up: false,
    transaction_uuid: summary.txnId,
    read_version: summary.readVersion,
    operation_type: summary.operation,
    transaction_properties: summary.operationParameters,
    ...numberedVersionIdentity(file.version, file.version > 0 ? file.version - 1 : null),
    metrics: summary.metrics,
  };
}

const POLICY_TTL_MS = 60_000;
const policies = new WeakMap<ObjectStore, { at: number; policy: Promise<TimestampPolicy> }>();
function timestampPolicyOf(store: ObjectStore): Promise<TimestampPolicy> {
  const cached = policies.get(store);
  if (cached && Date.now() - cached.at < POLICY_TTL_MS) return cached.policy;
  const policy = loadSnapshot(store).then((latest) => timestampPolicy(latest.protocol, latest.metadata));
  policy.catch(() => policies.delete(store));
  policies.set(store, { at: Date.now(), policy });
  return policy;
}

/**
 * The cleanup view: the files this version needs (its log files, live data and their deletion
 * vectors, the change data its own commit wrote). What VACUUM keeps beyond them (unexpired
 * tombstones) and checkpointProtection are planRemoval's (removal.ts), from the latest state.
 */
async function readForCleanup(store: ObjectStore, file: VersionFile, scan?: object): Promise<CleanupView> {
  // A scan's versions replay one after the other; a version alone, or one the replay leaves out, loads its snapshot.
  const scanned = scan ? await scannedState(store, file, scan) : null;
  const snapshot = scanned ?? (await loadSnapshot(store, file.version));
  const references = await referencesOf(store, snapshot, scanned?.ownActions);
  return {
    record: toVersionRecord(snapshot, store.uriOf(file.key)),
    referencedFiles: references.files,
    unresolvedReferences: references.unresolved,
    config: { ...snapshot.metadata.configuration },
  };
}

/**
 * Deleting files needs the writer protocol too, for every table (vacuumProtocolCheck's rule): an
 * unknown writer feature may protect files lakewarden would otherwise delete. Older versions'
 * protocols are log cleanup's (checkpointProtection: removal.ts, log-cleanup.ts).
 */
async function admit(store: ObjectStore, base: VersionFile): Promise<Admission> {
  // The removal plan asks for the same snapshot (sharedSnapshot): it is loaded once.
  const refusal = cleanupRefusal((await sharedSnapshot(store, base)).protocol, store.uri);
  return refusal ? { admitted: false, refusal } : ADMITTED;
}

function declaredRetention(config: Record<string, string>, uri: string): DeclaredRetention {
  // Protocol-independent properties only (checkpointProtection's V is planRemoval's).
  const properties = cleanupProperties(
    { minReaderVersion: 1, minWriterVersion: 2 },
    { id: "", format: { provider: "parquet" }, schemaString: null, partitionColumns: [], configuration: config },
    uri,
  );
  const declared: DeclaredRetention = {
    olderThanMs: properties.logRetentionMs,
    safetyWindowMs: properties.deletedFileRetentionMs,
    sources: {
      olderThanMs: properties.declared.logRetentionMs ?? "delta.logRetentionDuration (Delta's default)",
      safetyWindowMs: properties.declared.deletedFileRetentionMs ?? "delta.deletedFileRetentionDuration (Delta's default)",
    },
  };
  // delta.enableExpiredLogCleanup = false is log cleanup's own rule (planRemoval keeps every log
  // file then); declared as a retain count it would also keep every version's data from VACUUM.
  return declared;
}

function classify(key: string): FileRole | null {
  const parsed = parseLogKey(key);
  if (parsed) {
    if (parsed.kind === "commit") return "commit";
    if (parsed.kind === "checkpoint") return "checkpoint";
    if (parsed.kind === "crc") return "statistics";
    return null;
  }
  if (key.startsWith(SIDECARS_PREFIX)) return key.slice(SIDECARS_PREFIX.length).includes("/") ? null : "sidecar";
  if (key.startsWith(LOG_PREFIX)) return null;
  if (key.startsWith("_change_data/")) return "change-data";
  const name = key.slice(key.lastIndexOf("/") + 1);
  if (/^deletion_vector_[0-9a-f-]{36}\.bin$/.test(name)) return "delete";
  return "data";
}

/**
 * The format's own files, never candidates and never reported: under `_delta_log/`, everything
 * but commits, checkpoints, `.crc` files and sidecars; elsewhere, every path with a component VACUUM
 * treats as hidden (names starting `_` or `.`, except `_change_data` and `_delta_index`; without
 * the partition columns at hand, a `_col=value` partition folder counts as hidden too, so its
 * orphans are kept rather than guessed at).
 */
function isBookkeepingFile(key: string): boolean {
  if (key.startsWith(LOG_PREFIX)) {
    const parsed = parseLogKey(key);
    if (parsed) return parsed.kind === "compaction";
    if (key.startsWith(SIDECARS_PREFIX)) return key.slice(SIDECARS_PREFIX.length).includes("/");
    return true;
  }
  return isHiddenFromVacuum(key, []);
}

export const deltaFormat: TableFormat = defineFormat({
  name: "delta",
  versionsPrefix: LOG_PREFIX,
  commitPatterns: [{ prefix: LOG_PREFIX, suffix: ".json" }],
  // Data files live anywhere under the root (partition folders): the whole root is listed, and
  // isBookkeepingFile keeps the log's own files and hidden paths out.
  managedPrefixes: [""],
  // VACUUM by tombstones, log cleanup below a kept checkpoint and checkpointProtection, planned from the listing.
  removal: { kind: "format-plan", planRemoval: planDeltaRemoval },
  detect,
  tableRootOfCommitKey,
  parseVersionKey,
  branchAt: async () => null,
  formatsWrittenAlongside,
  listVersionFiles,
  latestVersionFile,
  startLatestLookup: startDeltaLookup,
  findVersionFile,
  isBookkeepingFile,
  readSnapshot,
  readRecord,
  readRecords,
  readForCleanup,
  readRefs: async () => NO_REFS,
  admit,
  declaredRetention,
  proveFile: proveDeltaFile,
  classify,
  scanFiles: deltaScanFiles,
  readDataFileFooter: readParquetFooter,
  // Loaded on first use: the Lambdas that clean tables never read rows.
  readRows: async (store, snapshot, file, columns) => (await import("./scan-rows.ts")).readDeltaRows(store, snapshot, file, columns),
});
