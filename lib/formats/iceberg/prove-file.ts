/**
 * Iceberg's proof that a file a kept snapshot is read through is whole (TableFormat.proveFile),
 * each file read at most once:
 *   - metadata JSON (the current file, the metadata-log's; role "commit" or "metadata"): parses
 *     whole, gzip included, as table metadata;
 *   - manifest lists and manifests (roles "manifest-list", "manifest"): decode whole, every block
 *     to the file's last byte (avro.ts checks the container's framing: avsc alone stops quietly at
 *     a cut, and a shorter manifest list would make the files it no longer names look unreferenced).
 *     The file is read again either way; when its bytes are the very bytes `reader` decoded whole
 *     (by their SHA-256: the run's scan reads every snapshot's manifests whole and fails on any
 *     it cannot), that decode is the proof, and they are not decoded a second time;
 *   - content files (data, delete, statistics): the size the manifest records, and the magic their
 *     file format ends with: Parquet `PAR1`, Puffin `PFA1`, ORC's postscript `ORC`; Avro data files
 *     start with `Obj\x01`. The format is told by the name's extension; a name without a known one
 *     passes with any of these magics;
 *   - the version hint is a hint (readers list `metadata/` when it says nothing usable): its
 *     existence is all a snapshot needs of it.
 * Returns null when the file is whole, else the problem in a few words.
 */
import type { FileReference } from "../table-format.ts";
import type { ObjectInfo, ObjectStore } from "../../store/object-store.ts";
import { TableFormatError } from "../errors.ts";
import { decodeManifest, decodeManifestList } from "./manifests.ts";
import { readMetadataFile } from "./metadata-files.ts";
import type { IcebergFileReader } from "./snapshot-files.ts";
import { parseAnyMetadataKey, VERSION_HINT_KEY } from "./metadata-names.ts";

const MAGIC_BYTES = 4;

export async function proveIcebergFile(store: ObjectStore, file: FileReference, listed: ObjectInfo, reader?: IcebergFileReader): Promise<string | null> {
  const key = file.path;
  if (key === VERSION_HINT_KEY) return null;
  if (listed.size === 0) return "it is empty (0 bytes)";
  if (parseAnyMetadataKey(key) && (file.role === "commit" || file.role === "metadata")) return problemOf(store.uriOf(key), () => readMetadataFile(store, key));
  if (file.role === "manifest-list" || file.role === "manifest") {
    return problemOf(store.uriOf(key), async () => {
      const { body } = await store.get(key);
      // The same bytes the run's reader decoded whole already (the scan read every kept snapshot's manifests): proven, not decoded again.
      if (reader?.decodedWhole(key, body)) return;
      // The sequence number a manifest inherits from its listing changes no byte of it: 0 reads any entry.
      await (file.role === "manifest-list" ? decodeManifestList(body, store.uriOf(key)) : decodeManifest(body, store.uriOf(key), { sequenceNumber: 0n }));
    });
  }
  if (key.endsWith(".avro") && file.role === "metadata") {
    // Avro loads with the first Avro file read (as in manifests.ts): a deployment with no Iceberg table never loads it.
    return problemOf(store.uriOf(key), async () => (await import("./avro.ts")).decodeAvroContainer((await store.get(key)).body, store.uriOf(key)));
  }
  if (file.role === "data" || file.role === "delete" || file.role === "statistics") return proveContentFile(store, file, listed);
  return null;
}

/** The one-line problem `read` throws (without the URI the caller names anyway), or null when it reads. */
async function problemOf(uri: string, read: () => Promise<unknown>): Promise<string | null> {
  try {
    await read();
    return null;
  } catch (error) {
    if (!(error instanceof TableFormatError)) throw error;
    const message = error.message.startsWith(`${uri}: `) ? error.message.slice(uri.length + 2) : error.message;
    return message.split("\n")[0]!;
  }
}

type Magic = "parquet" | "puffin" | "orc" | "avro";

const BY_EXTENSION: Record<string, Magic> = { parquet: "parquet", puffin: "puffin", stats: "puffin", orc: "orc", avro: "avro" };
const NAMES: Record<Magic, string> = { parquet: "Parquet", puffin: "Puffin", orc: "ORC", avro: "Avro" };

async function proveContentFile(store: ObjectStore, file: FileReference, listed: ObjectInfo): Promise<string | null> {
  if (file.size !== undefined && listed.size !== file.size) {
    // Readers open a content file by the length its manifest records (iceberg-java's InputFile), so
    // one of another size is unreadable to them, whichever way it differs.
    const [have, recorded] = [listed.size, file.size].map((n) => n.toLocaleString("en-US"));
    return listed.size < file.size ? `truncated: ${have} of the ${recorded} bytes its manifest records` : `${have} bytes, where its manifest records ${recorded}`;
  }
  const extension = /\.([A-Za-z0-9]+)$/.exec(file.path)?.[1]?.toLowerCase();
  const expected = extension === undefined ? undefined : BY_EXTENSION[extension];
  if (listed.size < MAGIC_BYTES) return `${listed.size} bytes: too short for ${expected ? `a ${NAMES[expected]}` : "a data"} file`;
  if (expected === "avro") return (await startsAvro(store, file.path)) ? null : "not an Avro file: no Obj magic at its start";
  const tail = (await store.get(file.path, { suffixLength: MAGIC_BYTES })).body;
  const found = tailMagic(tail);
  if (expected !== undefined)
    return found === expected
      ? null
      : `not a ${NAMES[expected]} file: ${expected === "orc" ? "no ORC postscript" : `no ${expected === "parquet" ? "PAR1" : "PFA1"} magic`} at its end`;
  if (found !== null) return null;
  return (await startsAvro(store, file.path)) ? null : "not a Parquet, ORC, Avro or Puffin file: no magic at its end or start";
}

function tailMagic(tail: Uint8Array): Magic | null {
  const text = new TextDecoder("latin1").decode(tail);
  if (text === "PAR1") return "parquet";
  if (text === "PFA1") return "puffin";
  // ORC ends with its postscript, whose last field is the magic "ORC", then the postscript's length.
  if (text.slice(0, 3) === "ORC") return "orc";
  return null;
}

async function startsAvro(store: ObjectStore, key: string): Promise<boolean> {
  const head = (await store.get(key, { offset: 0, length: MAGIC_BYTES })).body;
  return head.length === MAGIC_BYTES && head[0] === 0x4f && head[1] === 0x62 && head[2] === 0x6a && head[3] === 0x01;
}
