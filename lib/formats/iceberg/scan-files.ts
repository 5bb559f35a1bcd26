/**
 * What an Iceberg snapshot's live files say to a scan planner (lib/formats/scan-files.ts), from
 * the head's `iceberg_files` section and the metadata JSON alone (scan-file-view.ts reads the
 * section and asks these as a query needs them):
 *   - columns of the snapshot's schema (top level), in the planner's types;
 *   - per data file, facts from its metrics (value, null and NaN counts, lower and upper bounds
 *     decoded from Iceberg's single-value binary form, by the byte length actually written so a
 *     file written before an int→long or float→double promotion still decodes) and from its
 *     partition (spec "Partition Transforms": identity, bucket, truncate, year, month, day, hour);
 *   - which delete files apply to it (spec "Scan Planning": position deletes and deletion vectors
 *     by referenced file, or by partition and sequence number; equality deletes by sequence
 *     number and partition, or everywhere when their spec is unpartitioned: scan-file-view.ts).
 * Anything unsure (an unknown transform, a bound whose length fits no type) gives no fact.
 */
import { gunzipSync } from "node:zlib";
import type { ColumnFacts, ScanColumn, ScanType, ScanValue } from "../scan-files.ts";
import type { TableSnapshot } from "../table-format.ts";
import { parseJsonLossless } from "./lossless-json.ts";
import type { JsonValue } from "./lossless-json.ts";
import type { JsonObject } from "./table-metadata.ts";
import { bucketOf } from "./bucket-hash.ts";

export interface Field {
  id: number;
  name: string;
  type: JsonValue;
  column: ScanColumn;
}

export interface SpecField {
  fieldId: number;
  sourceId: number;
  transform: string;
}

const isObject = (v: JsonValue | undefined): v is JsonObject => typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array);

/** The planner's type of an Iceberg primitive type name. */
function scanType(type: JsonValue): { type: ScanType; scale?: number; formatType: string } {
  if (typeof type !== "string") return { type: "other", formatType: isObject(type) ? String(type.type) : "unknown" };
  const decimal = /^decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)$/.exec(type);
  if (decimal) return { type: "decimal", scale: Number(decimal[2]), formatType: type };
  const simple: Record<string, ScanType> = {
    boolean: "boolean",
    int: "int",
    long: "int",
    float: "float",
    double: "float",
    string: "string",
    binary: "binary",
    date: "date",
    time: "time",
    timestamp: "timestamp",
    timestamptz: "timestamptz",
  };
  if (/^fixed\[\d+\]$/.test(type)) return { type: "binary", formatType: type };
  return { type: simple[type] ?? "other", formatType: type };
}

export function metadataJson(raw: Uint8Array): JsonObject {
  const bytes = raw.length >= 2 && raw[0] === 0x1f && raw[1] === 0x8b ? gunzipSync(raw) : raw;
  const json = parseJsonLossless(new TextDecoder().decode(bytes));
  if (!isObject(json)) throw new Error("Iceberg table metadata is not a JSON object");
  return json;
}

export function schemaOf(json: JsonObject, schemaId: number | null): Field[] {
  const schemas = Array.isArray(json.schemas) ? (json.schemas as JsonObject[]) : [];
  const wanted = schemaId ?? json["current-schema-id"];
  const schema = schemas.find((s) => Number(s["schema-id"]) === Number(wanted)) ?? (json.schema as JsonObject | undefined) ?? schemas.at(-1);
  const fields = schema && Array.isArray(schema.fields) ? (schema.fields as JsonObject[]) : [];
  return fields.map((f) => {
    const name = String(f.name);
    return { id: Number(f.id), name, type: f.type ?? null, column: { name, ...scanType(f.type ?? null) } };
  });
}

export function specsOf(json: JsonObject): Map<number, SpecField[]> {
  const out = new Map<number, SpecField[]>();
  const read = (fields: JsonValue | undefined): SpecField[] =>
    (Array.isArray(fields) ? (fields as JsonObject[]) : []).map((f) => ({
      fieldId: Number(f["field-id"] ?? -1),
      sourceId: Number(f["source-id"]),
      transform: String(f.transform),
    }));
  if (Array.isArray(json["partition-specs"])) {
    for (const spec of json["partition-specs"] as JsonObject[]) out.set(Number(spec["spec-id"]), read(spec.fields));
  } else if (Array.isArray(json["partition-spec"])) {
    out.set(0, read(json["partition-spec"]));
  }
  return out;
}

/** The snapshot's schema id, from the metadata's snapshot entry for this version. */
export function snapshotSchemaId(json: JsonObject, snapshotId: string): number | null {
  const snapshots = Array.isArray(json.snapshots) ? (json.snapshots as JsonObject[]) : [];
  const found = snapshots.find((s) => String(s["snapshot-id"]) === snapshotId);
  const id = found?.["schema-id"];
  return id === undefined || id === null ? null : Number(id);
}

// --- single-value binary form (spec Appendix D) ---

function bigEndianSigned(bytes: Uint8Array): bigint {
  if (bytes.length === 0) return 0n;
  let v = 0n;
  for (const b of bytes) v = (v << 8n) | BigInt(b);
  return BigInt.asIntN(bytes.length * 8, v);
}

/** Strict: a bound that is not UTF-8 bounds nothing (reused: a decode that throws leaves it ready for the next). */
const UTF8 = new TextDecoder("utf-8", { fatal: true });

/** Decodes a bound for a column; undefined when its length fits none of the type's encodings. */
export function decodeBound(column: ScanColumn, bytes: Uint8Array): ScanValue | undefined {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  switch (column.type) {
    case "boolean":
      return bytes.length === 1 ? bytes[0] !== 0 : undefined;
    case "int":
    case "time":
    case "timestamp":
    case "timestamptz":
      if (bytes.length === 4) return BigInt(view.getInt32(0, true));
      return bytes.length === 8 ? view.getBigInt64(0, true) : undefined;
    case "date":
      return bytes.length === 4 ? view.getInt32(0, true) : undefined;
    case "float":
      if (bytes.length === 4) return view.getFloat32(0, true);
      if (bytes.length === 8) return view.getFloat64(0, true);
      return undefined;
    case "decimal":
      return bytes.length > 0 ? bigEndianSigned(bytes) : undefined;
    case "string": {
      try {
        return UTF8.decode(bytes);
      } catch {
        return undefined;
      }
    }
    case "binary":
      return new Uint8Array(bytes);
    default:
      return undefined;
  }
}

// --- partition values as the head's section writes them (live-files.ts partitionJson) ---

const hexBytes = (hex: string): Uint8Array => new Uint8Array(Buffer.from(hex, "hex"));

/** A partition value of an identity (or truncate) field, in the source column's planner type. */
export function sourceValue(column: ScanColumn, value: unknown): ScanValue | undefined {
  switch (column.type) {
    case "boolean":
      return typeof value === "boolean" ? value : undefined;
    case "int":
    case "time":
    case "timestamp":
    case "timestamptz":
      if (typeof value === "number" && Number.isSafeInteger(value)) return BigInt(value);
      if (typeof value === "string" && /^-?\d+$/.test(value)) return BigInt(value);
      return undefined;
    case "date":
      return typeof value === "number" && Number.isSafeInteger(value) ? value : undefined;
    case "float":
      return typeof value === "number" ? value : undefined;
    case "string":
      return typeof value === "string" ? value : undefined;
    case "decimal":
    case "binary":
      if (typeof value !== "string" || !/^([0-9a-f]{2})*$/.test(value)) return undefined;
      return column.type === "decimal" ? bigEndianSigned(hexBytes(value)) : hexBytes(value);
    default:
      return undefined;
  }
}

const MICROS_PER_DAY = 86_400_000_000n;
const MICROS_PER_HOUR = 3_600_000_000n;

/** Days from 1970-01-01 to the first day of month `m` (months since 1970-01). */
function daysOfMonth(m: number): number {
  const year = 1970 + Math.floor(m / 12);
  const month = ((m % 12) + 12) % 12;
  return Date.UTC(year, month, 1) / 86_400_000;
}

/** The closed range of source values a time transform's partition value covers. */
function timeRange(transform: string, column: ScanColumn, value: number): [ScanValue, ScanValue] | null {
  let firstDay: number;
  let nextDay: number;
  if (transform === "year") {
    firstDay = daysOfMonth(value * 12);
    nextDay = daysOfMonth((value + 1) * 12);
  } else if (transform === "month") {
    firstDay = daysOfMonth(value);
    nextDay = daysOfMonth(value + 1);
  } else if (transform === "day") {
    firstDay = value;
    nextDay = value + 1;
  } else if (transform === "hour") {
    if (column.type !== "timestamp" && column.type !== "timestamptz") return null;
    return [BigInt(value) * MICROS_PER_HOUR, BigInt(value + 1) * MICROS_PER_HOUR - 1n];
  } else {
    return null;
  }
  if (column.type === "date") return [firstDay, nextDay - 1];
  if (column.type === "timestamp" || column.type === "timestamptz") return [BigInt(firstDay) * MICROS_PER_DAY, BigInt(nextDay) * MICROS_PER_DAY - 1n];
  return null;
}

function truncateString(value: string, width: number): string {
  return [...value].slice(0, width).join("");
}

/** What a partition value says of its source column in every row of the file, or null for nothing. */
export function partitionFacts(field: SpecField, column: ScanColumn, value: unknown, rows: number | null): ColumnFacts | null {
  const transform = field.transform;
  if (transform === "void") return null;
  if (value === null || value === undefined) {
    // Every transform maps null to null and nothing else to null: the source is null in every row.
    return rows === null ? null : { column: column.name, valueCount: rows, nullCount: rows };
  }
  if (transform === "identity") {
    const v = sourceValue(column, value);
    if (v === undefined) return null;
    // Identity partition on a float column: NaN never equals the value, but it may be the value.
    if (column.type === "float") return Number.isNaN(v) ? null : { column: column.name, lower: v, upper: v, nullCount: 0, nanCount: 0 };
    return { column: column.name, lower: v, upper: v, nullCount: 0 };
  }
  const bucket = /^bucket\[(\d+)\]$/.exec(transform);
  if (bucket) {
    const n = Number(bucket[1]);
    if (typeof value !== "number" || n <= 0) return null;
    return {
      column: column.name,
      nullCount: 0,
      matches: (v) => {
        const b = bucketOf(column, v, n);
        return b === null || b === value;
      },
    };
  }
  const truncate = /^truncate\[(\d+)\]$/.exec(transform);
  if (truncate) {
    const width = Number(truncate[1]);
    if (width <= 0) return null;
    if (column.type === "int" || column.type === "decimal") {
      const v = sourceValue(column, value);
      if (typeof v !== "bigint") return null;
      return { column: column.name, lower: v, upper: v + BigInt(width) - 1n, nullCount: 0 };
    }
    if (column.type === "string" && typeof value === "string") {
      return { column: column.name, lower: value, nullCount: 0, matches: (v) => typeof v !== "string" || truncateString(v, width) === value };
    }
    return { column: column.name, nullCount: 0 };
  }
  if (typeof value === "number" && Number.isSafeInteger(value)) {
    const range = timeRange(transform, column, value);
    if (range) return { column: column.name, lower: range[0], upper: range[1], nullCount: 0 };
  }
  return null;
}

// --- the section's metrics (live-files.ts mapJson: field id -> count, or hex of a bound) ---

/** One column's entries in a file's metric maps, as the section holds them (absent: undefined). */
export interface MetricEntries {
  values: unknown;
  nulls: unknown;
  nans: unknown;
  lower: unknown;
  upper: unknown;
}

const countOf = (v: unknown): number | undefined => (typeof v === "number" ? v : typeof v === "string" && /^\d+$/.test(v) ? Number(v) : undefined);

/** Metrics facts of one column: counts and bounds, as recorded. */
export function metricFacts(field: Field, entries: MetricEntries): ColumnFacts | null {
  const facts: ColumnFacts = { column: field.name };
  const valueCount = countOf(entries.values);
  const nullCount = countOf(entries.nulls);
  const nanCount = countOf(entries.nans);
  if (valueCount !== undefined) facts.valueCount = valueCount;
  if (nullCount !== undefined) facts.nullCount = nullCount;
  if (nanCount !== undefined) facts.nanCount = nanCount;
  const bound = (hex: unknown): ScanValue | undefined => (typeof hex === "string" && /^([0-9a-f]{2})*$/.test(hex) ? decodeBound(field.column, Buffer.from(hex, "hex")) : undefined);
  const lower = bound(entries.lower);
  const upper = bound(entries.upper);
  // A NaN bound (older writers) bounds nothing.
  if (lower !== undefined && !(typeof lower === "number" && Number.isNaN(lower))) facts.lower = lower;
  if (upper !== undefined && !(typeof upper === "number" && Number.isNaN(upper))) facts.upper = upper;
  return Object.keys(facts).length > 1 ? facts : null;
}

/** True when `reference` (a path as the writer wrote it) names the data file at `key`. */
export function namesFile(reference: string, key: string, rawPath: string): boolean {
  return reference === rawPath || reference === key || reference.endsWith(`/${key}`);
}

/** The schema a scan of the snapshot reads with, and the metadata JSON. */
export function scanSchema(snapshot: TableSnapshot): { json: JsonObject; fields: Field[] } {
  const json = metadataJson(snapshot.raw);
  const snapshotId = snapshot.versionFile.id ?? snapshot.record.version_id;
  // The current snapshot is read with the table's current schema (a rename since applies, as in
  // every Iceberg reader); an older one with the schema it was written with.
  const current = String(json["current-snapshot-id"] ?? "") === snapshotId;
  return { json, fields: schemaOf(json, current ? null : snapshotSchemaId(json, snapshotId)) };
}
