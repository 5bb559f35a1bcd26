/**
 * The footer of a Parquet data file (Thrift FileMetaData + its 4-byte length + "PAR1"), read
 * with two ranged GETs from the end, so a head can inline it.
 */
import type { ObjectStore } from "../../store/object-store.ts";
import { CorruptFileError, UnsupportedFeatureError } from "../errors.ts";
import type { DataFileFooter } from "../data-file-footer.ts";

const MAGIC = "PAR1";

export async function readParquetFooter(store: ObjectStore, path: string): Promise<DataFileFooter> {
  const uri = store.uriOf(path);
  if (!path.toLowerCase().endsWith(".parquet")) throw new UnsupportedFeatureError(uri, "only Parquet data file footers are read");
  const tail = await store.get(path, { suffixLength: 8 });
  const bytes = tail.body;
  if (bytes.length < 8 || new TextDecoder().decode(bytes.subarray(4)) !== MAGIC) throw new CorruptFileError(uri, "not a Parquet file (no PAR1 at its end)");
  const length = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(0, true);
  if (length + 12 > tail.size) throw new CorruptFileError(uri, `Parquet footer length ${length} exceeds the file (${tail.size} bytes)`);
  const footer = await store.get(path, { suffixLength: length + 8 });
  return { path, fileSize: footer.size, offset: footer.size - footer.body.length, bytes: footer.body };
}
