/**
 * Proofs that one Delta file is whole, by what its own format promises (issue 20: the state a
 * cleanup keeps is proven readable before anything is deleted). Each returns null when the file
 * is whole, else the problem in a few words for a one-line message:
 *   - Parquet (checkpoints, sidecars): PAR1 at both ends, a footer that fits and decodes, every
 *     row group's column chunks inside the file, the row groups adding up to the footer's row
 *     count, every page's CRC where the writer recorded one, and every page of every column
 *     decoded (not only the action columns a reader needs, nor only the footer);
 *   - JSON lines (commits, V2 JSON checkpoints): UTF-8, every line a JSON object;
 *   - a deletion-vector file (PROTOCOL.md "Deletion Vector Format"): version byte 1, then
 *     entries of size (big-endian), a RoaringBitmapArray with its magic, and a CRC-32 of it
 *     (big-endian), up to the last byte.
 */
import { crc32 } from "node:zlib";

const PAR1 = [0x50, 0x41, 0x52, 0x31];

function hasPar1(bytes: Uint8Array, at: number): boolean {
  return PAR1.every((b, i) => bytes[at + i] === b);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A size that differs from the one recorded for the file, in words ("truncated: 2,000 of 5,120 bytes"). */
export function sizeProblem(actual: number, recorded: number): string {
  const n = (bytes: number) => bytes.toLocaleString("en-US");
  if (actual === 0) return `empty (0 bytes; ${n(recorded)} recorded)`;
  if (actual < recorded) return `truncated: ${n(actual)} of ${n(recorded)} bytes`;
  return `${n(actual)} bytes, ${n(recorded)} recorded: replaced or damaged`;
}

/** The shortest complete Parquet file: PAR1, a footer length, PAR1. */
export const MIN_PARQUET_BYTES = 12;

/** Problems the last 8 bytes of a Parquet file of `size` bytes show (footer length and magic), or null. */
export function parquetTailProblem(tail: Uint8Array, size: number): string | null {
  if (size === 0) return "empty (0 bytes)";
  if (size < MIN_PARQUET_BYTES || tail.byteLength < 8) return `${size} bytes, too short for a Parquet file`;
  const end = tail.byteLength - 4;
  if (!hasPar1(tail, end)) return "no PAR1 at its end: truncated, or not a Parquet file";
  const footer = new DataView(tail.buffer, tail.byteOffset, tail.byteLength).getUint32(end - 4, true);
  if (footer > size - MIN_PARQUET_BYTES) return `its footer says ${footer} bytes, more than the ${size}-byte file holds: truncated or damaged`;
  return null;
}

/** Whether a Parquet file decodes whole (see the module comment); reads nothing but `bytes`. */
export async function parquetProblem(bytes: Uint8Array): Promise<string | null> {
  const size = bytes.byteLength;
  const tail = parquetTailProblem(bytes.subarray(Math.max(0, size - 8)), size);
  if (tail) return tail;
  if (!hasPar1(bytes, 0)) return "no PAR1 at its start: not a Parquet file";
  const footerLength = new DataView(bytes.buffer, bytes.byteOffset, size).getUint32(size - 8, true);
  const dataEnd = size - 8 - footerLength;
  const [{ parquetMetadata, parquetRead }, { compressors }] = await Promise.all([import("hyparquet"), import("hyparquet-compressors")]);
  const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + size) as ArrayBuffer;
  let metadata: ReturnType<typeof parquetMetadata>;
  try {
    metadata = parquetMetadata(file);
  } catch (error) {
    return `its footer does not decode: ${messageOf(error)}`;
  }
  let rows = 0n;
  for (const [index, group] of metadata.row_groups.entries()) {
    rows += BigInt(group.num_rows);
    for (const column of group.columns) {
      const meta = column.meta_data;
      const name = meta?.path_in_schema.join(".") ?? "?";
      if (!meta) return `row group ${index}, column ${name}: no column metadata`;
      const dictionary = meta.dictionary_page_offset !== undefined && meta.dictionary_page_offset > 0n ? Number(meta.dictionary_page_offset) : null;
      const start = dictionary !== null && dictionary < Number(meta.data_page_offset) ? dictionary : Number(meta.data_page_offset);
      const end = start + Number(meta.total_compressed_size);
      if (start < 4 || end > dataEnd) return `row group ${index}, column ${name}: its bytes ${start}-${end} lie outside the file's data (${dataEnd} bytes)`;
      const pages = pageChecksumProblem(bytes, start, end);
      if (pages) return `row group ${index}, column ${name}: ${pages}`;
    }
  }
  if (rows !== BigInt(metadata.num_rows)) return `its row groups hold ${rows} rows, its footer says ${metadata.num_rows}`;
  try {
    // No callbacks: hyparquet decodes every page of every column and assembles nothing.
    await parquetRead({ file, metadata, compressors });
  } catch (error) {
    return `does not decode: ${messageOf(error)}`;
  }
  return null;
}

/**
 * Walks the page headers of one column chunk (Thrift compact PageHeader: 1 type, 2 uncompressed
 * size, 3 compressed size, 4 crc) and checks each page's CRC-32 over its stored bytes, where the
 * writer recorded one (parquet-mr does by default). The pages must tile the chunk exactly.
 */
function pageChecksumProblem(bytes: Uint8Array, start: number, end: number): string | null {
  let at = start;
  let page = 0;
  while (at < end) {
    let header: { compressedSize: number; crc: number | null; next: number };
    try {
      header = readPageHeader(bytes, at, end);
    } catch (error) {
      return `page ${page} at byte ${at}: its header does not decode (${messageOf(error)})`;
    }
    const body = header.next + header.compressedSize;
    if (header.compressedSize < 0 || body > end) return `page ${page} at byte ${at} runs past the column chunk's end (${end})`;
    if (header.crc !== null && (crc32(bytes.subarray(header.next, body)) | 0) !== header.crc) return `page ${page} at byte ${at}: checksum mismatch`;
    at = body;
    page++;
  }
  return null;
}

class ThriftReader {
  private readonly bytes: Uint8Array;
  private readonly end: number;
  at: number;

  constructor(bytes: Uint8Array, at: number, end: number) {
    this.bytes = bytes;
    this.at = at;
    this.end = end;
  }

  byte(): number {
    if (this.at >= this.end) throw new Error("ends early");
    return this.bytes[this.at++]!;
  }

  varint(): bigint {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      const b = this.byte();
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result;
      shift += 7n;
      if (shift > 70n) throw new Error("varint too long");
    }
  }

  zigzag(): number {
    const n = this.varint();
    return Number((n >> 1n) ^ -(n & 1n));
  }

  skip(type: number, depth = 0): void {
    if (depth > 32) throw new Error("nested too deep");
    switch (type) {
      case 1:
      case 2:
        return; // booleans live in the type nibble
      case 3:
        this.byte();
        return;
      case 4:
      case 5:
      case 6:
        this.varint();
        return;
      case 7:
        this.at += 8;
        return;
      case 8: {
        const length = Number(this.varint());
        this.at += length;
        if (this.at > this.end) throw new Error("ends early");
        return;
      }
      case 9:
      case 10: {
        const head = this.byte();
        const count = head >> 4 === 15 ? Number(this.varint()) : head >> 4;
        for (let i = 0; i < count; i++) this.skip(head & 0x0f, depth + 1);
        return;
      }
      case 11: {
        const count = Number(this.varint());
        if (count === 0) return;
        const types = this.byte();
        for (let i = 0; i < count; i++) {
          this.skip(types >> 4, depth + 1);
          this.skip(types & 0x0f, depth + 1);
        }
        return;
      }
      case 12:
        this.struct(() => false, depth + 1);
        return;
      default:
        throw new Error(`unknown field type ${type}`);
    }
  }

  /** Reads a struct's fields; `read(id, type)` consumes the ones it wants and returns true. */
  struct(read: (id: number, type: number) => boolean, depth = 0): void {
    let id = 0;
    for (;;) {
      const head = this.byte();
      if (head === 0) return;
      const type = head & 0x0f;
      id = head >> 4 === 0 ? this.zigzag() : id + (head >> 4);
      if (!read(id, type)) this.skip(type, depth);
    }
  }
}

function readPageHeader(bytes: Uint8Array, at: number, end: number): { compressedSize: number; crc: number | null; next: number } {
  const reader = new ThriftReader(bytes, at, end);
  let compressedSize: number | null = null;
  let crc: number | null = null;
  reader.struct((id, type) => {
    if (type !== 5) return false;
    if (id === 3) compressedSize = reader.zigzag();
    else if (id === 4) crc = reader.zigzag();
    else return false;
    return true;
  });
  if (compressedSize === null) throw new Error("no compressed page size");
  return { compressedSize, crc, next: reader.at };
}

/** Whether a JSON-lines file (a commit, a V2 JSON checkpoint) parses whole: UTF-8, every non-blank line a JSON object. */
export function jsonLinesProblem(bytes: Uint8Array): string | null {
  if (bytes.byteLength === 0) return "empty (0 bytes)";
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return "not UTF-8 text: damaged, or not a JSON file";
  }
  const lines = text.split("\n");
  let objects = 0;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === "") continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      return `line ${i + 1} is not valid JSON: truncated or damaged`;
    }
    if (value === null || typeof value !== "object" || Array.isArray(value)) return `line ${i + 1} is not a JSON object`;
    objects++;
  }
  return objects === 0 ? "holds no JSON line" : null;
}

/** RoaringBitmapArray magic numbers (little-endian): the native and the portable serialization. */
const ROARING_MAGICS = new Set([1681511376, 1681511377]);

/** Whether a deletion-vector file is whole: every entry's size, magic and CRC-32, to its last byte. */
export function deletionVectorProblem(bytes: Uint8Array): string | null {
  const size = bytes.byteLength;
  if (size === 0) return "empty (0 bytes)";
  if (bytes[0] !== 1) return `starts with format version ${bytes[0]}, not 1: not a deletion vector file`;
  const view = new DataView(bytes.buffer, bytes.byteOffset, size);
  let at = 1;
  while (at < size) {
    if (at + 4 > size) return `truncated: the entry at byte ${at} has no size`;
    const length = view.getUint32(at, false);
    if (at + 4 + length + 4 > size) return `truncated: the entry at byte ${at} needs ${length + 8} bytes, ${size - at} are left`;
    if (length < 4 || !ROARING_MAGICS.has(view.getUint32(at + 4, true))) return `the entry at byte ${at} is not a RoaringBitmapArray (no magic): damaged`;
    const stored = view.getUint32(at + 4 + length, false);
    if (crc32(bytes.subarray(at + 4, at + 4 + length)) !== stored) return `the entry at byte ${at} fails its checksum: damaged`;
    at += 8 + length;
  }
  return null;
}
