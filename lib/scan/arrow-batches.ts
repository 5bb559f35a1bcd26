/**
 * Value batches (lib/scan/rows.ts) as Arrow record batches (apache-arrow): each column in the
 * Arrow type of its table type, built from typed arrays so 64-bit ints, decimals and
 * microsecond timestamps lose nothing.
 */
import {
  Binary,
  Bool,
  DateDay,
  Decimal,
  Field,
  Float32,
  Float64,
  Int32,
  Int64,
  RecordBatch,
  Schema,
  Struct,
  TimeMicrosecond,
  TimestampMicrosecond,
  Utf8,
  makeData,
} from "apache-arrow";
import type { Data, DataType } from "apache-arrow";
import type { ScanColumn, ScanValue } from "../formats/scan-files.ts";
import type { ValueBatch } from "./rows.ts";

const SMALL_INTS = new Set(["int", "integer", "short", "byte"]);

export function arrowType(column: ScanColumn): DataType {
  switch (column.type) {
    case "boolean":
      return new Bool();
    case "int":
      return SMALL_INTS.has(column.formatType) ? new Int32() : new Int64();
    case "float":
      return column.formatType === "float" ? new Float32() : new Float64();
    case "decimal": {
      const precision = Number(/\(\s*(\d+)/.exec(column.formatType)?.[1] ?? 38);
      return new Decimal(column.scale ?? 0, precision, 128);
    }
    case "binary":
      return new Binary();
    case "date":
      return new DateDay();
    case "timestamp":
      return new TimestampMicrosecond();
    case "timestamptz":
      return new TimestampMicrosecond("UTC");
    case "time":
      return new TimeMicrosecond();
    default:
      return new Utf8();
  }
}

function nullBitmap(values: readonly (ScanValue | null)[]): { bitmap: Uint8Array; nulls: number } {
  const bitmap = new Uint8Array(Math.ceil(values.length / 8));
  let nulls = 0;
  values.forEach((v, i) => {
    if (v === null) nulls++;
    else bitmap[i >> 3]! |= 1 << (i & 7);
  });
  return { bitmap, nulls };
}

const json = (v: unknown): string => JSON.stringify(v, (_k, x) => (typeof x === "bigint" ? x.toString() : x instanceof Uint8Array ? Buffer.from(x).toString("base64") : x));

function columnData(column: ScanColumn, values: readonly (ScanValue | null)[]): Data {
  const type = arrowType(column);
  const length = values.length;
  const { bitmap, nulls } = nullBitmap(values);
  const base = { length, nullCount: nulls, nullBitmap: bitmap };
  if (type instanceof Int64 || type instanceof TimestampMicrosecond || type instanceof TimeMicrosecond) {
    return makeData({ type, ...base, data: BigInt64Array.from(values, (v) => (typeof v === "bigint" ? v : 0n)) } as never);
  }
  if (type instanceof Int32 || type instanceof DateDay) return makeData({ type, ...base, data: Int32Array.from(values, (v) => Number(v ?? 0)) } as never);
  if (type instanceof Float32) return makeData({ type, ...base, data: Float32Array.from(values, (v) => Number(v ?? 0)) });
  if (type instanceof Float64) return makeData({ type, ...base, data: Float64Array.from(values, (v) => Number(v ?? 0)) });
  if (type instanceof Bool) {
    const data = new Uint8Array(Math.ceil(length / 8));
    values.forEach((v, i) => {
      if (v === true) data[i >> 3]! |= 1 << (i & 7);
    });
    return makeData({ type, ...base, data });
  }
  if (type instanceof Decimal) {
    const data = new Uint32Array(length * 4);
    values.forEach((v, i) => {
      let x = BigInt.asUintN(128, typeof v === "bigint" ? v : 0n);
      for (let w = 0; w < 4; w++, x >>= 32n) data[i * 4 + w] = Number(x & 0xffffffffn);
    });
    return makeData({ type, ...base, data });
  }
  const bytes = values.map((v) => (v === null ? new Uint8Array(0) : v instanceof Uint8Array ? v : new TextEncoder().encode(typeof v === "string" ? v : json(v))));
  const valueOffsets = new Int32Array(length + 1);
  bytes.forEach((b, i) => {
    valueOffsets[i + 1] = valueOffsets[i]! + b.length;
  });
  const data = new Uint8Array(valueOffsets[length]!);
  bytes.forEach((b, i) => {
    data.set(b, valueOffsets[i]!);
  });
  return makeData({ type: type as Utf8 | Binary, ...base, valueOffsets, data } as never);
}

export function toRecordBatch(batch: ValueBatch): RecordBatch {
  const fields = batch.columns.map((c) => new Field(c.name, arrowType(c), true));
  const children = batch.columns.map((c) => columnData(c, batch.values.get(c.name)!));
  const schema = new Schema(fields);
  return new RecordBatch(schema, makeData({ type: new Struct(fields), length: batch.rows, nullCount: 0, children }));
}
