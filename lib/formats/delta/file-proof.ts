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
import { pageChecksumProblem } from "./parquet-pages.ts";

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

/**
 * Whether a Parquet file decodes whole (see the module comment); reads nothing but `bytes`.
 * `decode: false`: all but the decoding of every page, for a caller that decodes every column itself.
 */
export async function parquetProblem(bytes: Uint8Array, { decode = true }: { decode?: boolean } = {}): Promise<string | null> {
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
  if (!decode) return null;
  try {
    // No callbacks: hyparquet decodes every page of every column and assembles nothing.
    await parquetRead({ file, metadata, compressors });
  } catch (error) {
    return `does not decode: ${messageOf(error)}`;
  }
  return null;
}

/** Whether a JSON-lines file (a commit, a V2 JSON checkpoint) parses whole: UTF-8, every non-blank line a JSON object. */
export function jsonLinesProblem(bytes: Uint8Array): string | null {
  const read = jsonLineRecords(bytes);
  return typeof read === "string" ? read : null;
}

/** jsonLinesProblem's records, each with its line number (from 1), so they need not be parsed again; or the problem. */
export function jsonLineRecords(bytes: Uint8Array): { line: number; record: Record<string, unknown> }[] | string {
  if (bytes.byteLength === 0) return "empty (0 bytes)";
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return "not UTF-8 text: damaged, or not a JSON file";
  }
  const lines = text.split("\n");
  const records: { line: number; record: Record<string, unknown> }[] = [];
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
    records.push({ line: i + 1, record: value as Record<string, unknown> });
  }
  return records.length === 0 ? "holds no JSON line" : records;
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
