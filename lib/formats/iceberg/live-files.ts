/**
 * The head's view of the current snapshot: the live data files as the model's LiveFile (one per
 * data file, with the deletion vector or file-scoped position-delete file that names it), and
 * one section row per live data or delete file with everything a planner needs without
 * opening a manifest: path, content, format, partition, counts, size, sequence numbers, spec,
 * and per-field-id column sizes, value/null/NaN counts and bounds (bounds as hex of Iceberg's
 * single-value binary encoding).
 */
import type { FormatSection, LiveFile, SchemaField, UnresolvedReference } from "../table-format.ts";
import type { JsonValue } from "./lossless-json.ts";
import { ENTRY_STATUS, type ManifestFile } from "./manifests.ts";
import type { DecodedManifest } from "./snapshot-files.ts";
import type { IcebergPathResolver } from "./table-paths.ts";
import type { IcebergTableMetadata, JsonObject } from "./table-metadata.ts";

export const FILES_SECTION = "iceberg_files";
/** One row per manifest of the snapshot, in manifest-list order: which iceberg_files rows it gave. */
export const MANIFESTS_SECTION = "iceberg_manifests";

export type Cell = string | number | boolean | null;

function num(value: bigint | null): Cell {
  if (value === null) return null;
  return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value.toString();
}

function mapJson<V>(map: Map<number, V>, convert: (v: V) => JsonValue): string | null {
  if (map.size === 0) return null;
  const out: Record<string, JsonValue> = {};
  for (const [k, v] of [...map.entries()].sort((a, b) => a[0] - b[0])) out[String(k)] = convert(v);
  return JSON.stringify(out);
}

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString("hex");
const count = (v: bigint): JsonValue => num(v);

function partitionJson(values: { fieldId: number; name: string; value: unknown }[]): string {
  return JSON.stringify(
    values.map(({ fieldId, name, value }) => ({
      field_id: fieldId,
      name,
      value: typeof value === "bigint" ? value.toString() : value instanceof Uint8Array ? hex(value) : (value ?? null),
    })),
  );
}

/** The iceberg_files columns, in the order a head holds them. */
export const FILE_COLUMNS = [
  "path",
  "content",
  "file_format",
  "partition_spec_id",
  "partition",
  "record_count",
  "file_size_in_bytes",
  "sequence_number",
  "file_sequence_number",
  "column_sizes",
  "value_counts",
  "null_value_counts",
  "nan_value_counts",
  "lower_bounds",
  "upper_bounds",
  "equality_ids",
  "referenced_data_file",
  "content_offset",
  "content_size_in_bytes",
] as const;

/** The columns holding integers: num()'s cells (a number, or decimal text past 2^53). */
export const INTEGER_COLUMNS: ReadonlySet<string> = new Set([
  "content",
  "partition_spec_id",
  "record_count",
  "file_size_in_bytes",
  "sequence_number",
  "file_sequence_number",
  "content_offset",
  "content_size_in_bytes",
]);

/**
 * One manifest's live entries (ADDED or EXISTING) as iceberg_files rows: what a head holds of it,
 * so a later head can take the rows again for the same manifest without reading it (manifests
 * never change once written; head-manifests.ts).
 */
export interface ManifestRows {
  /** The manifest's entry in the manifest list. */
  file: ManifestFile;
  key: string;
  columns: Record<string, Cell[]>;
  /** Per row: whether its path is a key under the root (else the path as the manifest gives it). */
  resolved: boolean[];
  unresolved: UnresolvedReference[];
}

/** The rows of one manifest read from storage; `what` names the snapshot in an unresolved path's reason. */
export function manifestRows(manifest: DecodedManifest, resolve: IcebergPathResolver, what: string): ManifestRows {
  const columns: Record<string, Cell[]> = Object.fromEntries(FILE_COLUMNS.map((name) => [name, []]));
  const resolved: boolean[] = [];
  const unresolved: UnresolvedReference[] = [];
  for (const entry of manifest.entries) {
    if (entry.status === ENTRY_STATUS.DELETED) continue;
    const f = entry.file;
    const at = resolve(f.path);
    resolved.push(at.kind === "key");
    if (at.kind !== "key") unresolved.push({ path: f.path, kind: at.kind, reason: `${what}: ${at.reason}` });
    const push = (name: string, value: Cell) => columns[name]!.push(value);
    push("path", at.kind === "key" ? at.key : f.path);
    push("content", f.content);
    push("file_format", f.fileFormat);
    push("partition_spec_id", manifest.file.partitionSpecId);
    push("partition", partitionJson(f.partition));
    push("record_count", num(f.recordCount));
    push("file_size_in_bytes", num(f.fileSizeInBytes));
    push("sequence_number", num(entry.sequenceNumber));
    push("file_sequence_number", num(entry.fileSequenceNumber));
    push("column_sizes", mapJson(f.columnSizes, count));
    push("value_counts", mapJson(f.valueCounts, count));
    push("null_value_counts", mapJson(f.nullValueCounts, count));
    push("nan_value_counts", mapJson(f.nanValueCounts, count));
    push("lower_bounds", mapJson(f.lowerBounds, hex));
    push("upper_bounds", mapJson(f.upperBounds, hex));
    push("equality_ids", f.equalityIds === null ? null : JSON.stringify(f.equalityIds));
    push("referenced_data_file", f.referencedDataFile);
    push("content_offset", num(f.contentOffset));
    push("content_size_in_bytes", num(f.contentSizeInBytes));
  }
  return { file: manifest.file, key: manifest.key, columns, resolved, unresolved };
}

/**
 * The head's view of a snapshot from its manifests' rows, in manifest-list order: the live data
 * files (each with the deletion vector or file-scoped delete file that names it, matched by key
 * where the paths resolve), the iceberg_files section, and the iceberg_manifests section saying
 * which rows came from which manifest (head-manifests.ts).
 */
export function liveFilesOf(chunks: readonly ManifestRows[], resolve: IcebergPathResolver, location: string): { liveFiles: LiveFile[]; sections: FormatSection[] } {
  const columns: Record<string, Cell[]> = Object.fromEntries(FILE_COLUMNS.map((name) => [name, chunks.flatMap((chunk) => chunk.columns[name]!)]));
  const resolved = chunks.flatMap((chunk) => chunk.resolved);
  const paths = columns.path as string[];
  const content = columns.content as number[];
  const deletesFor = new Map<string, { key: string | null; rows: Cell }>();
  content.forEach((kind, i) => {
    const target = columns.referenced_data_file![i] as string | null;
    if (kind === 0 || target === null) return;
    const at = resolve(target);
    deletesFor.set(at.kind === "key" ? at.key : target, { key: resolved[i] ? paths[i]! : null, rows: columns.record_count![i]! });
  });
  const liveFiles: LiveFile[] = [];
  content.forEach((kind, i) => {
    if (kind !== 0) return;
    const deletes = deletesFor.get(paths[i]!);
    liveFiles.push({
      fragmentId: liveFiles.length,
      paths: [paths[i]!],
      size: Number(columns.file_size_in_bytes![i]),
      physicalRows: Number(columns.record_count![i]),
      deletionFile: deletes?.key ?? null,
      deletedRows: deletes ? Number(deletes.rows) : 0,
    });
  });
  return { liveFiles, sections: [{ name: FILES_SECTION, columns }, manifestsSection(chunks, location)] };
}

function manifestsSection(chunks: readonly ManifestRows[], location: string): FormatSection {
  return {
    name: MANIFESTS_SECTION,
    columns: {
      key: chunks.map((c) => c.key),
      length: chunks.map((c) => c.file.length),
      added_snapshot_id: chunks.map((c) => c.file.addedSnapshotId),
      sequence_number: chunks.map((c) => c.file.sequenceNumber.toString()),
      content: chunks.map((c) => c.file.content),
      partition_spec_id: chunks.map((c) => c.file.partitionSpecId),
      location: chunks.map(() => location),
      resolved: chunks.map((c) => c.unresolved.length === 0 && c.resolved.every(Boolean)),
      rows: chunks.map((c) => c.resolved.length),
    },
  };
}

/** The fields of schema `schemaId` (default: the current schema), nested ones with their parent's id (-1 at the top). */
export function schemaFields(metadata: IcebergTableMetadata, schemaId: number | null = null): SchemaField[] {
  const json = metadata.json;
  const schemas = Array.isArray(json.schemas) ? (json.schemas as JsonObject[]) : [];
  const currentId = schemaId ?? json["current-schema-id"];
  const schema = schemas.find((s) => s["schema-id"] === currentId) ?? (json.schema as JsonObject | undefined) ?? schemas.at(-1);
  const out: SchemaField[] = [];
  const walk = (type: JsonValue | undefined, parentId: number): void => {
    if (typeof type !== "object" || type === null || Array.isArray(type)) return;
    const t = type as JsonObject;
    if (t.type === "struct" && Array.isArray(t.fields)) {
      for (const field of t.fields as JsonObject[]) {
        const id = Number(field.id);
        out.push({ id, parentId, name: String(field.name), logicalType: typeName(field.type), nullable: field.required !== true });
        walk(field.type, id);
      }
    } else if (t.type === "list") {
      const id = Number(t["element-id"]);
      out.push({ id, parentId, name: "element", logicalType: typeName(t.element), nullable: t["element-required"] !== true });
      walk(t.element, id);
    } else if (t.type === "map") {
      const keyId = Number(t["key-id"]);
      const valueId = Number(t["value-id"]);
      out.push({ id: keyId, parentId, name: "key", logicalType: typeName(t.key), nullable: false });
      walk(t.key, keyId);
      out.push({ id: valueId, parentId, name: "value", logicalType: typeName(t.value), nullable: t["value-required"] !== true });
      walk(t.value, valueId);
    }
  };
  walk(schema, -1);
  return out;
}

function typeName(type: JsonValue | undefined): string {
  if (typeof type === "string") return type;
  if (typeof type === "object" && type !== null && !Array.isArray(type)) return String((type as JsonObject).type);
  return "unknown";
}
