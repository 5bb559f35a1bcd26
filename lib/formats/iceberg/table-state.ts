/**
 * One read of an Iceberg table: its current metadata file (chosen by sequence, or given by the
 * caller when a catalog owns the pointer), the decoded metadata, the snapshots in version
 * order and the path resolver for its location.
 */
import type { ObjectStore } from "../../store/object-store.ts";
import { NotATableError } from "../errors.ts";
import { latestMetadataFile, readMetadataFile, readVersionHint, type ReadMetadata } from "./metadata-files.ts";
import { METADATA_PREFIX } from "./metadata-names.ts";
import { icebergPathResolver, type IcebergPathResolver } from "./table-paths.ts";
import { orderSnapshots, type OrderedSnapshots } from "./versions.ts";

export interface IcebergTable {
  store: ObjectStore;
  metadataKey: string;
  read: ReadMetadata;
  ordered: OrderedSnapshots;
  resolve: IcebergPathResolver;
  /** The version hint's content, when the table has `metadata/version-hint.text`. */
  versionHint: { sequence: number | null } | null;
}

export interface OpenOptions {
  /** The current metadata file's key, when a catalog (not the listing) says which it is. */
  metadataKey?: string;
}

export async function openIcebergTable(store: ObjectStore, options: OpenOptions = {}): Promise<IcebergTable> {
  const [latest, hint] = await Promise.all([
    options.metadataKey === undefined ? latestMetadataFile(store) : Promise.resolve(null),
    readVersionHint(store),
  ]);
  const metadataKey = options.metadataKey ?? latest?.key;
  if (metadataKey === undefined) throw new NotATableError(store.uri, `not an Iceberg table: no metadata files under ${METADATA_PREFIX}`);
  const read = await readMetadataFile(store, metadataKey);
  const uri = store.uriOf(metadataKey);
  return {
    store,
    metadataKey,
    read,
    ordered: orderSnapshots(read.metadata, uri),
    resolve: icebergPathResolver(read.metadata.location, store.uri),
    versionHint: hint ? { sequence: hint.sequence } : null,
  };
}
