/**
 * Checkpoint file codec: a plain Arrow IPC *file* (magic `ARROW1` at both ends, one record
 * batch), so any Arrow reader can open it without lakewarden. Decoding validates everything it
 * relies on and throws CorruptCheckpointError naming the file, never returns half a history.
 */
import { tableFromIPC } from "apache-arrow";
import type { Table, Vector } from "apache-arrow";
import type { VersionRecord } from "../model/version-record.ts";
import { SEED_RECORD_FIELDS, VERSION_RECORD_FIELDS, VERSION_TOTAL_FIELDS } from "../model/version-record.ts";
import { columnBuffers, columnValues } from "../arrow/column-buffers.ts";
import { writeIpcFile, type IpcColumn, type IpcColumnType } from "../arrow/ipc-file-writer.ts";
import { CorruptCheckpointError, UnsupportedCheckpointError } from "./errors.ts";
import { decodeTransactionProperties, encodeTransactionProperties } from "./properties.ts";
import { parseDamageNotes } from "./damaged.ts";
import type { DamageNote } from "./damaged.ts";
import { CHECKPOINT_COLUMNS, CHECKPOINT_FORMAT_VERSION, CHECKPOINT_METADATA, READABLE_CHECKPOINT_FORMAT_VERSIONS } from "./schema.ts";

/** Everything a checkpoint file holds. */
export interface CheckpointContent {
  /** Newest table version covered (the number in the file name). */
  version: number;
  /** One row per version, ascending, unique. */
  records: VersionRecord[];
  createdAtMillis: number;
  /** Table creation time, null when no version of the table is known at all. */
  datasetCreatedAtMillis: number | null;
  /** The version that creation time was taken from (1 unless version 1 was already gone). */
  datasetCreatedFromVersion: number | null;
  tableFormat: string;
  /** Archive segments holding the rows this file no longer holds, oldest first. */
  archiveSegments: string[];
  /** The history-protection state the last cleanup left; absent when none was in force. */
  protection?: StoredProtection | null;
  /** Damaged history files set aside, whose versions may be missing (lib/checkpoint/damaged.ts); absent when none. */
  damaged?: DamageNote[];
}

/** History protection as a checkpoint keeps it, so `versions` can say what a cleanup left. */
export interface StoredProtection {
  boundary: number;
  result: string;
  reason: string;
  removed_earlier: number[];
}

const ARROW_MAGIC = new TextEncoder().encode("ARROW1");

const COLUMN_STRINGS = new Set(["transaction_uuid", "operation_type", "transaction_properties", "version_id", "parent_ids", "branch", "metrics"]);
const INT_FIELDS = ["version", "timestamp_millis", ...VERSION_TOTAL_FIELDS] as const;

export function encodeCheckpoint(content: CheckpointContent): Uint8Array {
  assertAscending(content.records);
  const metadata = new Map<string, string>([
    [CHECKPOINT_METADATA.formatVersion, CHECKPOINT_FORMAT_VERSION],
    [CHECKPOINT_METADATA.version, String(content.version)],
    [CHECKPOINT_METADATA.createdAtMillis, String(content.createdAtMillis)],
    [CHECKPOINT_METADATA.tableFormat, content.tableFormat],
  ]);
  if (content.datasetCreatedAtMillis !== null) {
    metadata.set(CHECKPOINT_METADATA.datasetCreatedAtMillis, String(content.datasetCreatedAtMillis));
  }
  if (content.archiveSegments.length > 0) metadata.set(CHECKPOINT_METADATA.archiveSegments, JSON.stringify(content.archiveSegments));
  if (content.protection) metadata.set(CHECKPOINT_METADATA.protection, JSON.stringify(content.protection));
  if (content.damaged && content.damaged.length > 0) metadata.set(CHECKPOINT_METADATA.damaged, JSON.stringify(content.damaged));
  if (content.datasetCreatedFromVersion !== null) {
    metadata.set(CHECKPOINT_METADATA.datasetCreatedFromVersion, String(content.datasetCreatedFromVersion));
  }
  const rows = content.records;
  // Columns written straight into their Arrow buffers (lib/arrow/column-buffers.ts), and the file
  // around them by lib/arrow/ipc-file-writer.ts, not through apache-arrow's builders and writer:
  // a cleanup archives twice in a cold process, where that library's code running for the first
  // time was most of the encode.
  const columns = VERSION_RECORD_FIELDS.map((name): IpcColumn => {
    const kind = columnKind(name);
    return { name, type: kind, nullable: CHECKPOINT_COLUMNS[name].nullable, ...columnBuffers(kind, columnInput(rows, name)) };
  });
  return writeIpcFile(columns, rows.length, metadata);
}

function columnKind(name: (typeof VERSION_RECORD_FIELDS)[number]): IpcColumnType {
  return name === "is_tagged" || name === "is_cleaned_up" ? "bool" : COLUMN_STRINGS.has(name) ? "utf8" : "int64";
}

/** A column's values as the buffers take them: objects as their stored text. */
function columnInput(rows: readonly VersionRecord[], name: (typeof VERSION_RECORD_FIELDS)[number]): unknown[] {
  switch (name) {
    case "transaction_properties":
      return rows.map((r) => encodeTransactionProperties(r.transaction_properties));
    case "parent_ids":
    case "metrics":
      return rows.map((r) => JSON.stringify(r[name]));
    default:
      return rows.map((r) => r[name]);
  }
}

/** Decodes and validates one checkpoint file; `uri` names it in errors. */
export function decodeCheckpoint(bytes: Uint8Array, uri: string): CheckpointContent {
  if (!hasFileMagic(bytes)) throw new CorruptCheckpointError(uri, "not an Arrow IPC file (missing ARROW1 magic at start or end; truncated?)");
  let table: Table;
  try {
    table = tableFromIPC(bytes);
  } catch (error) {
    throw new CorruptCheckpointError(uri, `unreadable Arrow IPC file: ${(error as Error).message}`, { cause: error });
  }
  const metadata = table.schema.metadata;
  const formatVersion = metadata.get(CHECKPOINT_METADATA.formatVersion);
  if (formatVersion !== undefined && /^\d+$/.test(formatVersion) && Number(formatVersion) > Number(CHECKPOINT_FORMAT_VERSION)) {
    throw new UnsupportedCheckpointError(
      uri,
      `checkpoint format version "${formatVersion}" is newer than this reader's "${CHECKPOINT_FORMAT_VERSION}": upgrade lakewarden; the file is left as it is`,
    );
  }
  if (!(READABLE_CHECKPOINT_FORMAT_VERSIONS as readonly (string | undefined)[]).includes(formatVersion)) {
    throw new CorruptCheckpointError(uri, `checkpoint format version ${JSON.stringify(formatVersion ?? null)} is not one of ${READABLE_CHECKPOINT_FORMAT_VERSIONS.join(", ")}`);
  }
  // Format 1 files hold the seed's columns only, with non-null totals.
  const seedOnly = formatVersion === "1";
  const version = requiredInteger(metadata, CHECKPOINT_METADATA.version, uri);
  const createdAtMillis = requiredInteger(metadata, CHECKPOINT_METADATA.createdAtMillis, uri);
  const datasetCreatedAtMillis = optionalInteger(metadata, CHECKPOINT_METADATA.datasetCreatedAtMillis, uri);
  const datasetCreatedFromVersion = optionalInteger(metadata, CHECKPOINT_METADATA.datasetCreatedFromVersion, uri);
  const tableFormat = metadata.get(CHECKPOINT_METADATA.tableFormat);
  if (!tableFormat) throw new CorruptCheckpointError(uri, `missing metadata ${CHECKPOINT_METADATA.tableFormat}`);

  const columns = new Map<string, Vector>();
  for (const name of seedOnly ? SEED_RECORD_FIELDS : VERSION_RECORD_FIELDS) {
    const field = table.schema.fields.find((f) => f.name === name);
    const expected = CHECKPOINT_COLUMNS[name];
    if (!field) throw new CorruptCheckpointError(uri, `missing column ${name}`);
    if (String(field.type) !== String(expected.type)) {
      throw new CorruptCheckpointError(uri, `column ${name} is ${String(field.type)}, expected ${String(expected.type)}`);
    }
    const vector = table.getChild(name);
    if (!vector) throw new CorruptCheckpointError(uri, `missing column ${name}`);
    if (!expected.nullable && vector.nullCount > 0) throw new CorruptCheckpointError(uri, `column ${name} has nulls`);
    columns.set(name, vector);
  }

  // Whole columns from their Arrow buffers (int64 as 32-bit halves, strings through their
  // offsets), not cell by cell through the vector API: ~20x faster at 512 versions.
  const values = new Map<string, unknown[]>();
  for (const name of seedOnly ? SEED_RECORD_FIELDS : VERSION_RECORD_FIELDS) {
    try {
      values.set(name, columnValues(columns.get(name)!.data, columnKind(name), "checkpoint", name));
    } catch (error) {
      throw new CorruptCheckpointError(uri, `column ${name}: ${(error as Error).message}`, { cause: error });
    }
  }
  const column = (name: string) => values.get(name)!;
  const [version_, timestamp, fragments, dataFiles, filesSize, deletionFiles, dataFileRows, deletionFileRows, rows] = INT_FIELDS.map(column) as (number | null)[][];
  const tagged = column("is_tagged");
  const cleanedUp = column("is_cleaned_up");
  const uuids = column("transaction_uuid");
  const readVersions = column("read_version");
  const operations = column("operation_type");
  const propertyTexts = column("transaction_properties");
  const records: VersionRecord[] = new Array(table.numRows);
  for (let row = 0; row < table.numRows; row++) {
    let properties: Record<string, string>;
    try {
      properties = decodeTransactionProperties(String(propertyTexts[row]));
    } catch (error) {
      throw new CorruptCheckpointError(uri, `row ${row}: bad transaction_properties: ${(error as Error).message}`, { cause: error });
    }
    const version = version_![row]!;
    if (version === null || timestamp![row] === null) throw new CorruptCheckpointError(uri, `row ${row}: version and timestamp_millis must be set`);
    records[row] = {
      version,
      timestamp_millis: timestamp![row]!,
      total_fragments: fragments![row] ?? null,
      total_data_files: dataFiles![row] ?? null,
      total_files_size: filesSize![row] ?? null,
      total_deletion_files: deletionFiles![row] ?? null,
      total_data_file_rows: dataFileRows![row] ?? null,
      total_deletion_file_rows: deletionFileRows![row] ?? null,
      total_rows: rows![row] ?? null,
      is_tagged: Boolean(tagged[row]),
      is_cleaned_up: Boolean(cleanedUp[row]),
      transaction_uuid: nullableString(uuids[row]),
      read_version: (readVersions[row] ?? null) as number | null,
      operation_type: nullableString(operations[row]),
      transaction_properties: properties,
      ...(seedOnly ? seedIdentity(version) : modelFields((name) => column(name)[row], row, uri)),
    };
  }
  try {
    assertAscending(records);
  } catch (error) {
    throw new CorruptCheckpointError(uri, (error as Error).message);
  }
  const newest = records.at(-1);
  if (newest && newest.version > version) {
    throw new CorruptCheckpointError(uri, `holds version ${newest.version}, newer than the ${version} it claims to cover`);
  }
  return {
    version,
    records,
    createdAtMillis,
    datasetCreatedAtMillis,
    datasetCreatedFromVersion,
    tableFormat,
    archiveSegments: archiveSegmentsOf(metadata, uri),
    ...protectionOf(metadata, uri),
    ...damagedOf(metadata, uri),
  };
}

function damagedOf(metadata: Map<string, string>, uri: string): { damaged?: DamageNote[] } {
  const text = metadata.get(CHECKPOINT_METADATA.damaged);
  if (text === undefined) return {};
  const notes = parseDamageNotes(text);
  if (notes === null) throw new CorruptCheckpointError(uri, `metadata ${CHECKPOINT_METADATA.damaged} is not a list of damaged files`);
  return notes.length > 0 ? { damaged: notes } : {};
}

function protectionOf(metadata: Map<string, string>, uri: string): { protection?: StoredProtection } {
  const text = metadata.get(CHECKPOINT_METADATA.protection);
  if (text === undefined) return {};
  let value: Partial<StoredProtection> | null = null;
  try {
    value = JSON.parse(text) as Partial<StoredProtection>;
  } catch {
    value = null;
  }
  if (
    value === null ||
    typeof value !== "object" ||
    !Number.isSafeInteger(value.boundary) ||
    typeof value.result !== "string" ||
    typeof value.reason !== "string" ||
    !Array.isArray(value.removed_earlier) ||
    !value.removed_earlier.every((v) => Number.isSafeInteger(v))
  ) {
    throw new CorruptCheckpointError(uri, `metadata ${CHECKPOINT_METADATA.protection} is not a protection state`);
  }
  return { protection: value as StoredProtection };
}

function archiveSegmentsOf(metadata: Map<string, string>, uri: string): string[] {
  const text = metadata.get(CHECKPOINT_METADATA.archiveSegments);
  if (text === undefined) return [];
  let keys: unknown;
  try {
    keys = JSON.parse(text);
  } catch {
    keys = null;
  }
  if (!Array.isArray(keys) || !keys.every((k) => typeof k === "string")) {
    throw new CorruptCheckpointError(uri, `metadata ${CHECKPOINT_METADATA.archiveSegments} is not a JSON list of keys`);
  }
  return keys as string[];
}

/** A format-1 row: the seed knew only numbered versions on one line. */
function seedIdentity(version: number): Pick<VersionRecord, "version_id" | "parent_ids" | "branch" | "metrics"> {
  return { version_id: String(version), parent_ids: version > 1 ? [String(version - 1)] : [], branch: null, metrics: {} };
}

const ONE_NUMBERED_PARENT = /^\["(\d+)"\]$/;

function modelFields(cell: (name: string) => unknown, row: number, uri: string): Pick<VersionRecord, "version_id" | "parent_ids" | "branch" | "metrics"> {
  const json = (name: string): unknown => {
    const text = String(cell(name));
    // What nearly every row holds (no metrics; one numbered parent), without a JSON.parse per cell.
    if (text === "{}") return {};
    if (text === "[]") return [];
    const parent = ONE_NUMBERED_PARENT.exec(text);
    if (parent) return [parent[1]!];
    try {
      return JSON.parse(text);
    } catch (error) {
      throw new CorruptCheckpointError(uri, `row ${row}: ${name} is not JSON: ${(error as Error).message}`, { cause: error });
    }
  };
  const parents = json("parent_ids");
  if (!Array.isArray(parents) || !parents.every((p) => typeof p === "string")) throw new CorruptCheckpointError(uri, `row ${row}: parent_ids is not a list of strings`);
  const metrics = json("metrics");
  if (metrics === null || typeof metrics !== "object" || Array.isArray(metrics) || !Object.values(metrics).every((v) => typeof v === "number")) {
    throw new CorruptCheckpointError(uri, `row ${row}: metrics is not an object of numbers`);
  }
  return { version_id: String(cell("version_id")), parent_ids: parents, branch: nullableString(cell("branch")), metrics: metrics as Record<string, number> };
}

function hasFileMagic(bytes: Uint8Array): boolean {
  if (bytes.length < 2 * ARROW_MAGIC.length) return false;
  const tail = bytes.subarray(bytes.length - ARROW_MAGIC.length);
  return ARROW_MAGIC.every((b, i) => bytes[i] === b && tail[i] === b);
}

function assertAscending(records: readonly VersionRecord[]): void {
  for (let i = 1; i < records.length; i++) {
    if (records[i]!.version <= records[i - 1]!.version) {
      throw new RangeError(`versions not strictly ascending at row ${i} (${records[i - 1]!.version} then ${records[i]!.version})`);
    }
  }
}

function requiredInteger(metadata: Map<string, string>, key: string, uri: string): number {
  const value = optionalInteger(metadata, key, uri);
  if (value === null) throw new CorruptCheckpointError(uri, `missing metadata ${key}`);
  return value;
}

function optionalInteger(metadata: Map<string, string>, key: string, uri: string): number | null {
  const text = metadata.get(key);
  if (text === undefined) return null;
  const value = Number(text);
  if (!/^-?\d+$/.test(text) || !Number.isSafeInteger(value)) {
    throw new CorruptCheckpointError(uri, `metadata ${key} is not an integer: ${JSON.stringify(text)}`);
  }
  return value;
}

function nullableString(value: unknown): string | null {
  return value === null || value === undefined ? null : String(value);
}
