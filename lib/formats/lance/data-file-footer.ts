/**
 * Reads the metadata tail of a Lance data file, the region Lance's own FileReader loads
 * before any data (rust/lance-file/src/reader.rs `read_all_metadata`):
 *
 * - v2 files (major.minor 0.3, 2.x) end in a 40-byte footer
 *   `u64 column_meta_start | u64 column_meta_offsets_start | u64 global_buff_offsets_start |
 *    u32 num_global_buffers | u32 num_columns | u16 major | u16 minor | "LANC"`;
 *   the tail starts at global buffer 0 (the schema), whose position the global-buffer offset
 *   table (`num_global_buffers` × `u64 position, u64 size`) gives.
 * - legacy files (0.0-0.2) end in `i64 metadata_pos | u16 major | u16 minor | "LANC"`; the tail
 *   starts at `metadata_pos`.
 *
 * One suffix read of TAIL_PROBE_BYTES (Lance's cloud block size) usually covers it; a second
 * ranged read fetches the rest when the metadata is larger.
 */
import type { ObjectStore } from "../../store/object-store.ts";
import type { DataFileFooter } from "../data-file-footer.ts";
import { CorruptFileError } from "../errors.ts";

const TAIL_PROBE_BYTES = 64 * 1024;
const V2_FOOTER_BYTES = 40;
const LEGACY_FOOTER_BYTES = 16;
const MAGIC = "LANC";

export async function readLanceDataFileFooter(store: ObjectStore, path: string): Promise<DataFileFooter> {
  const uri = store.uriOf(path);
  const tail = await store.get(path, { suffixLength: TAIL_PROBE_BYTES });
  const fileSize = tail.size;
  const tailStart = fileSize - tail.body.length;
  const start = metadataStart(tail.body, fileSize, uri);
  if (start >= tailStart) {
    return { path, fileSize, offset: start, bytes: tail.body.slice(start - tailStart) };
  }
  const head = await store.get(path, { offset: start, length: tailStart - start });
  if (head.etag !== tail.etag) throw new CorruptFileError(uri, "data file changed between two reads of its footer");
  const bytes = new Uint8Array(fileSize - start);
  bytes.set(head.body, 0);
  bytes.set(tail.body, tailStart - start);
  return { path, fileSize, offset: start, bytes };
}

/** Absolute offset where the metadata tail begins, from the last bytes of the file. */
function metadataStart(tail: Uint8Array, fileSize: number, uri: string): number {
  if (tail.length < LEGACY_FOOTER_BYTES) throw new CorruptFileError(uri, `data file is ${fileSize} bytes, too short for a Lance footer`);
  const view = new DataView(tail.buffer, tail.byteOffset, tail.byteLength);
  const end = tail.length;
  if (new TextDecoder().decode(tail.subarray(end - 4)) !== MAGIC) throw new CorruptFileError(uri, "not a Lance data file (no LANC magic at its end)");
  const major = view.getUint16(end - 8, true);
  const minor = view.getUint16(end - 6, true);
  const tailStart = fileSize - tail.length;
  if (major === 0 && minor <= 2) {
    return checkedOffset(view.getBigInt64(end - 16, true), fileSize - LEGACY_FOOTER_BYTES, uri, "metadata position");
  }
  if (!(major === 0 && minor === 3) && major !== 2) throw new CorruptFileError(uri, `unknown Lance file version ${major}.${minor}`);
  if (tail.length < V2_FOOTER_BYTES) throw new CorruptFileError(uri, `data file is ${fileSize} bytes, too short for a Lance v2 footer`);
  const footer = end - V2_FOOTER_BYTES;
  const globalBufferTable = checkedOffset(view.getBigUint64(footer + 16, true), fileSize - V2_FOOTER_BYTES, uri, "global buffer table");
  const globalBuffers = view.getUint32(footer + 24, true);
  const columnMetaStart = checkedOffset(view.getBigUint64(footer, true), fileSize, uri, "column metadata start");
  if (globalBuffers === 0) return columnMetaStart;
  // The table is tiny (16 bytes per buffer) and sits right before the footer: inside the probe.
  const entry = globalBufferTable - tailStart;
  if (entry < 0 || entry + 16 > footer) throw new CorruptFileError(uri, "global buffer table lies outside the file's tail");
  const schemaStart = checkedOffset(view.getBigUint64(entry, true), fileSize, uri, "schema buffer position");
  return Math.min(schemaStart, columnMetaStart);
}

function checkedOffset(value: bigint, limit: number, uri: string, what: string): number {
  if (value < 0n || value > BigInt(limit)) throw new CorruptFileError(uri, `${what} ${value} lies outside the ${limit}-byte file`);
  return Number(value);
}
