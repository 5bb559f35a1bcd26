/**
 * Rows of a Parquet data file for the formats' row readers (Delta, Iceberg): the file opened on a
 * footer the caller already holds (the head's inline one, so no footer GET), its top-level
 * columns with their field ids, and their values read with hyparquet and turned into the
 * planner's value forms (lib/formats/scan-files.ts ScanValue) exactly: 64-bit ints as bigint,
 * decimals as unscaled bigints (hyparquet's own decimals are floats, so the annotation is taken
 * off before it decodes), dates as days, timestamps as microseconds.
 */
import type { FileMetaData, SchemaElement } from "hyparquet";
import type { ObjectStore } from "../store/object-store.ts";
import type { DataFileFooter } from "./data-file-footer.ts";
import { CorruptFileError, UnsupportedFeatureError } from "./errors.ts";
import type { ScanColumn, ScanValue } from "./scan-files.ts";

export interface ParquetColumn {
  name: string;
  fieldId: number | null;
  /** Decimal scale written in the file (decimal columns only). */
  scale: number | null;
}

export interface OpenParquet {
  uri: string;
  rows: number;
  columns: ParquetColumn[];
  /** Values of the named top-level columns, each array `rows` long (hyparquet's raw forms; see toScanValue). */
  read(names: readonly string[]): Promise<Map<string, unknown[]>>;
}

const MICROS_PER_MS = 1000n;
const NANOS_PER_MICRO = 1000n;

/** Timestamps as microseconds and dates as days, never Date objects (which keep only milliseconds). */
const PARSERS = {
  timestampFromMilliseconds: (ms: bigint | number) => BigInt(ms) * MICROS_PER_MS,
  timestampFromMicroseconds: (micros: bigint | number) => BigInt(micros),
  timestampFromNanoseconds: (nanos: bigint | number) => {
    const n = BigInt(nanos);
    // Floor, not truncation: a nanosecond before 1970 is in the microsecond before it.
    return n >= 0n ? n / NANOS_PER_MICRO : -((-n + NANOS_PER_MICRO - 1n) / NANOS_PER_MICRO);
  },
  dateFromDays: (days: number) => days,
};

function topLevel(schema: SchemaElement[]): { element: SchemaElement; index: number }[] {
  const out: { element: SchemaElement; index: number }[] = [];
  let i = 1;
  const skip = (at: number): number => {
    let next = at + 1;
    for (let c = 0; c < (schema[at]!.num_children ?? 0); c++) next = skip(next);
    return next;
  };
  for (let c = 0; c < (schema[0]?.num_children ?? 0) && i < schema.length; c++) {
    out.push({ element: schema[i]!, index: i });
    i = skip(i);
  }
  return out;
}

const isDecimal = (e: SchemaElement): boolean => e.converted_type === "DECIMAL" || e.logical_type?.type === "DECIMAL";

/** Opens the data file at `footer.path` on its footer: no request until `read`. */
export async function openParquet(store: ObjectStore, footer: DataFileFooter): Promise<OpenParquet> {
  const uri = store.uriOf(footer.path);
  const { parquetMetadata, parquetRead } = await import("hyparquet");
  const { compressors } = await import("hyparquet-compressors");
  let metadata: FileMetaData;
  try {
    metadata = parquetMetadata(footer.bytes.buffer.slice(footer.bytes.byteOffset, footer.bytes.byteOffset + footer.bytes.byteLength) as ArrayBuffer);
  } catch (error) {
    throw new CorruptFileError(uri, `the Parquet footer does not decode: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  // Decimals decode as their stored integers (unscaled); the scale is kept here.
  const scales = new Map<string, number>();
  const schema = metadata.schema.map((e, index) => {
    if (!isDecimal(e) || (e.num_children ?? 0) > 0) return e;
    const scale = e.logical_type?.type === "DECIMAL" ? e.logical_type.scale : (e.scale ?? 0);
    scales.set(String(index), scale);
    const { converted_type: _c, logical_type: _l, ...plain } = e;
    return plain as SchemaElement;
  });
  const plainMetadata: FileMetaData = { ...metadata, schema };
  const columns = topLevel(schema).map(({ element, index }) => ({ name: element.name, fieldId: element.field_id ?? null, scale: scales.get(String(index)) ?? null }));
  const file = {
    byteLength: footer.fileSize,
    async slice(start: number, end?: number): Promise<ArrayBuffer> {
      const stop = end ?? footer.fileSize;
      // Bytes of the footer are served from it: the reader never asks the store for them.
      if (start >= footer.offset) return footer.bytes.slice(start - footer.offset, stop - footer.offset).buffer as ArrayBuffer;
      const got = await store.get(footer.path, { offset: start, length: stop - start });
      return got.body.buffer.slice(got.body.byteOffset, got.body.byteOffset + got.body.byteLength) as ArrayBuffer;
    },
  };
  const rows = Number(metadata.num_rows);
  return {
    uri,
    rows,
    columns,
    async read(names) {
      const out = new Map<string, unknown[]>();
      if (names.length === 0 || rows === 0) {
        for (const name of names) out.set(name, new Array(rows).fill(null));
        return out;
      }
      let objects: Record<string, unknown>[] = [];
      try {
        await parquetRead({
          file,
          metadata: plainMetadata,
          columns: [...names],
          rowFormat: "object",
          utf8: false,
          parsers: PARSERS as never,
          compressors,
          onComplete: (r: Record<string, unknown>[]) => {
            objects = r;
          },
        });
      } catch (error) {
        throw new CorruptFileError(uri, `reading Parquet columns ${names.join(", ")}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
      }
      for (const name of names)
        out.set(
          name,
          objects.map((o) => o[name] ?? null),
        );
      return out;
    },
  };
}

function bigEndianSigned(bytes: Uint8Array): bigint {
  let v = 0n;
  for (const b of bytes) v = (v << 8n) | BigInt(b);
  return bytes.length > 0 && bytes[0]! & 0x80 ? v - (1n << BigInt(bytes.length * 8)) : v;
}

/** A raw value of a file column as a value of the table column; null for null. `fileScale`: the decimal scale the file wrote. */
export function toScanValue(column: ScanColumn, raw: unknown, fileScale: number | null, uri: string): ScanValue | null {
  if (raw === null || raw === undefined) return null;
  const wrong = (): never => {
    throw new UnsupportedFeatureError(uri, `column "${column.name}" (${column.formatType}) holds a ${typeof raw} value this reader does not convert`);
  };
  switch (column.type) {
    case "int":
      return typeof raw === "bigint" ? raw : typeof raw === "number" && Number.isInteger(raw) ? BigInt(raw) : wrong();
    case "float":
      return typeof raw === "number" ? raw : wrong();
    case "boolean":
      return typeof raw === "boolean" ? raw : wrong();
    case "string":
      return typeof raw === "string" ? raw : raw instanceof Uint8Array ? new TextDecoder().decode(raw) : wrong();
    case "binary":
      return raw instanceof Uint8Array ? raw : typeof raw === "string" ? new TextEncoder().encode(raw) : wrong();
    case "date":
      return typeof raw === "number" ? raw : wrong();
    case "timestamp":
    case "timestamptz":
    case "time":
      return typeof raw === "bigint" ? raw : typeof raw === "number" ? BigInt(raw) * (column.type === "time" ? MICROS_PER_MS : 1n) : wrong();
    case "decimal": {
      const unscaled = typeof raw === "bigint" ? raw : typeof raw === "number" ? BigInt(raw) : raw instanceof Uint8Array ? bigEndianSigned(raw) : wrong();
      const shift = (column.scale ?? 0) - (fileScale ?? column.scale ?? 0);
      if (shift < 0) throw new UnsupportedFeatureError(uri, `column "${column.name}" is written at scale ${fileScale}, above the table's ${column.scale}`);
      return unscaled * 10n ** BigInt(shift);
    }
    default:
      return raw as ScanValue;
  }
}
