/**
 * The files one snapshot needs: its manifest list, the manifests it lists (or, in format v1,
 * names inline), the content files those manifests hold as live (status ADDED or EXISTING;
 * DELETED entries are tombstones, not references), and its statistics files. Manifests are
 * shared between snapshots, so each is read once per reader (`IcebergFileReader` caches by key).
 *
 * A path that does not resolve to a key under the root: a content or statistics file outside
 * the root is reported and never deleted; a manifest list or manifest that cannot be read
 * (outside the root, unresolvable, missing) stops the read with one line naming the snapshot
 * and the path: the snapshot's files are unknown, and cleanup must not guess.
 */
import type { FileReference } from "../../model/file-reference.ts";
import type { ObjectStore } from "../../store/object-store.ts";
import { NotFoundError } from "../../store/errors.ts";
import { CorruptFileError, UnsupportedFeatureError } from "../errors.ts";
import type { UnresolvedReference } from "../table-format.ts";
import { decodeManifest, decodeManifestList, ENTRY_STATUS, type ManifestEntry, type ManifestFile } from "./manifests.ts";
import type { IcebergSnapshot, IcebergTableMetadata } from "./table-metadata.ts";
import type { IcebergPathResolver } from "./table-paths.ts";

export interface ReadManifest {
  file: ManifestFile;
  key: string;
  entries: ManifestEntry[];
}

export interface SnapshotFiles {
  snapshot: IcebergSnapshot;
  manifestListKey: string | null;
  manifests: ReadManifest[];
  /** Entries with status ADDED or EXISTING, data and delete manifests alike. */
  liveEntries: { entry: ManifestEntry; key: string | null; manifest: ManifestFile }[];
  references: FileReference[];
  unresolved: UnresolvedReference[];
}

/** Decoded manifests held per reader: enough for a table's shared manifests, bounded for a Lambda's memory. */
const CACHE_LIMIT = 512;

/** Reads manifest lists and manifests of one store, each key once (they never change once written). */
export class IcebergFileReader {
  readonly store: ObjectStore;
  private readonly lists = new Map<string, Promise<ManifestFile[]>>();
  private readonly manifests = new Map<string, Promise<ManifestEntry[]>>();

  constructor(store: ObjectStore) {
    this.store = store;
  }

  manifestList(key: string, what: string): Promise<ManifestFile[]> {
    return cached(this.lists, key, async () => decodeManifestList(await this.getBytes(key, what), this.store.uriOf(key)));
  }

  manifest(key: string, listed: ManifestFile, what: string): Promise<ManifestEntry[]> {
    // Inherited sequence numbers depend on the listing entry; a manifest is listed with one sequence number.
    return cached(this.manifests, `${key}\u0000${listed.sequenceNumber}`, async () => decodeManifest(await this.getBytes(key, what), this.store.uriOf(key), listed));
  }

  private async getBytes(key: string, what: string): Promise<Uint8Array> {
    try {
      return (await this.store.get(key)).body;
    } catch (error) {
      if (error instanceof NotFoundError) throw new CorruptFileError(this.store.uriOf(key), `${what} does not exist`, { cause: error });
      throw error;
    }
  }
}

function cached<T>(map: Map<string, Promise<T>>, key: string, load: () => Promise<T>): Promise<T> {
  let hit = map.get(key);
  if (!hit) {
    if (map.size >= CACHE_LIMIT) map.delete(map.keys().next().value!);
    hit = load();
    hit.catch(() => map.delete(key));
    map.set(key, hit);
  }
  return hit;
}

function roleOf(entry: ManifestEntry): "data" | "delete" {
  return entry.file.content === 0 ? "data" : "delete";
}

/** A key for a metadata-level path (manifest list, manifest) that must be read; throws when it cannot be. */
export function readableKey(resolve: IcebergPathResolver, path: string, uri: string, what: string): string {
  const resolved = resolve(path);
  if (resolved.kind === "key") return resolved.key;
  const problem = resolved.kind === "outside" ? "lies outside the table root, so it cannot be read here" : `cannot be resolved (${resolved.reason})`;
  throw new UnsupportedFeatureError(uri, `${what} ${path} ${problem}`);
}

/** The manifests a snapshot lists: from its manifest list (read), or a v1 snapshot's inline paths. */
export async function listedManifests(
  reader: IcebergFileReader,
  snapshot: IcebergSnapshot,
  resolve: IcebergPathResolver,
  metadataUri: string,
): Promise<{ listed: ManifestFile[]; manifestListKey: string | null }> {
  const what = `snapshot ${snapshot.id}`;
  if (snapshot.manifestList !== null) {
    const manifestListKey = readableKey(resolve, snapshot.manifestList, metadataUri, `${what}: manifest list`);
    return { listed: await reader.manifestList(manifestListKey, `manifest list of ${what} (named by ${metadataUri})`), manifestListKey };
  }
  const listed = snapshot.manifests.map((path) => ({
    path,
    length: null,
    partitionSpecId: 0,
    content: 0,
    sequenceNumber: 0n,
    minSequenceNumber: 0n,
    addedSnapshotId: null,
    addedFilesCount: null,
    existingFilesCount: null,
    deletedFilesCount: null,
  }));
  return { listed, manifestListKey: null };
}

/**
 * Reads the files of `snapshot` of `metadata`. `metadataUri` names the metadata file in errors.
 */
export async function readSnapshotFiles(
  reader: IcebergFileReader,
  metadata: IcebergTableMetadata,
  snapshot: IcebergSnapshot,
  resolve: IcebergPathResolver,
  metadataUri: string,
): Promise<SnapshotFiles> {
  const references: FileReference[] = [];
  const unresolved: UnresolvedReference[] = [];
  const what = `snapshot ${snapshot.id}`;
  const { listed, manifestListKey } = await listedManifests(reader, snapshot, resolve, metadataUri);
  if (manifestListKey !== null) references.push({ path: manifestListKey, role: "manifest-list" });

  const manifests = await Promise.all(
    listed.map(async (file) => {
      const key = readableKey(resolve, file.path, metadataUri, `${what}: manifest`);
      const entries = await reader.manifest(key, file, `manifest ${file.path} of ${what}`);
      return { file, key, entries };
    }),
  );

  const liveEntries: SnapshotFiles["liveEntries"] = [];
  const seen = new Set<string>();
  for (const manifest of manifests) {
    references.push({ path: manifest.key, role: "manifest", ...(manifest.file.length !== null ? { size: manifest.file.length } : {}) });
    for (const entry of manifest.entries) {
      if (entry.status === ENTRY_STATUS.DELETED) continue;
      const resolved = resolve(entry.file.path);
      liveEntries.push({ entry, key: resolved.kind === "key" ? resolved.key : null, manifest: manifest.file });
      if (resolved.kind === "key") {
        if (!seen.has(resolved.key)) references.push({ path: resolved.key, role: roleOf(entry), size: Number(entry.file.fileSizeInBytes) });
        seen.add(resolved.key);
      } else {
        unresolved.push({ path: entry.file.path, kind: resolved.kind, reason: `${what}: ${resolved.reason}` });
      }
    }
  }

  for (const stats of metadata.statistics) {
    if (stats.snapshotId !== snapshot.id) continue;
    const resolved = resolve(stats.path);
    if (resolved.kind === "key") references.push({ path: resolved.key, role: "statistics", ...(stats.size !== null ? { size: stats.size } : {}) });
    else unresolved.push({ path: stats.path, kind: resolved.kind, reason: `${what} ${stats.kind}: ${resolved.reason}` });
  }

  return { snapshot, manifestListKey, manifests, liveEntries, references, unresolved };
}
