/**
 * Lance's proof that a file a kept version depends on is whole (TableFormat.proveFile), read as
 * little of it as tells: a data file's 40-byte footer, a deletion file whole (they are small).
 *
 * - manifests: the cleanup scan decoded every kept version's manifest whole already;
 * - data files (`.lance`): end in "LANC" with a footer whose offsets lie inside the file
 *   (lance-file's reader checks the same before reading any column);
 * - deletion files: `.arrow` is an Arrow IPC file (its footer and messages decoded whole), `.bin` a
 *   serialized 32-bit Roaring bitmap (its cookie; rust/lance-table/src/io/deletion.rs);
 * - index files the manifest lists (newer Lance records each with its size): `.lance` ones as
 *   data files; others (`index.idx`...) by their size alone;
 * - transaction files are not read to serve a version (conflict resolution only): their
 *   existence is all a kept version needs of them.
 */
import { checkIpcFile } from "../../arrow/ipc-file-check.ts";
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
 * An Arrow IPC file whole as far as its metadata tells (lib/arrow/ipc-file-check.ts): magic at both
 * ends, a footer naming its schema and record batches, each batch's message and body inside the
 * file. The bodies are not decoded: Lance compresses them with zstd.
 */
async function proveArrowDeletionFile(store: ObjectStore, key: string): Promise<string | null> {
  const { body } = await store.get(key);
  return checkIpcFile(body);
}

async function proveRoaringDeletionFile(store: ObjectStore, key: string): Promise<string | null> {
  const head = (await store.get(key, { offset: 0, length: 4 })).body;
  if (head.length < 4) return "too short for a Roaring bitmap";
  const cookie = new DataView(head.buffer, head.byteOffset, 4).getUint32(0, true);
  if (cookie === ROARING_COOKIE_NO_RUNS || (cookie & 0xffff) === ROARING_COOKIE) return null;
  return "not a Roaring bitmap: its first bytes are no Roaring cookie";
}
