/**
 * What a Delta version's live files say to a scan planner (lib/formats/scan-files.ts), from the
 * head's `delta_adds` and `delta_metadata` sections alone (scan-file-view.ts reads the adds and
 * asks these as a query needs them):
 *   - columns of metaData.schemaString (top level), in the planner's types;
 *   - per add, facts from its partition values (PROTOCOL.md "Partition Value Serialization") and
 *     its stats (numRecords, minValues, maxValues, nullCount; the struct form `stats_parsed` where
 *     a checkpoint kept only that), keyed by physical names under column mapping;
 *   - its deletion vector, as the one delete file that applies to it.
 * Where a stat may not bound every row it is widened or left out: string maxima that may be
 * truncated (Spark keeps a 32-character prefix), timestamps kept to milliseconds, numbers JSON
 * cannot hold exactly, decimals, and anything in the struct form but plain numbers, strings and booleans.
 */
import type { ScanColumn, ScanType, ScanValue } from "../scan-files.ts";
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

export type Cell = string | number | boolean | bigint | null;

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

export const numberOf = (v: Cell | undefined): number | null =>
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
export function statBound(column: ScanColumn, value: unknown, side: "lower" | "upper", structForm: boolean): ScanValue | undefined {
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

export interface Stats {
  numRecords?: unknown;
  minValues?: Record<string, unknown>;
  maxValues?: Record<string, unknown>;
  nullCount?: Record<string, unknown>;
}
