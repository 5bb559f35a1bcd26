/**
 * One read of an Iceberg table: its current metadata file (chosen by sequence, or given by the
 * caller when a catalog owns the pointer), the decoded metadata, the snapshots in version
 * order and the path resolver for its location.
 */
import type { ObjectStore } from "../../store/object-store.ts";
import { NotFoundError } from "../../store/errors.ts";
import { CorruptFileError, NotATableError, type CatalogPointerRequiredError } from "../errors.ts";
import {
  catalogTableRefusal,
  latestMetadataFile,
  readMetadataFile,
  readVersionHint,
  type ReadMetadata,
  type SequencedMetadataFileInfo,
  type VersionHint,
} from "./metadata-files.ts";
import { METADATA_PREFIX, VERSION_HINT_KEY, versionHintKeys } from "./metadata-names.ts";
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
  /** The listing and hint already read (lookAtMetadata), when `metadataKey` is not given: not read again. */
  look?: MetadataLook;
}

/** What a catalog-less table's current metadata file is chosen by: the newest listed metadata file and the version hint. */
export interface MetadataLook {
  latest: SequencedMetadataFileInfo | null;
  hint: VersionHint | null;
}

/** One LIST of `metadata/` and the version hint's GET, side by side. */
export async function lookAtMetadata(store: ObjectStore): Promise<MetadataLook> {
  const [latest, hint] = await Promise.all([latestMetadataFile(store), readVersionHint(store)]);
  return { latest, hint };
}

/**
 * Why the newest metadata file of a table without a named pointer cannot be taken as current, or
 * null: every version name is catalog-named (a `v<N>` file would have been chosen instead) and no
 * version hint says a file-system writer keeps the pointer. Only the catalog knows then.
 */
export function unnamedCatalogPointerRefusal(store: ObjectStore, look: MetadataLook): CatalogPointerRequiredError | null {
  if (look.hint !== null || look.latest === null) return null;
  return catalogTableRefusal(store, look.latest.key);
}

/** The table at its current metadata file: `options.metadataKey` when given, else the newest by the listing and the hint (refused when only a catalog can say). */
export async function openIcebergTable(store: ObjectStore, options: OpenOptions = {}): Promise<IcebergTable> {
  const { latest, hint } = options.metadataKey !== undefined ? { latest: null, hint: await readVersionHint(store) } : (options.look ?? (await lookAtMetadata(store)));
  const refusal = options.metadataKey === undefined ? unnamedCatalogPointerRefusal(store, { latest, hint }) : null;
  if (refusal) throw refusal;
  const hinted = options.metadataKey === undefined && hint !== null && hint.sequence === null ? await hintedMetadataKey(store, hint.text) : null;
  const metadataKey = options.metadataKey ?? hinted ?? latest?.key;
  if (metadataKey === undefined) throw new NotATableError(store.uri, `not an Iceberg table: no metadata files under ${METADATA_PREFIX}`);
  const read = await readMetadataFile(store, metadataKey);
  if (hinted !== null && latest !== null) {
    // The hint names a file by its stem, the listing a numbered one: the hinted file is current
    // only when it was written after the numbered one (its metadata-log names it).
    const resolve = icebergPathResolver(read.metadata.location, store.uri);
    const logged = read.metadata.metadataLog.some((entry) => {
      const resolved = resolve(entry.file);
      return resolved.kind === "key" && resolved.key === latest.key;
    });
    if (!logged) {
      throw new CorruptFileError(
        store.uriOf(VERSION_HINT_KEY),
        `the version hint names ${metadataKey}, whose metadata-log does not name ${latest.key}, the highest-numbered metadata file: which is current is unclear; pass --metadata-location`,
      );
    }
  }
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

/** The existing metadata file a version hint holding a stem ("final" for `vfinal.metadata.json`) names, or null. */
export async function hintedMetadataKey(store: ObjectStore, text: string): Promise<string | null> {
  for (const key of versionHintKeys(text)) {
    try {
      await store.head(key);
      return key;
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error;
    }
  }
  return null;
}
