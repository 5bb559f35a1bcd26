/**
 * Lance's proof that a file a kept version depends on is whole (TableFormat.proveFile), read as
 * little of it as tells: a data file's 40-byte footer, a deletion file whole (they are small).
 *
 * - manifests: the cleanup scan decoded every kept version's manifest whole already;
 * - data files (`.lance`): end in "LANC" with a footer whose offsets lie inside the file
 *   (lance-file's reader checks the same before reading any column);
 * - deletion files: `.arrow` is an Arrow IPC file (decoded whole with apache-arrow), `.bin` a
 *   serialized 32-bit Roaring bitmap (its cookie; rust/lance-table/src/io/deletion.rs);
 * - index files the manifest lists (newer Lance records each with its size): `.lance` ones as
 *   data files; others (`index.idx`...) by their size alone;
 * - transaction files are not read to serve a version (conflict resolution only): their
 *   existence is all a kept version needs of them.
 */
import type { FileReference } from "../table-format.ts";
import type { ObjectInfo, ObjectStore } from "../../store/object-store.ts";

const V2_FOOTER_BYTES = 40;
const LEGACY_FOOTER_BYTES = 16;
const ROARING_COOKIE_NO_RUNS = 12346;
const ROARING_COOKIE = 12347;

export async function proveLanceFile(store: ObjectStore, file: FileReference, listed: ObjectInfo): Promise<string | null> {
  // Index files in Lance's file format (btree pages, vector partitions) end as data files do.
  if (file.role === "data" || (file.role === "index" && file.path.endsWith(".lance"))) return proveDataFile(store, file.path, listed.size);
  if (file.role === "delete") return file.path.endsWith(".arrow") ? proveArrowDeletionFile(store, file.path) : proveRoaringDeletionFile(store, file.path);
  return null;
}

async function proveDataFile(store: ObjectStore, key: string, size: number): Promise<string | null> {
  if (size < LEGACY_FOOTER_BYTES) return `${size} bytes: too short for a Lance data file`;
  const { body } = await store.get(key, { suffixLength: Math.min(size, V2_FOOTER_BYTES) });
  const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
  const end = body.length;
  if (new TextDecoder().decode(body.subarray(end - 4)) !== "LANC") return "not a Lance data file: no LANC magic at its end";
  const major = view.getUint16(end - 8, true);
  const minor = view.getUint16(end - 6, true);
  const legacy = major === 0 && minor < 3;
  if (legacy) {
    const metadataPos = Number(view.getBigInt64(end - LEGACY_FOOTER_BYTES, true));
    return metadataPos >= 0 && metadataPos < size ? null : `its footer points at byte ${metadataPos} of ${size}: damaged`;
  }
  if (end < V2_FOOTER_BYTES) return `${size} bytes: too short for a Lance ${major}.${minor} data file`;
  const footerStart = size - V2_FOOTER_BYTES;
  for (const offset of [0, 8, 16]) {
    const position = Number(view.getBigUint64(end - V2_FOOTER_BYTES + offset, true));
    if (position > footerStart) return `its footer points at byte ${position} of ${size}: damaged`;
  }
  return null;
}

/**
 * An Arrow IPC file whole as a file: "ARROW1" at both ends, and its footer (the schema and the
 * record batch blocks) decodes and names a batch. The batches' bodies are not decoded:
 * Lance compresses them, which apache-arrow's JavaScript reader does not implement.
 */
async function proveArrowDeletionFile(store: ObjectStore, key: string): Promise<string | null> {
  const { body } = await store.get(key);
  const magic = (bytes: Uint8Array) => new TextDecoder().decode(bytes) === "ARROW1";
  if (body.length < 6 + 2 + 4 + 6 || !magic(body.subarray(0, 6)) || !magic(body.subarray(body.length - 6))) return "not an Arrow IPC file: no ARROW1 magic at both ends";
  // Arrow loads with the first deletion file proven: a function that never proves one never loads it.
  const { RecordBatchFileReader } = await import("./arrow-file-reader.ts");
  try {
    const reader = RecordBatchFileReader.from(body);
    reader.open();
    if (!reader.schema) return "not a readable Arrow file: no schema in its footer";
    return reader.numRecordBatches > 0 ? null : "damaged Arrow file: its footer names no record batch";
  } catch (error) {
    return `not a readable Arrow file: ${(error as Error).message.split("\n")[0]}`;
  }
}

async function proveRoaringDeletionFile(store: ObjectStore, key: string): Promise<string | null> {
  const head = (await store.get(key, { offset: 0, length: 4 })).body;
  if (head.length < 4) return "too short for a Roaring bitmap";
  const cookie = new DataView(head.buffer, head.byteOffset, 4).getUint32(0, true);
  if (cookie === ROARING_COOKIE_NO_RUNS || (cookie & 0xffff) === ROARING_COOKIE) return null;
  return "not a Roaring bitmap: its first bytes are no Roaring cookie";
}
