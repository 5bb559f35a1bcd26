/**
 * A Delta version's live files as a scan planner needs them (lib/formats/scan-files.ts), from the
 * head's `delta_adds` and `delta_metadata` sections alone:
 *   - columns of metaData.schemaString (top level), in the planner's types;
 *   - per add, facts from its partition values (PROTOCOL.md "Partition Value Serialization") and
 *     its stats (numRecords, minValues, maxValues, nullCount; the struct form `stats_parsed` where
 *     a checkpoint kept only that), keyed by physical names under column mapping;
 *   - its deletion vector, as the one delete file that applies to it.
 * Where a stat may not bound every row it is widened or left out: string maxima that may be
 * truncated (Spark keeps a 32-character prefix), timestamps kept to milliseconds, numbers JSON
 * cannot hold exactly, decimals, and anything in the struct form but plain numbers, strings and booleans.
 */
import type { ColumnFacts, ScanColumn, ScanDataFile, ScanDeleteFile, ScanFiles, ScanType, ScanValue } from "../scan-files.ts";
import type { TableSnapshot } from "../table-format.ts";
import { daysOf, timestampMicros, unscaledDecimal } from "../scan-values.ts";

interface DeltaField {
  name: string;
  type: unknown;
  metadata?: Record<string, unknown>;
}

export interface DeltaColumn {
  column: ScanColumn;
  /** The name stats and partition values use (the physical name under column mapping). */
  key: string;
}

/** Spark's `delta.dataSkippingStringPrefixLength` default: a longer string's max may be a truncated prefix. */
const STRING_PREFIX_LENGTH = 32;
const MICROS_PER_MS = 1000n;

function scanType(type: unknown): { type: ScanType; scale?: number; formatType: string } {
  if (typeof type !== "string") return { type: "other", formatType: typeof type === "object" && type ? String((type as { type?: unknown }).type) : "unknown" };
  const decimal = /^decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)$/.exec(type);
  if (decimal) return { type: "decimal", scale: Number(decimal[2]), formatType: type };
  const simple: Record<string, ScanType> = {
    boolean: "boolean",
    byte: "int",
    short: "int",
    integer: "int",
    long: "int",
    float: "float",
    double: "float",
    string: "string",
    binary: "binary",
    date: "date",
    timestamp: "timestamptz",
    timestamp_ntz: "timestamp",
  };
  return { type: simple[type] ?? "other", formatType: type };
}

type Cell = string | number | boolean | bigint | null;

export function sectionColumns(snapshot: TableSnapshot, name: string): Record<string, Cell[]> {
  return (snapshot.sections?.find((s) => s.name === name)?.columns ?? {}) as Record<string, Cell[]>;
}

export function parseJson(value: Cell | undefined): unknown {
  if (typeof value !== "string") return null;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return null;
  }
}

const numberOf = (v: Cell | undefined): number | null =>
  typeof v === "number" ? v : typeof v === "bigint" ? Number(v) : typeof v === "string" && /^-?\d+$/.test(v) ? Number(v) : null;

export function columnsOf(snapshot: TableSnapshot): DeltaColumn[] {
  const metadata = sectionColumns(snapshot, "delta_metadata");
  const schema = parseJson(metadata.schema_string?.[0]) as { fields?: DeltaField[] } | null;
  const configuration = (parseJson(metadata.configuration?.[0]) ?? {}) as Record<string, string>;
  const mapped = (configuration["delta.columnMapping.mode"] ?? "none") !== "none";
  return (schema?.fields ?? []).map((f) => {
    const physical = f.metadata?.["delta.columnMapping.physicalName"];
    return { column: { name: f.name, ...scanType(f.type) }, key: mapped && typeof physical === "string" ? physical : f.name };
  });
}

/** A partition value (always a string, or null) in the column's planner type; undefined when unsure. */
export function partitionValue(column: ScanColumn, text: string): ScanValue | undefined {
  switch (column.type) {
    case "string":
      // Writers differ on whether "" is an empty string or null: unsure either way.
      return text === "" ? undefined : text;
    case "int":
      return /^-?\d+$/.test(text) ? BigInt(text) : undefined;
    case "float": {
      const n = Number(text);
      return text.trim() !== "" && !Number.isNaN(n) ? n : undefined;
    }
    case "boolean":
      return text === "true" ? true : text === "false" ? false : undefined;
    case "date":
      return daysOf(text);
    case "timestamp":
    case "timestamptz": {
      const t = timestampMicros(text);
      // A zoned column's value without a zone was written in the writer's session zone: unsure.
      if (!t || (column.type === "timestamptz" && !t.zoned)) return undefined;
      return t.micros;
    }
    case "decimal":
      return unscaledDecimal(text, column.scale ?? 0);
    default:
      return undefined;
  }
}

/** A min or max stat as a bound of the column: undefined when it may not bound every row. */
function statBound(column: ScanColumn, value: unknown, side: "lower" | "upper", structForm: boolean): ScanValue | undefined {
  switch (column.type) {
    case "int":
      return typeof value === "number" && Number.isSafeInteger(value) ? BigInt(value) : undefined;
    case "float":
      return typeof value === "number" && !Number.isNaN(value) ? value : undefined;
    case "boolean":
      return typeof value === "boolean" ? value : undefined;
    case "string":
      if (typeof value !== "string") return undefined;
      if (side === "upper" && [...value].length >= STRING_PREFIX_LENGTH) return undefined;
      return value;
    case "date":
      return !structForm && typeof value === "string" ? daysOf(value.slice(0, 10)) : undefined;
    case "timestamp":
    case "timestamptz": {
      if (structForm || typeof value !== "string") return undefined;
      const t = timestampMicros(value);
      if (!t) return undefined;
      // Stats keep milliseconds: the row's microseconds lie within a millisecond either way.
      return side === "lower" ? t.micros - MICROS_PER_MS : t.micros + MICROS_PER_MS;
    }
    default:
      return undefined;
  }
}

interface Stats {
  numRecords?: unknown;
  minValues?: Record<string, unknown>;
  maxValues?: Record<string, unknown>;
  nullCount?: Record<string, unknown>;
}

export function deltaScanFiles(snapshot: TableSnapshot): ScanFiles {
  const columns = columnsOf(snapshot);
  const metadata = sectionColumns(snapshot, "delta_metadata");
  const partitionColumns = new Set((parseJson(metadata.partition_columns?.[0]) ?? []) as string[]);
  const adds = sectionColumns(snapshot, "delta_adds");
  const count = adds.path?.length ?? 0;
  const dataFiles: ScanDataFile[] = [];
  const deleteFiles: ScanDeleteFile[] = [];
  for (let i = 0; i < count; i++) {
    const fromJson = parseJson(adds.stats?.[i]) as Stats | null;
    const structForm = fromJson === null;
    const stats = fromJson ?? (parseJson(adds.stats_parsed?.[i]) as Stats | null) ?? {};
    const rows = typeof stats.numRecords === "number" && Number.isSafeInteger(stats.numRecords) ? stats.numRecords : null;
    const partitionValues = (parseJson(adds.partition_values?.[i]) ?? {}) as Record<string, string | null>;
    const facts: ColumnFacts[] = [];
    const words: string[] = [];
    for (const { column, key } of columns) {
      if (partitionColumns.has(column.name)) {
        const text = partitionValues[key] ?? partitionValues[column.name];
        words.push(`${column.name}=${text ?? "null"}`);
        if (text === null) {
          if (rows !== null) facts.push({ column: column.name, valueCount: rows, nullCount: rows });
        } else if (text !== undefined) {
          const v = partitionValue(column, text);
          if (v !== undefined) facts.push({ column: column.name, lower: v, upper: v, nullCount: 0, ...(column.type === "float" ? { nanCount: 0 } : {}) });
        }
        continue;
      }
      if (column.type === "other") continue;
      const fact: ColumnFacts = { column: column.name };
      const nulls = stats.nullCount?.[key];
      if (typeof nulls === "number" && Number.isSafeInteger(nulls)) fact.nullCount = nulls;
      if (rows !== null && fact.nullCount !== undefined) fact.valueCount = rows;
      const lower = statBound(column, stats.minValues?.[key], "lower", structForm);
      const upper = statBound(column, stats.maxValues?.[key], "upper", structForm);
      if (lower !== undefined) fact.lower = lower;
      if (upper !== undefined) fact.upper = upper;
      if (Object.keys(fact).length > 1) facts.push(fact);
    }
    const applying: number[] = [];
    const storage = adds.dv_storage_type?.[i];
    if (typeof storage === "string") {
      applying.push(deleteFiles.length);
      deleteFiles.push({
        path: typeof adds.dv_key?.[i] === "string" ? (adds.dv_key[i] as string) : null,
        kind: "deletion-vector",
        rows: numberOf(adds.dv_cardinality?.[i]),
        size: numberOf(adds.dv_size_in_bytes?.[i]),
        offset: numberOf(adds.dv_offset?.[i]),
        length: numberOf(adds.dv_size_in_bytes?.[i]),
        inline: storage === "i" ? String(adds.dv_path_or_inline?.[i] ?? "") : null,
        storage,
      });
    }
    const key = adds.key?.[i];
    dataFiles.push({
      paths: [typeof key === "string" ? key : String(adds.path?.[i])],
      fileFormat: "parquet",
      size: numberOf(adds.size?.[i]) ?? 0,
      rows,
      facts,
      deletes: applying,
      partition: words.join(", "),
    });
  }
  return { columns: columns.map((c) => c.column), dataFiles, deleteFiles };
}
