/**
 * Snapshot expiry for tables without a catalog (spec "Snapshot Retention Policy", iceberg-java
 * RemoveSnapshots, iceberg.md §5). The cleanup pipeline uses planExpiry (through the format's
 * removal.rules) and writeExpiryCommit (through removal.commit); the tests' standalone runner
 * (test/formats/iceberg/standalone-runners.ts) does all four steps alone. Expiring is a metadata commit:
 *   1. plan (pure): drop non-main refs older than their max-ref-age-ms (or whose snapshot is
 *      gone); keep every remaining ref's snapshot; per branch keep ancestors while fewer than
 *      min-snapshots-to-keep are kept or they are newer than now - max-snapshot-age-ms (ref
 *      values override the table's `history.expire.*`); keep snapshots no ref reaches that are
 *      newer than the table cutoff; expire the rest;
 *   2. build the next metadata (pure): the same document without the expired snapshots, their
 *      statistics and the dropped refs, the snapshot log trimmed as Java trims it, the current
 *      file appended to the metadata log (bounded by write.metadata.previous-versions-max);
 *   3. commit: write it create-only (If-None-Match) as `v<N+1>.metadata.json`, then the version
 *      hint where the table has one;
 *   4. only after the commit, delete what the old metadata reached and the new one does not
 *      (reachable-set difference; metadata JSON files are never deleted by expiry).
 * Unresolvable paths in either metadata stop the run before the commit.
 */
import { gzipSync } from "node:zlib";
import { TableFormatError, UnresolvableReferenceError, UnsupportedFeatureError, MaintenanceOptOutError } from "../errors.ts";
import { stringifyJsonLossless, type JsonValue } from "./lossless-json.ts";
import { METADATA_PREFIX, nextHadoopMetadataKey, parseMetadataKey, VERSION_HINT_KEY } from "./metadata-names.ts";
import { reachableFiles, type Reachable } from "./reachable.ts";
import { formatMs, type TableRetention } from "./retention.ts";
import { IcebergFileReader } from "./snapshot-files.ts";
import { decodeTableMetadata, type IcebergTableMetadata, type JsonObject } from "./table-metadata.ts";
import type { IcebergTable } from "./table-state.ts";
import { ancestry } from "./versions.ts";

export interface ExpiryPlan {
  retain: Set<string>;
  /** Snapshot ids to expire, in metadata order. */
  expire: string[];
  /** Non-main refs dropped for age or a missing snapshot. */
  dropRefs: string[];
  /** Why each dropped ref is dropped, by name. */
  refReasons: Map<string, string>;
  /** Why each snapshot is retained or expires, by snapshot id (the first rule that decided it). */
  why: Map<string, SnapshotVerdict>;
}

/** How a rule keeps a snapshot: as a ref's head, or as a branch ancestor (main's or another's), or unreferenced but young. */
export type RetainedBy = "main" | "tag" | "branch" | "main-history" | "branch-history" | "young";

export interface SnapshotVerdict {
  retainedBy: RetainedBy | null;
  reason: string;
}

export interface ExpiryOverrides {
  /** Expire snapshots older than this instant, epoch ms (replaces now - max-snapshot-age-ms). */
  expireOlderThanMs?: number;
  /** Keep at least this many ancestors per branch (replaces min-snapshots-to-keep). */
  retainLast?: number;
}

/** A retention setting as the reasons say it: value and where it came from. */
function setting(name: string, value: number, source: string, unit: "ms" | "count"): string {
  return `${name} ${unit === "ms" ? formatMs(value) : value} (${source})`;
}

/**
 * The spec's retention rules, as iceberg-java's RemoveSnapshots applies them: non-main refs older
 * than their max-ref-age-ms (or naming a missing snapshot) are dropped; every remaining ref's
 * snapshot is kept; each remaining branch keeps its ancestors, newest first, while fewer than
 * min-snapshots-to-keep are kept or they are no older than max-snapshot-age-ms (the ref's values,
 * else the table's `history.expire.*`, else the defaults), stopping at the first that fails both;
 * snapshots on no remaining ref's history are kept when no older than the table's cutoff.
 */
export function planExpiry(metadata: IcebergTableMetadata, nowMs: number, retention: TableRetention, overrides: ExpiryOverrides = {}): ExpiryPlan {
  const byId = new Map(metadata.snapshots.map((s) => [s.id, s]));
  const tableAge =
    overrides.expireOlderThanMs !== undefined
      ? { cutoff: overrides.expireOlderThanMs, text: `older than ${new Date(overrides.expireOlderThanMs).toISOString()} (override)` }
      : {
          cutoff: nowMs - retention.maxSnapshotAgeMs,
          text: setting("max-snapshot-age-ms", retention.maxSnapshotAgeMs, retention.sources.maxSnapshotAgeMs ?? "Iceberg default", "ms"),
        };
  const tableMinKeep =
    overrides.retainLast !== undefined
      ? { count: overrides.retainLast, text: `min-snapshots-to-keep ${overrides.retainLast} (override)` }
      : {
          count: retention.minSnapshotsToKeep,
          text: setting("min-snapshots-to-keep", retention.minSnapshotsToKeep, retention.sources.minSnapshotsToKeep ?? "Iceberg default", "count"),
        };
  const dropRefs: string[] = [];
  const dropped = new Map<string, string>();
  const refs = [...metadata.refs]
    .sort((a, b) => (a.name === "main" ? -1 : b.name === "main" ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .filter((ref) => {
      if (ref.name === "main") return true;
      const snapshot = byId.get(ref.snapshotId);
      const maxAge = ref.maxRefAgeMs ?? retention.maxRefAgeMs;
      if (!snapshot || nowMs - snapshot.timestampMs > maxAge) {
        dropRefs.push(ref.name);
        const source = ref.maxRefAgeMs !== null ? `ref "${ref.name}"` : (retention.sources.maxRefAgeMs ?? "Iceberg default");
        dropped.set(ref.name, snapshot ? `its snapshot is older than ${setting("max-ref-age-ms", maxAge, source, "ms")}` : "it names a missing snapshot");
        return false;
      }
      return true;
    });
  dropRefs.sort();

  const why = new Map<string, SnapshotVerdict>();
  const keep = (id: string, retainedBy: RetainedBy, reason: string): void => {
    if (!why.has(id)) why.set(id, { retainedBy, reason });
  };
  for (const ref of refs) {
    if (!byId.has(ref.snapshotId)) continue;
    if (ref.type === "tag") keep(ref.snapshotId, "tag", `tagged "${ref.name}"`);
    else keep(ref.snapshotId, ref.name === "main" ? "main" : "branch", `head of branch "${ref.name}"`);
  }
  /** Why each snapshot a branch walk passed over was not kept by it (the first branch that saw it). */
  const passedOver = new Map<string, string>();
  for (const ref of refs) {
    if (ref.type !== "branch") continue;
    const age =
      ref.maxSnapshotAgeMs !== null ? { cutoff: nowMs - ref.maxSnapshotAgeMs, text: setting("max-snapshot-age-ms", ref.maxSnapshotAgeMs, `ref "${ref.name}"`, "ms") } : tableAge;
    const minKeep =
      ref.minSnapshotsToKeep !== null
        ? { count: ref.minSnapshotsToKeep, text: setting("min-snapshots-to-keep", ref.minSnapshotsToKeep, `ref "${ref.name}"`, "count") }
        : tableMinKeep;
    const history: RetainedBy = ref.name === "main" ? "main-history" : "branch-history";
    let kept = 0;
    let stopped = false;
    for (const id of ancestry(metadata, ref.snapshotId)) {
      const committed = new Date(byId.get(id)!.timestampMs).toISOString();
      if (!stopped && kept < minKeep.count) {
        keep(id, history, `on branch "${ref.name}": among its newest ${minKeep.count} (${minKeep.text})`);
        kept++;
      } else if (!stopped && byId.get(id)!.timestampMs >= age.cutoff) {
        keep(id, history, `on branch "${ref.name}": committed ${committed}, within ${age.text}`);
        kept++;
      } else {
        stopped = true;
        if (!passedOver.has(id)) passedOver.set(id, `on branch "${ref.name}", older than its ${age.text} and beyond its ${minKeep.text}`);
      }
    }
  }
  const referenced = new Set<string>();
  for (const ref of refs) for (const id of ref.type === "branch" ? ancestry(metadata, ref.snapshotId) : [ref.snapshotId]) referenced.add(id);
  for (const snapshot of metadata.snapshots) {
    if (!referenced.has(snapshot.id) && snapshot.timestampMs >= tableAge.cutoff) {
      keep(snapshot.id, "young", `on no ref's history, committed ${new Date(snapshot.timestampMs).toISOString()}, within ${tableAge.text}`);
    }
  }
  // What expires, and why: passed over by a branch, left by an expired ref, or on no ref's history and old.
  const droppedReach = new Map<string, string>();
  for (const ref of metadata.refs) {
    const reason = dropped.get(ref.name);
    if (reason === undefined) continue;
    for (const id of ref.type === "branch" ? ancestry(metadata, ref.snapshotId) : [ref.snapshotId])
      if (!droppedReach.has(id)) droppedReach.set(id, `${ref.type} "${ref.name}" expired: ${reason}`);
  }
  for (const snapshot of metadata.snapshots) {
    if (why.has(snapshot.id)) continue;
    const reason =
      passedOver.get(snapshot.id) ??
      (droppedReach.has(snapshot.id) ? `${droppedReach.get(snapshot.id)!}, and no other ref keeps it` : `on no ref's history, older than ${tableAge.text}`);
    why.set(snapshot.id, { retainedBy: null, reason: `expires by the table's snapshot retention: ${reason}` });
  }
  const retain = new Set([...why].filter(([, v]) => v.retainedBy !== null).map(([id]) => id));
  return { retain, expire: metadata.snapshots.filter((s) => !retain.has(s.id)).map((s) => s.id), dropRefs, refReasons: dropped, why };
}

/** The metadata path of a file name the way this table writes them (its metadata log's folder, else `<location>/metadata/`). */
export function metadataPathOf(metadata: IcebergTableMetadata, name: string): string {
  const last = metadata.metadataLog.at(-1)?.file;
  if (last !== undefined && last.includes("/")) return `${last.slice(0, last.lastIndexOf("/"))}/${name}`;
  return `${metadata.location.replace(/\/+$/, "")}/${METADATA_PREFIX}${name}`;
}

/**
 * The next metadata document: `metadata` without `expire`d snapshots and `dropRefs`. Throws
 * when asked to expire a snapshot a kept ref points at. `currentKey` is the file being replaced.
 */
export function buildExpiredMetadata(
  metadata: IcebergTableMetadata,
  currentKey: string,
  plan: Pick<ExpiryPlan, "expire" | "dropRefs">,
  nowMs: number,
  previousVersionsMax: number,
  uri: string,
): JsonObject {
  const expired = new Set(plan.expire);
  const dropped = new Set(plan.dropRefs);
  for (const ref of metadata.refs) {
    if (!dropped.has(ref.name) && expired.has(ref.snapshotId)) {
      throw new TableFormatError(uri, `cannot expire snapshot ${ref.snapshotId}: ${ref.type} "${ref.name}" points at it`);
    }
  }
  const json: JsonObject = { ...metadata.json };
  const idOf = (value: JsonValue | undefined): string | null => (typeof value === "bigint" || typeof value === "number" ? String(value) : null);

  if (Array.isArray(json.snapshots)) {
    json.snapshots = json.snapshots.filter((s) => !expired.has(idOf((s as JsonObject)["snapshot-id"]) ?? ""));
  }
  if (json.refs && typeof json.refs === "object" && !Array.isArray(json.refs)) {
    json.refs = Object.fromEntries(Object.entries(json.refs).filter(([name]) => !dropped.has(name)));
  }
  for (const field of ["statistics", "partition-statistics"]) {
    const list = json[field];
    if (Array.isArray(list)) json[field] = list.filter((s) => !expired.has(idOf((s as JsonObject)["snapshot-id"]) ?? ""));
  }
  // Java (TableMetadata.Builder): drop every snapshot-log entry up to the last one whose snapshot is gone.
  if (Array.isArray(json["snapshot-log"])) {
    const log = json["snapshot-log"] as JsonObject[];
    const remaining = new Set(metadata.snapshots.filter((s) => !expired.has(s.id)).map((s) => s.id));
    let lastGone = -1;
    log.forEach((entry, i) => {
      if (!remaining.has(idOf(entry["snapshot-id"]) ?? "")) lastGone = i;
    });
    json["snapshot-log"] = log.slice(lastGone + 1);
  }
  const name = currentKey.slice(currentKey.lastIndexOf("/") + 1);
  const metadataLog = [...(Array.isArray(json["metadata-log"]) ? (json["metadata-log"] as JsonValue[]) : [])];
  metadataLog.push({ "timestamp-ms": metadata.lastUpdatedMs, "metadata-file": metadataPathOf(metadata, name) });
  json["metadata-log"] = metadataLog.slice(Math.max(0, metadataLog.length - previousVersionsMax));
  json["last-updated-ms"] = nowMs;
  return json;
}

/** Stops an expiry before anything is written when metadata names a path that cannot be resolved. */
export function blockOn(reachable: Reachable, uri: string, when: string): void {
  const blocking = reachable.unresolved.find((u) => u.kind === "unresolvable");
  if (blocking) throw new UnresolvableReferenceError(uri, `snapshot expiry refused ${when}: ${blocking.path} cannot be resolved (${blocking.reason}); nothing written or deleted`);
}

/**
 * The commit alone: checks, builds and writes `v<N+1>.metadata.json` create-only (then the
 * version hint where the table has one). Returns the key written (null on a dry run) and the
 * keys the old metadata reached that the new one does not, for the caller to delete after.
 * `reader`: the manifests' reader to ask (default: a new one, which reads each of them again).
 */
export async function writeExpiryCommit(
  table: IcebergTable,
  plan: Pick<ExpiryPlan, "expire" | "dropRefs">,
  now: Date,
  retention: TableRetention,
  options: { dryRun: boolean; reader?: IcebergFileReader },
): Promise<{ key: string | null; toDelete: string[] }> {
  const { store } = table;
  const { metadata } = table.read;
  const uri = store.uriOf(table.metadataKey);
  if (table.read.file.name.naming === "other") {
    throw new UnsupportedFeatureError(
      uri,
      "the current metadata file's name has no version number, so the next commit has no name in this table's scheme: lakewarden does not expire snapshots here",
    );
  }
  if (table.read.file.name.naming !== "hadoop") {
    throw new UnsupportedFeatureError(
      uri,
      "metadata files named NNNNN-uuid belong to a catalog, which owns the current pointer: snapshots expire only through that catalog's commit (--glue-table, or --catalog with --catalog-table); nothing written",
    );
  }
  if (!retention.gcEnabled) {
    throw new MaintenanceOptOutError(uri, "gc.enabled is false: expiring snapshots would orphan files the table forbids deleting; nothing written");
  }
  const next = buildExpiredMetadata(metadata, table.metadataKey, plan, now.getTime(), retention.previousVersionsMax, uri);
  const nextKey = nextHadoopMetadataKey(table.read.file.name);
  const nextMetadata = decodeTableMetadata(next, store.uriOf(nextKey));

  // Manifests never change once written: a reader that decoded them this run (cleanup's scan) is not asked twice.
  const reader = options.reader ?? new IcebergFileReader(store);
  const hasHint = table.versionHint !== null;
  const before = await reachableFiles(reader, metadata, table.metadataKey, table.resolve, hasHint);
  const after = await reachableFiles(reader, nextMetadata, nextKey, table.resolve, hasHint);
  blockOn(before, store.uri, "on the current metadata");
  blockOn(after, store.uri, "on the new metadata");
  const toDelete = [...before.keys.keys()].filter((key) => !after.keys.has(key) && !parseMetadataKey(key) && key !== VERSION_HINT_KEY).sort();
  if (options.dryRun) return { key: null, toDelete };

  const bytes = new TextEncoder().encode(stringifyJsonLossless(next, 2));
  await store.put(nextKey, table.read.file.name.gzip ? gzipSync(bytes) : bytes, { ifNoneMatch: "*", contentType: "application/json" });
  if (hasHint) await store.put(VERSION_HINT_KEY, new TextEncoder().encode(String(table.read.file.name.sequence + 1)));
  return { key: nextKey, toDelete };
}
