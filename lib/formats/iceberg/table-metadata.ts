/**
 * The table metadata JSON (spec "Table Metadata Fields"), decoded into what lakewarden needs,
 * with every snapshot id as exact text. `json` keeps the whole document as parsed (losslessly),
 * so an expiry commit rewrites only the fields it changes and keeps the rest as the writer left it.
 */
import { CorruptFileError, UnsupportedFeatureError } from "../errors.ts";
import { integerText, parseJsonLossless, type JsonValue } from "./lossless-json.ts";

export type JsonObject = { [key: string]: JsonValue };

export interface IcebergSnapshot {
  /** Snapshot id, exact decimal text. */
  id: string;
  parentId: string | null;
  /** 0 where the writer recorded none (format v1) or wrote 0. */
  sequenceNumber: number;
  timestampMs: number;
  /** The manifest list's path as written; null for a v1 snapshot that lists manifests inline. */
  manifestList: string | null;
  /** v1 only: manifest paths listed inline in the snapshot. */
  manifests: string[];
  summary: Record<string, string>;
  schemaId: number | null;
}

export interface IcebergRef {
  name: string;
  snapshotId: string;
  type: "branch" | "tag";
  maxRefAgeMs: number | null;
  maxSnapshotAgeMs: number | null;
  minSnapshotsToKeep: number | null;
}

export interface IcebergStatisticsFile {
  snapshotId: string;
  path: string;
  size: number | null;
  kind: "statistics" | "partition-statistics";
}

export interface IcebergTableMetadata {
  formatVersion: number;
  tableUuid: string | null;
  /** The table's location as written (a URI, or a relative path some engines write). */
  location: string;
  lastSequenceNumber: number;
  lastUpdatedMs: number;
  properties: Record<string, string>;
  /** Null for a table without a current snapshot (Java writes -1 for none in v1/v2). */
  currentSnapshotId: string | null;
  snapshots: IcebergSnapshot[];
  /** Every ref; `main` is implied by `current-snapshot-id` when the writer wrote no `refs`. */
  refs: IcebergRef[];
  snapshotLog: { snapshotId: string; timestampMs: number }[];
  /** Previous metadata files (not the current one), oldest first, paths as written. */
  metadataLog: { file: string; timestampMs: number }[];
  statistics: IcebergStatisticsFile[];
  /** The whole document as parsed, big integers as bigint. */
  json: JsonObject;
}

function isObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A number field as a JavaScript number (for ages, counts, timestamps): bigints beyond 2^53 are approximated. */
function numberOf(value: JsonValue | undefined): number | null {
  if (typeof value === "number") return value;
  if (typeof value === "bigint") return Number(value);
  return null;
}

/**
 * A ref's retention setting: absent (null) or a whole number > 0, as iceberg-java's
 * SnapshotRefParser requires. Anything else is refused, not read as absent: the table's defaults
 * would then expire snapshots the ref was set to keep.
 */
function refRetention(name: string, ref: JsonObject, key: string, bad: (problem: string) => never): number | null {
  const value = ref[key];
  if (value === undefined || value === null) return null;
  const n = typeof value === "bigint" ? Number(value) : value;
  if (typeof n === "number" && Number.isInteger(n) && n > 0) return n;
  return bad(`ref "${name}" has "${key}" ${typeof value === "bigint" ? String(value) : JSON.stringify(value)}, not a whole number > 0`);
}

function stringMap(value: JsonValue | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!isObject(value)) return out;
  for (const [k, v] of Object.entries(value)) {
    if (typeof v === "string") out[k] = v;
    else if (typeof v === "number" || typeof v === "bigint" || typeof v === "boolean") out[k] = String(v);
  }
  return out;
}

/** Decodes metadata JSON text. `uri` names the file in errors. */
export function parseTableMetadata(text: string, uri: string): IcebergTableMetadata {
  let parsed: JsonValue;
  try {
    parsed = parseJsonLossless(text);
  } catch (error) {
    throw new CorruptFileError(uri, `not valid JSON table metadata (${(error as Error).message})`, { cause: error });
  }
  if (!isObject(parsed)) throw new CorruptFileError(uri, "table metadata is not a JSON object");
  return decodeTableMetadata(parsed, uri);
}

export function decodeTableMetadata(json: JsonObject, uri: string): IcebergTableMetadata {
  const bad = (problem: string): never => {
    throw new CorruptFileError(uri, problem);
  };
  const formatVersion = numberOf(json["format-version"]) ?? bad(`"format-version" is missing`);
  if (formatVersion < 1 || formatVersion > 3) {
    throw new UnsupportedFeatureError(uri, `Iceberg format version ${formatVersion} is not supported (1 to 3 are)`);
  }
  const location = typeof json.location === "string" && json.location !== "" ? json.location : bad(`"location" is missing`);

  const snapshots: IcebergSnapshot[] = [];
  const rawSnapshots = json.snapshots ?? [];
  if (!Array.isArray(rawSnapshots)) bad(`"snapshots" is not a list`);
  for (const [index, raw] of (rawSnapshots as JsonValue[]).entries()) {
    if (!isObject(raw)) bad(`snapshot #${index} is not an object`);
    const s = raw as JsonObject;
    const id = integerText(s["snapshot-id"]) ?? bad(`snapshot #${index} has no integer "snapshot-id"`);
    const parent = s["parent-snapshot-id"];
    const parentId = parent === undefined || parent === null ? null : (integerText(parent) ?? bad(`snapshot ${id}: "parent-snapshot-id" is not an integer`));
    const timestampMs = numberOf(s["timestamp-ms"]) ?? bad(`snapshot ${id} has no "timestamp-ms"`);
    const manifestList = typeof s["manifest-list"] === "string" ? s["manifest-list"] : null;
    const inline = s.manifests;
    const manifests = Array.isArray(inline) ? inline.filter((m): m is string => typeof m === "string") : [];
    if (manifestList === null && !Array.isArray(inline)) bad(`snapshot ${id} has neither "manifest-list" nor "manifests"`);
    snapshots.push({
      id,
      parentId,
      sequenceNumber: numberOf(s["sequence-number"]) ?? 0,
      timestampMs,
      manifestList,
      manifests,
      summary: stringMap(s.summary),
      schemaId: numberOf(s["schema-id"]),
    });
  }
  const ids = new Set(snapshots.map((s) => s.id));
  if (ids.size !== snapshots.length) bad("two snapshots share one snapshot id");

  const current = integerText(json["current-snapshot-id"]);
  const currentSnapshotId = current === null || current === "-1" ? null : current;
  if (currentSnapshotId !== null && !ids.has(currentSnapshotId)) bad(`"current-snapshot-id" ${currentSnapshotId} names no snapshot`);

  const refs: IcebergRef[] = [];
  if (isObject(json.refs)) {
    for (const [name, raw] of Object.entries(json.refs)) {
      if (!isObject(raw)) bad(`ref "${name}" is not an object`);
      const r = raw as JsonObject;
      const snapshotId = integerText(r["snapshot-id"]) ?? bad(`ref "${name}" has no integer "snapshot-id"`);
      const type = r.type === "tag" ? "tag" : r.type === "branch" ? "branch" : bad(`ref "${name}" has type ${JSON.stringify(r.type)}`);
      refs.push({
        name,
        snapshotId,
        type,
        maxRefAgeMs: refRetention(name, r, "max-ref-age-ms", bad),
        maxSnapshotAgeMs: refRetention(name, r, "max-snapshot-age-ms", bad),
        minSnapshotsToKeep: refRetention(name, r, "min-snapshots-to-keep", bad),
      });
    }
  }
  if (currentSnapshotId !== null && !refs.some((r) => r.name === "main")) {
    refs.push({ name: "main", snapshotId: currentSnapshotId, type: "branch", maxRefAgeMs: null, maxSnapshotAgeMs: null, minSnapshotsToKeep: null });
  }

  const snapshotLog: IcebergTableMetadata["snapshotLog"] = [];
  for (const raw of Array.isArray(json["snapshot-log"]) ? json["snapshot-log"] : []) {
    if (!isObject(raw)) continue;
    const snapshotId = integerText(raw["snapshot-id"]);
    const timestampMs = numberOf(raw["timestamp-ms"]);
    if (snapshotId !== null && timestampMs !== null) snapshotLog.push({ snapshotId, timestampMs });
  }
  const metadataLog: IcebergTableMetadata["metadataLog"] = [];
  for (const raw of Array.isArray(json["metadata-log"]) ? json["metadata-log"] : []) {
    if (!isObject(raw) || typeof raw["metadata-file"] !== "string") bad(`a "metadata-log" entry has no "metadata-file"`);
    metadataLog.push({ file: (raw as JsonObject)["metadata-file"] as string, timestampMs: numberOf((raw as JsonObject)["timestamp-ms"]) ?? 0 });
  }

  const statistics: IcebergStatisticsFile[] = [];
  for (const [field, kind, pathField] of [
    ["statistics", "statistics", "statistics-path"],
    ["partition-statistics", "partition-statistics", "statistics-path"],
  ] as const) {
    for (const raw of Array.isArray(json[field]) ? (json[field] as JsonValue[]) : []) {
      if (!isObject(raw)) bad(`a "${field}" entry is not an object`);
      const r = raw as JsonObject;
      const path = typeof r[pathField] === "string" ? (r[pathField] as string) : bad(`a "${field}" entry has no "${pathField}"`);
      statistics.push({
        snapshotId: integerText(r["snapshot-id"]) ?? bad(`"${field}" entry ${path} has no integer "snapshot-id"`),
        path,
        size: numberOf(r["file-size-in-bytes"]),
        kind,
      });
    }
  }

  return {
    formatVersion,
    tableUuid: typeof json["table-uuid"] === "string" ? json["table-uuid"] : null,
    location,
    lastSequenceNumber: numberOf(json["last-sequence-number"]) ?? 0,
    lastUpdatedMs: numberOf(json["last-updated-ms"]) ?? 0,
    properties: stringMap(json.properties),
    currentSnapshotId,
    snapshots,
    refs,
    snapshotLog,
    metadataLog,
    statistics,
    json,
  };
}

export function snapshotById(metadata: IcebergTableMetadata, id: string): IcebergSnapshot | undefined {
  return metadata.snapshots.find((s) => s.id === id);
}
