/**
 * Reads the footer of a Delta data file (Parquet): the Thrift FileMetaData that ends the file,
 * followed by its 4-byte little-endian length and the `PAR1` magic. A reader needs exactly these
 * bytes before it can read any row, so a head can inline them. One suffix read usually covers
 * the footer; a second ranged read fetches the rest of a larger one. The bytes are checked by
 * decoding them (hyparquet) before they are returned. Encrypted footers (`PARE`) are refused.
 */
import type { ObjectStore } from "../../store/object-store.ts";
import type { DataFileFooter } from "../data-file-footer.ts";
import { CorruptFileError, UnsupportedFeatureError } from "../errors.ts";

const TAIL_PROBE_BYTES = 64 * 1024;
const TRAILER_BYTES = 8;

export async function readParquetFooter(store: ObjectStore, path: string): Promise<DataFileFooter> {
  const uri = store.uriOf(path);
  const tail = await store.get(path, { suffixLength: TAIL_PROBE_BYTES });
  const fileSize = tail.size;
  if (tail.body.length < TRAILER_BYTES + 4) throw new CorruptFileError(uri, `data file is ${fileSize} bytes, too short for a Parquet footer`);
  const end = tail.body.length;
  const magic = new TextDecoder().decode(tail.body.subarray(end - 4));
  if (magic === "PARE") throw new UnsupportedFeatureError(uri, "the Parquet footer is encrypted");
  if (magic !== "PAR1") throw new CorruptFileError(uri, "not a Parquet file (no PAR1 magic at its end)");
  const length = new DataView(tail.body.buffer, tail.body.byteOffset + end - TRAILER_BYTES, 4).getUint32(0, true);
  const start = fileSize - TRAILER_BYTES - length;
  if (start < 4) throw new CorruptFileError(uri, `Parquet footer length ${length} does not fit a ${fileSize}-byte file`);
  const tailStart = fileSize - end;
  let bytes: Uint8Array;
  if (start >= tailStart) {
    bytes = tail.body.slice(start - tailStart);
  } else {
    const head = await store.get(path, { offset: start, length: tailStart - start });
    if (head.etag !== tail.etag) throw new CorruptFileError(uri, "data file changed between two reads of its footer");
    bytes = new Uint8Array(fileSize - start);
    bytes.set(head.body, 0);
    bytes.set(tail.body, tailStart - start);
  }
  // Loaded here, not with the module: every format is registered in every process, and a
  // process that never reads a Delta table need not hold hyparquet.
  const { parquetMetadata } = await import("hyparquet");
  try {
    parquetMetadata(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer);
  } catch (error) {
    throw new CorruptFileError(uri, `the Parquet footer does not decode: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  return { path, fileSize, offset: start, bytes };
}
