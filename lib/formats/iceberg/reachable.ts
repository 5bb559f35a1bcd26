/**
 * Everything reachable from a table's current metadata (iceberg-java ReachableFileUtil and
 * the orphan action's valid set): the files of every snapshot it holds (manifest lists,
 * manifests, live content files, statistics), its statistics and partition-statistics files,
 * the current metadata file, the metadata files its `metadata-log` names, and
 * `metadata/version-hint.text`.
 */
import type { FileReference } from "../../model/file-reference.ts";
import type { UnresolvedReference } from "../table-format.ts";
import { VERSION_HINT_KEY } from "./metadata-names.ts";
import { readSnapshotManifests, snapshotStatistics, type IcebergFileReader } from "./snapshot-files.ts";
import type { IcebergTableMetadata } from "./table-metadata.ts";
import type { IcebergPathResolver } from "./table-paths.ts";

export interface Reachable {
  /** Key → role, every key reachable. */
  keys: Map<string, string>;
  /** Paths that are not keys under the root: outside ones are kept by never being candidates; unresolvable ones must stop cleanup. */
  unresolved: UnresolvedReference[];
}

/** The metadata files the table keeps: current, metadata-log entries, version hint; plus every statistics file. */
export function metadataReferences(
  metadata: IcebergTableMetadata,
  metadataKey: string,
  resolve: IcebergPathResolver,
  hasVersionHint: boolean,
): { references: FileReference[]; unresolved: UnresolvedReference[] } {
  const references: FileReference[] = [{ path: metadataKey, role: "metadata" }];
  const unresolved: UnresolvedReference[] = [];
  if (hasVersionHint) references.push({ path: VERSION_HINT_KEY, role: "metadata" });
  for (const entry of metadata.metadataLog) {
    const resolved = resolve(entry.file);
    if (resolved.kind === "key") references.push({ path: resolved.key, role: "metadata" });
    else unresolved.push({ path: entry.file, kind: resolved.kind, reason: `metadata-log: ${resolved.reason}` });
  }
  for (const stats of metadata.statistics) {
    const resolved = resolve(stats.path);
    if (resolved.kind === "key") references.push({ path: resolved.key, role: "statistics", ...(stats.size !== null ? { size: stats.size } : {}) });
    else unresolved.push({ path: stats.path, kind: resolved.kind, reason: `${stats.kind} of snapshot ${stats.snapshotId}: ${resolved.reason}` });
  }
  return { references, unresolved };
}

/** The files every snapshot of `metadata` reaches, plus the metadata-level files. */
export async function reachableFiles(
  reader: IcebergFileReader,
  metadata: IcebergTableMetadata,
  metadataKey: string,
  resolve: IcebergPathResolver,
  hasVersionHint: boolean,
): Promise<Reachable> {
  const keys = new Map<string, string>();
  const unresolved: UnresolvedReference[] = [];
  const metadataUri = reader.store.uriOf(metadataKey);
  const read = await Promise.all(metadata.snapshots.map((s) => readSnapshotManifests(reader, s, resolve, metadataUri)));
  const add = (ref: FileReference): void => {
    if (!keys.has(ref.path)) keys.set(ref.path, ref.role);
  };
  // A manifest's entries are added once, by the first snapshot listing it: snapshots mostly share
  // their manifests, and walking each snapshot's whole list was snapshots × files.
  const added = new Set<readonly unknown[]>();
  for (const [index, { manifestListKey, manifests }] of read.entries()) {
    const snapshot = metadata.snapshots[index]!;
    if (manifestListKey !== null) add({ path: manifestListKey, role: "manifest-list" });
    for (const manifest of manifests) {
      add({ path: manifest.key, role: "manifest" });
      if (added.has(manifest.live)) continue;
      added.add(manifest.live);
      const resolved = reader.liveReferences(manifest.live, resolve);
      for (const reference of resolved.references) add(reference);
      for (const path of resolved.unresolved) unresolved.push({ path: path.path, kind: path.kind, reason: `snapshot ${snapshot.id}: ${path.reason}` });
    }
    const statistics = snapshotStatistics(metadata, snapshot, resolve);
    for (const reference of statistics.references) add(reference);
    unresolved.push(...statistics.unresolved);
  }
  const level = metadataReferences(metadata, metadataKey, resolve, hasVersionHint);
  for (const ref of level.references) if (!keys.has(ref.path)) keys.set(ref.path, ref.role);
  unresolved.push(...level.unresolved);
  return { keys, unresolved };
}
