/**
 * Arrow columns → model values straight from the Arrow buffers: strings and lists through
 * their offsets and data buffers, int64 through the typed array (two 32-bit halves, no
 * BigInt per value), booleans and validity through the bitmaps. The vector API (iterating
 * value by value) costs ~2 µs a value: at 100K live files that was most of a cold load.
 *
 * Every offset is checked against its buffer, so a corrupt stream is an error, not a wrong
 * value or an out-of-range read.
 */
import { Buffer, constants, isAscii } from "node:buffer";
import { Binary, Bool, Field, Float64, Int64, List, Utf8, makeData } from "apache-arrow";
import type { Data } from "apache-arrow";
import type { ColumnType } from "../model/column-type.ts";

/** A column that cannot be read from (or written into) its buffers; each codec says which file it was. */
export class ArrowColumnError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ArrowColumnError";
  }
}

const TWO_32 = 2 ** 32;
/** |high half| below 2^21 keeps hi·2^32 + lo within ±2^53. */
const SAFE_HIGH = 2 ** 21;

/** The values of one column (all its record batches), nulls as null. */
export function columnValues(chunks: readonly Data[], type: ColumnType, table: string, column: string): unknown[] {
  const total = chunks.reduce((sum, data) => sum + data.length, 0);
  const out = new Array<unknown>(total);
  let at = 0;
  for (const data of chunks) {
    decodeChunk(data, type, out, at, table, column);
    at += data.length;
  }
  return out;
}

function fail(table: string, column: string, what: string): never {
  throw new ArrowColumnError(`arrow section ${table}: column ${column} ${what}`);
}

function isValid(bitmap: Uint8Array | undefined, index: number): boolean {
  return bitmap === undefined || bitmap.length === 0 || (bitmap[index >> 3]! & (1 << (index & 7))) !== 0;
}

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * Strings out of a column's data buffer by byte range. All ASCII (paths, keys, ETags): the
 * buffer becomes one string and each value a substring of it, which V8 keeps as a slice of
 * that string (no copy, no allocation per byte): ~5× faster than a decode per value at 100K
 * paths. Otherwise each value is decoded as UTF-8 on its own.
 */
function stringSlicer(bytes: Uint8Array): (start: number, end: number) => string {
  const buffer = asBuffer(bytes);
  if (!isAscii(bytes)) return (start, end) => buffer.toString("utf8", start, end);
  const whole = buffer.toString("latin1");
  return (start, end) => whole.substring(start, end);
}

function checkOffsets(offsets: Int32Array, from: number, count: number, limit: number, table: string, column: string): void {
  if (offsets.length < from + count + 1) fail(table, column, "has fewer offsets than values");
  let previous = offsets[from]!;
  if (previous < 0) fail(table, column, "has a negative offset");
  for (let i = from + 1; i <= from + count; i++) {
    const next = offsets[i]!;
    if (next < previous) fail(table, column, "has decreasing offsets");
    previous = next;
  }
  if (previous > limit) fail(table, column, "has an offset beyond its data");
}

function decodeChunk(data: Data, type: ColumnType, out: unknown[], at: number, table: string, column: string): void {
  const { length, offset } = data;
  const bitmap = data.nullCount > 0 ? (data.nullBitmap as Uint8Array | undefined) : undefined;
  switch (type) {
    case "int64": {
      const values = data.values as BigInt64Array;
      if (values.length < offset + length) fail(table, column, "is short");
      const halves = new Int32Array(values.buffer, values.byteOffset, values.length * 2);
      for (let i = 0; i < length; i++) {
        if (!isValid(bitmap, offset + i)) {
          out[at + i] = null;
          continue;
        }
        const k = (offset + i) * 2;
        const high = halves[k + 1]!;
        if (high >= SAFE_HIGH || high < -SAFE_HIGH) fail(table, column, `holds ${values[offset + i]}, beyond 2^53`);
        const value = high * TWO_32 + (halves[k]! >>> 0);
        if (!Number.isSafeInteger(value)) fail(table, column, `holds ${values[offset + i]}, beyond 2^53`);
        out[at + i] = value;
      }
      return;
    }
    case "float64": {
      const values = data.values as Float64Array;
      if (values.length < offset + length) fail(table, column, "is short");
      for (let i = 0; i < length; i++) out[at + i] = isValid(bitmap, offset + i) ? values[offset + i]! : null;
      return;
    }
    case "bool": {
      const values = data.values as Uint8Array;
      if (values.length * 8 < offset + length) fail(table, column, "is short");
      for (let i = 0; i < length; i++) out[at + i] = isValid(bitmap, offset + i) ? isValid(values, offset + i) : null;
      return;
    }
    case "utf8": {
      const offsets = data.valueOffsets as Int32Array;
      const bytes = data.values as Uint8Array;
      checkOffsets(offsets, offset, length, bytes.length, table, column);
      const slice = stringSlicer(bytes);
      for (let i = 0; i < length; i++) {
        out[at + i] = isValid(bitmap, offset + i) ? slice(offsets[offset + i]!, offsets[offset + i + 1]!) : null;
      }
      return;
    }
    case "binary": {
      const offsets = data.valueOffsets as Int32Array;
      const bytes = data.values as Uint8Array;
      checkOffsets(offsets, offset, length, bytes.length, table, column);
      // The column's bytes copied once, each value a view of the copy: the buffer decoded from may
      // be the whole body, which callers may drop; a copy per value cost a 10,000-footer head ~10 ms.
      const base = offsets[offset]!;
      const own = bytes.slice(base, offsets[offset + length]!);
      for (let i = 0; i < length; i++) {
        out[at + i] = isValid(bitmap, offset + i) ? own.subarray(offsets[offset + i]! - base, offsets[offset + i + 1]! - base) : null;
      }
      return;
    }
    case "utf8_list": {
      const listOffsets = data.valueOffsets as Int32Array;
      const child = data.children[0];
      if (!child) fail(table, column, "has no list items");
      checkOffsets(listOffsets, offset, length, child.length, table, column);
      const itemOffsets = child.valueOffsets as Int32Array;
      const bytes = child.values as Uint8Array;
      const itemBase = child.offset;
      checkOffsets(itemOffsets, itemBase, child.length, bytes.length, table, column);
      const itemBitmap = child.nullCount > 0 ? (child.nullBitmap as Uint8Array | undefined) : undefined;
      const slice = stringSlicer(bytes);
      for (let i = 0; i < length; i++) {
        if (!isValid(bitmap, offset + i)) {
          out[at + i] = null;
          continue;
        }
        const start = listOffsets[offset + i]!;
        const end = listOffsets[offset + i + 1]!;
        const items = new Array<string>(end - start);
        for (let j = start; j < end; j++) {
          if (!isValid(itemBitmap, itemBase + j)) fail(table, column, `row ${i} holds a null list item`);
          items[j - start] = slice(itemOffsets[itemBase + j]!, itemOffsets[itemBase + j + 1]!);
        }
        out[at + i] = items;
      }
      return;
    }
  }
}

/**
 * Model values → Arrow Data, written straight into the buffers (the encoding twin of
 * columnValues): string bytes and offsets in two passes, int64 as 32-bit halves, bitmaps by
 * hand. apache-arrow's vectorFromArray builds value by value (~3 µs a value at 100K files).
 */
export function columnData(type: ColumnType, values: readonly unknown[]): Data {
  const length = values.length;
  if (type === "int64" || type === "bool" || type === "utf8") {
    const { nullCount, validity, offsets, values: data } = columnBuffers(type, values);
    const common = { length, nullCount, ...(validity ? { nullBitmap: validity } : {}) };
    if (type === "int64") return makeData({ type: new Int64(), ...common, data: data as BigInt64Array });
    if (type === "bool") return makeData({ type: new Bool(), ...common, data: data as Uint8Array });
    return makeData({ type: new Utf8(), ...common, valueOffsets: offsets!, data: data as Uint8Array });
  }
  let nullCount = 0;
  for (let i = 0; i < length; i++) if (values[i] === null || values[i] === undefined) nullCount++;
  const nullBitmap = nullCount > 0 ? validityOf(values) : undefined;
  const common = { length, nullCount, ...(nullBitmap ? { nullBitmap } : {}) };
  switch (type) {
    case "float64":
      return makeData({ type: new Float64(), ...common, data: Float64Array.from(values as (number | null)[], (v) => v ?? 0) });
    case "binary": {
      const valueOffsets = new Int32Array(length + 1);
      let total = 0;
      for (let i = 0; i < length; i++) {
        total += (values[i] as Uint8Array | null)?.length ?? 0;
        valueOffsets[i + 1] = total;
      }
      const data = new Uint8Array(total);
      for (let i = 0; i < length; i++) {
        const value = values[i] as Uint8Array | null;
        if (value) data.set(value, valueOffsets[i]!);
      }
      return makeData({ type: new Binary(), ...common, valueOffsets, data });
    }
    case "utf8_list": {
      const valueOffsets = new Int32Array(length + 1);
      const items: (string | null)[] = [];
      for (let i = 0; i < length; i++) {
        const list = values[i] as readonly string[] | null;
        if (list) for (const item of list) items.push(item);
        valueOffsets[i + 1] = items.length;
      }
      const child = columnData("utf8", items) as Data<Utf8>;
      return makeData({ type: new List(new Field("item", new Utf8(), true)), ...common, valueOffsets, child });
    }
  }
}

/** A flat column's Arrow buffers: validity (absent without nulls), offsets (utf8), values (int64 as 64-bit integers). */
export interface ColumnBuffers {
  nullCount: number;
  validity?: Uint8Array;
  offsets?: Int32Array;
  values: Uint8Array | BigInt64Array;
}

/** Model values → the buffers of an int64, bool or utf8 column (columnData's, for a writer that takes buffers). */
export function columnBuffers(type: "int64" | "bool" | "utf8", values: readonly unknown[]): ColumnBuffers {
  const length = values.length;
  let nullCount = 0;
  for (let i = 0; i < length; i++) if (values[i] === null || values[i] === undefined) nullCount++;
  const common = nullCount > 0 ? { nullCount, validity: validityOf(values) } : { nullCount };
  switch (type) {
    case "int64": {
      const data = new BigInt64Array(length);
      const halves = new Int32Array(data.buffer);
      for (let i = 0; i < length; i++) {
        const value = values[i] as number | null;
        if (value === null || value === undefined) continue;
        const high = Math.floor(value / TWO_32);
        halves[i * 2] = value - high * TWO_32;
        halves[i * 2 + 1] = high;
      }
      return { ...common, values: data };
    }
    case "bool": {
      const data = new Uint8Array((length + 7) >> 3);
      for (let i = 0; i < length; i++) if (values[i] === true) data[i >> 3]! |= 1 << (i & 7);
      return { ...common, values: data };
    }
    case "utf8": {
      const { valueOffsets, data } = stringBuffers(values as readonly (string | null)[]);
      return { ...common, offsets: valueOffsets, values: data };
    }
  }
}

function validityOf(values: readonly unknown[]): Uint8Array {
  const bitmap = new Uint8Array((values.length + 7) >> 3);
  for (let i = 0; i < values.length; i++) if (values[i] !== null && values[i] !== undefined) bitmap[i >> 3]! |= 1 << (i & 7);
  return bitmap;
}

/**
 * A string column's offsets and bytes. A column of ASCII strings (ids, names, JSON: most of
 * them) is encoded as one joined string, its offsets the strings' lengths: two calls for the
 * column, where a call per value into Buffer's checks was most of a cold encode's time.
 */
function stringBuffers(values: readonly (string | null)[]): { valueOffsets: Int32Array; data: Uint8Array } {
  const valueOffsets = new Int32Array(values.length + 1);
  let units = 0;
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (value) units += value.length;
    valueOffsets[i + 1] = units;
  }
  // join writes null as "", as the offsets count it. Every character beyond ASCII takes more
  // UTF-8 bytes than UTF-16 units, so equal counts mean an ASCII column: the offsets hold.
  const joined = units <= constants.MAX_STRING_LENGTH ? Buffer.from(values.join(""), "utf8") : null;
  if (joined !== null && joined.length === units) return { valueOffsets, data: new Uint8Array(joined.buffer, joined.byteOffset, joined.byteLength) };
  let total = 0;
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (value) total += Buffer.byteLength(value, "utf8");
    valueOffsets[i + 1] = total;
  }
  if (total > 0x7fffffff) throw new ArrowColumnError(`a string column of ${total} bytes is beyond Arrow's 32-bit offsets`);
  const data = Buffer.allocUnsafe(total);
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (value) data.write(value, valueOffsets[i]!, "utf8");
  }
  return { valueOffsets, data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength) };
}
