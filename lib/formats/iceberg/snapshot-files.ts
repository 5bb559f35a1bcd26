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
import { createHash } from "node:crypto";
import type { FileReference } from "../../model/file-reference.ts";
import type { ObjectStore } from "../../store/object-store.ts";
import { NotFoundError } from "../../store/errors.ts";
import { CorruptFileError, UnsupportedFeatureError } from "../errors.ts";
import type { UnresolvedReference } from "../table-format.ts";
import { decodeManifest, decodeManifestList, decodeManifestLiveFiles, type LiveContentFile, type ManifestEntry, type ManifestFile } from "./manifests.ts";
import type { IcebergSnapshot, IcebergTableMetadata } from "./table-metadata.ts";
import type { IcebergPathResolver } from "./table-paths.ts";

/** A manifest decoded whole, every entry with all its fields (for a head's rows). */
export interface DecodedManifest {
  file: ManifestFile;
  key: string;
  entries: ManifestEntry[];
}

/** A manifest as cleanup reads it: its live entries, each with what cleanup needs of it. */
export interface ReadManifest {
  file: ManifestFile;
  key: string;
  live: readonly LiveContentFile[];
}

export interface SnapshotFiles {
  snapshot: IcebergSnapshot;
  manifestListKey: string | null;
  manifests: ReadManifest[];
  references: FileReference[];
  unresolved: UnresolvedReference[];
}

/** Decoded manifests held per reader: enough for a table's shared manifests, bounded for a Lambda's memory. */
const CACHE_LIMIT = 512;
/** Digests of files decoded whole held per reader (a few dozen bytes each): past it, the oldest is read again by its proof. */
const DIGEST_LIMIT = 65_536;

/**
 * Reads manifest lists and manifests of one store, each key once (they never change once written).
 * Each file it decodes whole is remembered by the digest of its bytes, so the proof of a kept
 * file (prove-file.ts) that gets the same bytes again knows they decode whole without decoding
 * them a second time.
 */
export class IcebergFileReader {
  readonly store: ObjectStore;
  private readonly lists = new Map<string, Promise<ManifestFile[]>>();
  private readonly manifests = new Map<string, Promise<ManifestEntry[]>>();
  private readonly liveManifests = new Map<string, Promise<LiveContentFile[]>>();
  private readonly wholeDigests = new Map<string, string>();
  /** Per manifest's live entries (held while `liveManifests` holds them), their references by resolver. */
  private readonly resolvedManifests = new WeakMap<readonly LiveContentFile[], Map<IcebergPathResolver, ManifestReferences>>();

  constructor(store: ObjectStore) {
    this.store = store;
  }

  manifestList(key: string, what: string): Promise<ManifestFile[]> {
    return cached(this.lists, key, () => this.decodeWhole(key, what, (bytes) => decodeManifestList(bytes, this.store.uriOf(key))));
  }

  /** The manifest's entries, every field of each (a head's rows need them; cleanup reads `liveFiles`). */
  manifest(key: string, listed: ManifestFile, what: string): Promise<ManifestEntry[]> {
    // Inherited sequence numbers depend on the listing entry; a manifest is listed with one sequence number.
    return cached(this.manifests, `${key}\u0000${listed.sequenceNumber}`, () => this.decodeWhole(key, what, (bytes) => decodeManifest(bytes, this.store.uriOf(key), listed)));
  }

  /** The manifest's live entries, decoded as `manifest` decodes it, holding only what cleanup reads of each. */
  liveFiles(key: string, listed: ManifestFile, what: string): Promise<LiveContentFile[]> {
    return cached(this.liveManifests, `${key}\u0000${listed.sequenceNumber}`, () =>
      this.decodeWhole(key, what, (bytes) => decodeManifestLiveFiles(bytes, this.store.uriOf(key), listed)),
    );
  }

  /**
   * The references `live` (a manifest's live entries, as `liveFiles` gave them) makes through
   * `resolve`: worked out once per manifest and resolver, and shared by every snapshot that lists
   * the manifest, not resolved again for each (a table's snapshots mostly share their manifests).
   */
  liveReferences(live: readonly LiveContentFile[], resolve: IcebergPathResolver): ManifestReferences {
    let byResolver = this.resolvedManifests.get(live);
    if (!byResolver) {
      byResolver = new Map();
      this.resolvedManifests.set(live, byResolver);
    }
    let resolved = byResolver.get(resolve);
    if (!resolved) {
      resolved = resolveLiveFiles(live, resolve);
      byResolver.set(resolve, resolved);
    }
    return resolved;
  }

  /** True when `bytes` are the bytes of `key` this reader decoded whole (a manifest list or manifest, every block to its end). */
  decodedWhole(key: string, bytes: Uint8Array): boolean {
    const digest = this.wholeDigests.get(key);
    return digest !== undefined && digest === digestOf(bytes);
  }

  private async decodeWhole<T>(key: string, what: string, decode: (bytes: Uint8Array) => Promise<T>): Promise<T> {
    const bytes = await this.getBytes(key, what);
    const decoded = await decode(bytes);
    if (this.wholeDigests.size >= DIGEST_LIMIT) this.wholeDigests.delete(this.wholeDigests.keys().next().value!);
    this.wholeDigests.set(key, digestOf(bytes));
    return decoded;
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

function digestOf(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("base64");
}

function roleOf(file: LiveContentFile): "data" | "delete" {
  return file.content === 0 ? "data" : "delete";
}

/** A manifest's live entries as references: the keys under the root, each once in the order first named, and the paths that are not keys. */
export interface ManifestReferences {
  references: readonly FileReference[];
  /** `reason` says why, without the snapshot (each snapshot's read names itself). */
  unresolved: readonly UnresolvedReference[];
}

function resolveLiveFiles(live: readonly LiveContentFile[], resolve: IcebergPathResolver): ManifestReferences {
  const references: FileReference[] = [];
  const unresolved: UnresolvedReference[] = [];
  const seen = new Set<string>();
  for (const file of live) {
    const resolved = resolve(file.path);
    if (resolved.kind === "key") {
      if (!seen.has(resolved.key)) references.push({ path: resolved.key, role: roleOf(file), size: Number(file.fileSizeInBytes) });
      seen.add(resolved.key);
    } else {
      unresolved.push({ path: file.path, kind: resolved.kind, reason: resolved.reason });
    }
  }
  return { references, unresolved };
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

/** The manifests `snapshot` lists, each with its live entries (read once per reader, whatever snapshot asks). */
export async function readSnapshotManifests(
  reader: IcebergFileReader,
  snapshot: IcebergSnapshot,
  resolve: IcebergPathResolver,
  metadataUri: string,
): Promise<{ manifestListKey: string | null; manifests: ReadManifest[] }> {
  const what = `snapshot ${snapshot.id}`;
  const { listed, manifestListKey } = await listedManifests(reader, snapshot, resolve, metadataUri);
  const manifests = await Promise.all(
    listed.map(async (file) => {
      const key = readableKey(resolve, file.path, metadataUri, `${what}: manifest`);
      const live = await reader.liveFiles(key, file, `manifest ${file.path} of ${what}`);
      return { file, key, live };
    }),
  );
  return { manifestListKey, manifests };
}

/** The statistics files of `snapshot`: references, and the paths that are not keys. */
export function snapshotStatistics(
  metadata: IcebergTableMetadata,
  snapshot: IcebergSnapshot,
  resolve: IcebergPathResolver,
): { references: FileReference[]; unresolved: UnresolvedReference[] } {
  const references: FileReference[] = [];
  const unresolved: UnresolvedReference[] = [];
  for (const stats of metadata.statistics) {
    if (stats.snapshotId !== snapshot.id) continue;
    const resolved = resolve(stats.path);
    if (resolved.kind === "key") references.push({ path: resolved.key, role: "statistics", ...(stats.size !== null ? { size: stats.size } : {}) });
    else unresolved.push({ path: stats.path, kind: resolved.kind, reason: `snapshot ${snapshot.id} ${stats.kind}: ${resolved.reason}` });
  }
  return { references, unresolved };
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
  const { manifestListKey, manifests } = await readSnapshotManifests(reader, snapshot, resolve, metadataUri);
  if (manifestListKey !== null) references.push({ path: manifestListKey, role: "manifest-list" });

  // A file two manifests of the snapshot name is one reference; each manifest's own are distinct already.
  const seen = manifests.length > 1 ? new Set<string>() : null;
  for (const manifest of manifests) {
    references.push({ path: manifest.key, role: "manifest", ...(manifest.file.length !== null ? { size: manifest.file.length } : {}) });
    const resolved = reader.liveReferences(manifest.live, resolve);
    for (const reference of resolved.references) {
      if (seen?.has(reference.path)) continue;
      seen?.add(reference.path);
      references.push(reference);
    }
    for (const path of resolved.unresolved) unresolved.push({ path: path.path, kind: path.kind, reason: `${what}: ${path.reason}` });
  }

  const statistics = snapshotStatistics(metadata, snapshot, resolve);
  for (const reference of statistics.references) references.push(reference);
  for (const path of statistics.unresolved) unresolved.push(path);
  return { snapshot, manifestListKey, manifests, references, unresolved };
}
