/**
 * Finding and reading a table's metadata files. The current metadata of a table without a
 * catalog is the metadata file with the highest sequence (iceberg.md §1: Java's
 * HadoopTableOperations reads the hint, then probes v<N+1>, v<N+2>... so the highest existing
 * file wins); it is chosen by the number in its name, never by listing order (`v10` lists
 * before `v9`). Two files claiming the highest sequence (a catalog table whose failed commit
 * left a second `NNNNN-uuid` file) cannot be told apart without the catalog: that is refused.
 */
import { gunzipSync } from "node:zlib";
import type { ObjectInfo, ObjectStore } from "../../store/object-store.ts";
import { NotFoundError } from "../../store/errors.ts";
import { CatalogPointerRequiredError, CorruptFileError, NotATableError } from "../errors.ts";
import { METADATA_PREFIX, parseAnyMetadataKey, parseMetadataKey, parseVersionHint, VERSION_HINT_KEY, type MetadataFileName, type SequencedMetadataName } from "./metadata-names.ts";
import { parseTableMetadata, type IcebergTableMetadata } from "./table-metadata.ts";

export interface MetadataFileInfo extends ObjectInfo {
  name: MetadataFileName;
}

/** A metadata file with a version name (vN, NNNNN-uuid): what a listing can order. */
export interface SequencedMetadataFileInfo extends ObjectInfo {
  name: SequencedMetadataName;
}

export interface ReadMetadata {
  file: MetadataFileInfo;
  metadata: IcebergTableMetadata;
  /** The JSON text (decompressed when the file is gzip). */
  text: string;
  /** The file's bytes as stored. */
  stored: Uint8Array;
}

/** Every table metadata file directly under `metadata/`, ascending by sequence (ties by key). */
export async function listMetadataFiles(store: ObjectStore): Promise<SequencedMetadataFileInfo[]> {
  const files: SequencedMetadataFileInfo[] = [];
  for await (const object of store.list(METADATA_PREFIX, { delimiter: "/" })) {
    const name = parseMetadataKey(object.key);
    if (name) files.push({ ...object, name });
  }
  return files.sort((a, b) => a.name.sequence - b.name.sequence || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** The current metadata file of a catalog-less table, or null when `metadata/` holds none. */
export async function latestMetadataFile(store: ObjectStore): Promise<SequencedMetadataFileInfo | null> {
  return pickLatest(await listMetadataFiles(store), store);
}

/**
 * A folder with `v<N>` files is a file-system table, whose versions are those files alone
 * (another name there is not its commit); otherwise the `NNNNN-uuid` files are the versions.
 */
export function pickLatest(files: readonly SequencedMetadataFileInfo[], store: ObjectStore): SequencedMetadataFileInfo | null {
  const hadoop = files.filter((f) => f.name.naming === "hadoop");
  const candidates = hadoop.length > 0 ? hadoop : files;
  if (candidates.length === 0) return null;
  const top = candidates[candidates.length - 1]!;
  const tied = candidates.filter((f) => f.name.sequence === top.name.sequence);
  if (tied.length > 1) {
    throw new CorruptFileError(
      store.uriOf(METADATA_PREFIX),
      `metadata files ${tied.map((f) => f.key).join(", ")} all claim sequence ${top.name.sequence}: only the table's catalog knows which is current (pass the metadata location)`,
    );
  }
  return top;
}

/**
 * A table whose metadata files are catalog-named only (`NNNNN-uuid.metadata.json`): the catalog
 * (Glue, Hive, REST) holds the pointer, and the highest-numbered file is only the newest one
 * written, not the current one: a commit whose swap the catalog refused, or whose writer died
 * before the swap, leaves such a file behind (Java keeps it when the commit state is unknown).
 * Cleaning against it would delete what the catalog's metadata still reaches (iceberg-java's
 * RemoveOrphanFiles always works from the table the catalog loads), and reading it would answer
 * with a table state that never existed: both need the catalog's word.
 */
export function refuseCatalogTable(store: ObjectStore, key: string): void {
  const refusal = catalogTableRefusal(store, key);
  if (refusal) throw refusal;
}

/** Why a table whose newest metadata file `key` a catalog names cannot be read or cleaned by it, or null. */
export function catalogTableRefusal(store: ObjectStore, key: string): CatalogPointerRequiredError | null {
  if (parseMetadataKey(key)?.naming !== "catalog") return null;
  return new CatalogPointerRequiredError(
    store.uri,
    `metadata files are named NNNNN-uuid (newest ${key}): a catalog owns which one is current, and the newest may be a commit it never accepted; give the catalog's word: --glue-table <database.table>, or --catalog <uri> with --catalog-table <namespace.table> (openTable(location, { catalog }) in code), or pass --metadata-location with the metadata file the catalog names (a deployment: its glueTables or restCatalogTables setting); nothing read past the listing, nothing written or deleted`,
  );
}

/**
 * Every metadata JSON file directly under `metadata/`, whatever its name (vN, NNNNN-uuid, or any
 * other `*.metadata.json`), in listing order: what may supersede a metadata file someone named.
 */
export async function listAllMetadataFiles(store: ObjectStore): Promise<MetadataFileInfo[]> {
  const files: MetadataFileInfo[] = [];
  for await (const object of store.list(METADATA_PREFIX, { delimiter: "/" })) {
    const name = parseAnyMetadataKey(object.key);
    if (name) files.push({ ...object, name });
  }
  return files;
}

/** The metadata file at `key` (for a table whose catalog gave the location). */
export async function metadataFileAt(store: ObjectStore, key: string): Promise<MetadataFileInfo> {
  const name = parseAnyMetadataKey(key);
  if (!name) throw new NotATableError(store.uriOf(key), "not an Iceberg table metadata file name (metadata/*.metadata.json)");
  return { ...(await store.head(key)), name };
}

export interface VersionHint {
  sequence: number | null;
  text: string;
  info: ObjectInfo;
}

/**
 * What `metadata/version-hint.text` holds, or null when there is none: its number (null when it
 * holds none) and its text (a writer may store a file stem there instead).
 */
export async function readVersionHint(store: ObjectStore): Promise<VersionHint | null> {
  try {
    const got = await store.get(VERSION_HINT_KEY);
    const text = new TextDecoder().decode(got.body);
    return { sequence: parseVersionHint(text), text, info: got };
  } catch (error) {
    if (error instanceof NotFoundError) return null;
    throw error;
  }
}

function isGzip(bytes: Uint8Array): boolean {
  return bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b;
}

/** Reads and decodes one metadata file; CorruptFileError naming it when it is not table metadata. */
export async function readMetadataFile(store: ObjectStore, key: string): Promise<ReadMetadata> {
  const name = parseAnyMetadataKey(key);
  if (!name) throw new NotATableError(store.uriOf(key), "not an Iceberg table metadata file name (metadata/*.metadata.json)");
  const got = await store.get(key);
  let bytes = got.body;
  if (name.gzip || isGzip(bytes)) {
    try {
      bytes = gunzipSync(bytes);
    } catch (error) {
      throw new CorruptFileError(store.uriOf(key), `gzip metadata file does not decompress (${(error as Error).message})`, { cause: error });
    }
  }
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch (error) {
    throw new CorruptFileError(store.uriOf(key), "metadata file is not UTF-8 text", { cause: error });
  }
  const metadata = parseTableMetadata(text, store.uriOf(key));
  const { body: _body, ...info } = got;
  return { file: { ...info, name }, metadata, text, stored: got.body };
}
