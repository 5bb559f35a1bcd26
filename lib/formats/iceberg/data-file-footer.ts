/**
 * The footer of a Parquet data file (Thrift FileMetaData + its 4-byte length + "PAR1"), so a head
 * can inline it: one suffix read of TAIL_PROBE_BYTES usually holds it whole (a head write reads
 * the footer of every data file a commit adds, so a GET saved here is one per new file); a larger
 * footer's rest comes in one more ranged read of the same object.
 */
import type { ObjectStore } from "../../store/object-store.ts";
import { CorruptFileError, UnsupportedFeatureError } from "../errors.ts";
import type { DataFileFooter } from "../data-file-footer.ts";

const MAGIC = "PAR1";
const TAIL_PROBE_BYTES = 64 * 1024;
const TRAILER_BYTES = 8;

export async function readParquetFooter(store: ObjectStore, path: string): Promise<DataFileFooter> {
  const uri = store.uriOf(path);
  if (!path.toLowerCase().endsWith(".parquet")) throw new UnsupportedFeatureError(uri, "only Parquet data file footers are read");
  const tail = await store.get(path, { suffixLength: TAIL_PROBE_BYTES });
  const end = tail.body.length;
  if (end < TRAILER_BYTES || new TextDecoder().decode(tail.body.subarray(end - 4)) !== MAGIC) throw new CorruptFileError(uri, "not a Parquet file (no PAR1 at its end)");
  const length = new DataView(tail.body.buffer, tail.body.byteOffset + end - TRAILER_BYTES, 4).getUint32(0, true);
  if (length + 12 > tail.size) throw new CorruptFileError(uri, `Parquet footer length ${length} exceeds the file (${tail.size} bytes)`);
  const wanted = length + TRAILER_BYTES;
  if (wanted <= end) return { path, fileSize: tail.size, offset: tail.size - wanted, bytes: tail.body.slice(end - wanted) };
  const footer = await store.get(path, { suffixLength: wanted });
  if (footer.etag !== tail.etag) throw new CorruptFileError(uri, "data file changed between two reads of its footer");
  return { path, fileSize: footer.size, offset: footer.size - footer.body.length, bytes: footer.body };
}
