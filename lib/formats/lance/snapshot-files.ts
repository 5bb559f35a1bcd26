/**
 * The files one Lance version needs, as keys relative to the table root: what cleanup
 * must keep for a retained version (lance.md §4, "Referenced files per manifest").
 *
 * Limitation, on purpose: a file whose `base_id` names a base path (shallow clones,
 * multi-base tables) lives under another root given as an absolute URI. It is neither
 * resolved nor listed here: it is not ours to keep or delete, and we cannot tell whether
 * that URI is this very table without guessing.
 */
import type { FileReference, LiveFile, UnresolvedReference } from "../table-format.ts";
import { resolveTablePath } from "../../model/table-path.ts";
import type { LanceDeletionFile, LanceFragment, LanceIndex, LanceManifest } from "./manifest-model.ts";
import { DATA_PREFIX, DELETIONS_PREFIX, INDICES_PREFIX, TRANSACTIONS_PREFIX } from "./table-paths.ts";

/** `_deletions/{fragment_id}-{read_version}-{id}.{arrow|bin}` (rust/lance-table/src/io/deletion.rs). */
export function deletionFileName(fragmentId: number, deletion: LanceDeletionFile): string {
  return `${fragmentId}-${deletion.readVersion}-${deletion.id}.${deletion.suffix}`;
}

/**
 * A path the manifest records under one of Lance's folders, through the one path validator:
 * Lance writes them relative to the folder, so an absolute path or URI is outside the root or
 * cannot be resolved, never a key. `prefix` is one of Lance's folders (plain segments, ending
 * in "/"): a key under it is still a key, so the path is checked once, not again with the
 * prefix (this runs for every new file of every manifest a cleanup reads).
 */
export function resolveUnder(prefix: string, path: string, tableUri: string): { key: string } | UnresolvedReference {
  const resolved = resolveTablePath(path, { roots: [tableUri], absolute: false });
  if (resolved.kind === "key") return { key: prefix + resolved.key };
  return { path, kind: resolved.kind, reason: resolved.reason };
}

function deletionKey(fragment: LanceFragment, deletion: LanceDeletionFile): string {
  // Built from numbers only, so it cannot escape the root.
  return DELETIONS_PREFIX + deletionFileName(fragment.id, deletion);
}

/**
 * System indices that keep their state elsewhere and own no `_indices/{uuid}/` folder: the
 * MemWAL index (its shards live under `_mem_wal/`, which Lance's cleanup leaves alone too).
 */
const SYSTEM_INDICES_WITHOUT_FOLDER = new Set(["__lance_mem_wal"]);

/** False for the system indices that own no `_indices/{uuid}/` folder. */
export function indexOwnsFolder(name: string): boolean {
  return !SYSTEM_INDICES_WITHOUT_FOLDER.has(name);
}

/**
 * An index's folder (every key in it is kept: older Lance records no file list), and each file
 * the manifest lists in it with its size, so the proof before a cleanup's deletes can check them.
 */
export function indexReferences(index: Pick<LanceIndex, "uuid" | "files">, tableUri: string, unresolved: UnresolvedReference[]): FileReference[] {
  // The uuid is formatted from 16 bytes, so the folder name is always safe.
  const folder = `${INDICES_PREFIX}${index.uuid}/`;
  const references: FileReference[] = [{ path: folder, role: "index" }];
  for (const file of index.files) {
    const resolved = resolveUnder(folder, file.path, tableUri);
    if (!("key" in resolved)) unresolved.push(resolved);
    else references.push(file.sizeBytes > 0 ? { path: resolved.key, role: "index", size: file.sizeBytes } : { path: resolved.key, role: "index" });
  }
  return references;
}

export interface LanceReferences {
  files: FileReference[];
  unresolved: UnresolvedReference[];
}

/** Root-relative keys of every file the version references, and the paths that are not keys under `tableUri`. */
export function referencedFiles(manifest: LanceManifest, tableUri: string): LanceReferences {
  const files: FileReference[] = [];
  const unresolved: UnresolvedReference[] = [];
  const add = (prefix: string, path: string, role: string, size?: number): void => {
    const resolved = resolveUnder(prefix, path, tableUri);
    if (!("key" in resolved)) {
      unresolved.push(resolved);
      return;
    }
    const entry: FileReference = { path: resolved.key, role };
    if (size !== undefined && size > 0) entry.size = size;
    files.push(entry);
  };
  for (const fragment of manifest.fragments) {
    for (const file of fragment.files) {
      if (file.baseId !== null) continue;
      add(DATA_PREFIX, file.path, "data", file.sizeBytes);
    }
    const deletion = fragment.deletionFile;
    if (deletion && deletion.baseId === null) {
      // Built from numbers only, so it cannot escape the root.
      files.push({ path: deletionKey(fragment, deletion), role: "delete" });
    }
  }
  for (const index of manifest.indices) {
    if (index.baseId !== null || !indexOwnsFolder(index.name)) continue;
    files.push(...indexReferences(index, tableUri, unresolved));
  }
  if (manifest.transactionFile !== null) add(TRANSACTIONS_PREFIX, manifest.transactionFile, "transaction");
  return { files, unresolved };
}

/**
 * One LiveFile per fragment. Data files under another base count in `size` but have no path
 * here; a path that is not a key under the root is kept as the manifest wrote it.
 */
export function liveFiles(manifest: LanceManifest, tableUri: string): LiveFile[] {
  return manifest.fragments.map((fragment) => {
    const deletion = fragment.deletionFile;
    return {
      fragmentId: fragment.id,
      paths: fragment.files
        .filter((file) => file.baseId === null)
        .map((file) => {
          const resolved = resolveUnder(DATA_PREFIX, file.path, tableUri);
          return "key" in resolved ? resolved.key : file.path;
        }),
      size: fragment.files.reduce((sum, file) => sum + file.sizeBytes, 0),
      physicalRows: fragment.physicalRows ?? 0,
      deletionFile: deletion && deletion.baseId === null ? deletionKey(fragment, deletion) : null,
      deletedRows: deletion?.numDeletedRows ?? 0,
    };
  });
}
