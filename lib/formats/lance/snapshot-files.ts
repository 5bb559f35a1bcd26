/**
 * The files one Lance version needs, as keys relative to the table root: what cleanup
 * must keep for a retained version (lance.md §4, "Referenced files per manifest").
 *
 * Limitation, on purpose: a file whose `base_id` names a base path (shallow clones,
 * multi-base tables) lives under another root given as an absolute URI. It is neither
 * resolved nor listed here: it is not ours to keep or delete, and we cannot tell whether
 * that URI is this very table without guessing.
 */
import type { LiveFile, ReferencedFile } from "../table-format.ts";
import type { LanceDeletionFile, LanceFragment, LanceManifest } from "./manifest-model.ts";
import { DATA_PREFIX, DELETIONS_PREFIX, INDICES_PREFIX, TRANSACTIONS_PREFIX, tableKey } from "./table-paths.ts";

/** `_deletions/{fragment_id}-{read_version}-{id}.{arrow|bin}` (rust/lance-table/src/io/deletion.rs). */
export function deletionFileName(fragmentId: number, deletion: LanceDeletionFile): string {
  return `${fragmentId}-${deletion.readVersion}-${deletion.id}.${deletion.suffix}`;
}

function dataKey(fragment: LanceFragment, path: string, uri: string): string {
  return tableKey(DATA_PREFIX, path, `fragment ${fragment.id} data file`, uri);
}

function deletionKey(fragment: LanceFragment, deletion: LanceDeletionFile): string {
  // Built from numbers only, so it cannot escape the root.
  return DELETIONS_PREFIX + deletionFileName(fragment.id, deletion);
}

/** Root-relative keys of every file the version references; `uri` names the manifest in errors. */
export function referencedFiles(manifest: LanceManifest, uri: string): ReferencedFile[] {
  const files: ReferencedFile[] = [];
  for (const fragment of manifest.fragments) {
    for (const file of fragment.files) {
      if (file.baseId !== null) continue;
      const entry: ReferencedFile = { path: dataKey(fragment, file.path, uri), kind: "data" };
      if (file.sizeBytes > 0) entry.size = file.sizeBytes;
      files.push(entry);
    }
    const deletion = fragment.deletionFile;
    if (deletion && deletion.baseId === null) {
      files.push({ path: deletionKey(fragment, deletion), kind: "deletion" });
    }
  }
  for (const index of manifest.indices) {
    if (index.baseId !== null) continue;
    // The uuid is formatted from 16 bytes, so the folder name is always safe.
    files.push({ path: `${INDICES_PREFIX}${index.uuid}/`, kind: "index" });
  }
  if (manifest.transactionFile !== null) {
    files.push({
      path: tableKey(TRANSACTIONS_PREFIX, manifest.transactionFile, "transaction file", uri),
      kind: "transaction",
    });
  }
  return files;
}

/** One LiveFile per fragment. Data files under another base count in `size` but have no path here. */
export function liveFiles(manifest: LanceManifest, uri: string): LiveFile[] {
  return manifest.fragments.map((fragment) => {
    const deletion = fragment.deletionFile;
    return {
      fragmentId: fragment.id,
      paths: fragment.files.filter((file) => file.baseId === null).map((file) => dataKey(fragment, file.path, uri)),
      size: fragment.files.reduce((sum, file) => sum + file.sizeBytes, 0),
      physicalRows: fragment.physicalRows ?? 0,
      deletionFile: deletion && deletion.baseId === null ? deletionKey(fragment, deletion) : null,
      deletedRows: deletion?.numDeletedRows ?? 0,
    };
  });
}
