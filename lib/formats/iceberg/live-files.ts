/**
 * The head's view of the current snapshot: the live data files as the model's LiveFile (one per
 * data file, with the deletion vector or file-scoped position-delete file that names it), and
 * one section row per live data or delete file with everything a planner needs without
 * opening a manifest: path, content, format, partition, counts, size, sequence numbers, spec,
 * and per-field-id column sizes, value/null/NaN counts and bounds (bounds as hex of Iceberg's
 * single-value binary encoding).
 */
import type { FormatSection, LiveFile, SchemaField } from "../table-format.ts";
import type { JsonValue } from "./lossless-json.ts";
import type { SnapshotFiles } from "./snapshot-files.ts";
import type { IcebergTableMetadata, JsonObject } from "./table-metadata.ts";

export const FILES_SECTION = "iceberg_files";

type Cell = string | number | boolean | null;

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

export function liveFilesOf(files: SnapshotFiles): { liveFiles: LiveFile[]; section: FormatSection } {
  const columns: Record<string, Cell[]> = {
    path: [],
    content: [],
    file_format: [],
    partition_spec_id: [],
    partition: [],
    record_count: [],
    file_size_in_bytes: [],
    sequence_number: [],
    file_sequence_number: [],
    column_sizes: [],
    value_counts: [],
    null_value_counts: [],
    nan_value_counts: [],
    lower_bounds: [],
    upper_bounds: [],
    equality_ids: [],
    referenced_data_file: [],
    content_offset: [],
    content_size_in_bytes: [],
  };
  const deletesFor = new Map<string, { key: string | null; rows: bigint }>();
  for (const { entry, key } of files.liveEntries) {
    const f = entry.file;
    if (f.content !== 0 && f.referencedDataFile) deletesFor.set(f.referencedDataFile, { key, rows: f.recordCount });
    const push = (name: string, value: Cell) => columns[name]!.push(value);
    push("path", key ?? f.path);
    push("content", f.content);
    push("file_format", f.fileFormat);
    push("partition_spec_id", null);
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
  files.liveEntries.forEach(({ manifest }, i) => {
    columns.partition_spec_id![i] = manifest.partitionSpecId;
  });

  const liveFiles: LiveFile[] = [];
  for (const { entry, key } of files.liveEntries) {
    if (entry.file.content !== 0) continue;
    const deletes = deletesFor.get(entry.file.path);
    liveFiles.push({
      fragmentId: liveFiles.length,
      paths: [key ?? entry.file.path],
      size: Number(entry.file.fileSizeInBytes),
      physicalRows: Number(entry.file.recordCount),
      deletionFile: deletes?.key ?? null,
      deletedRows: deletes ? Number(deletes.rows) : 0,
    });
  }
  return { liveFiles, section: { name: FILES_SECTION, columns } };
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
