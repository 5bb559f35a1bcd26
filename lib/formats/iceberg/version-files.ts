/**
 * An Iceberg table's version files: one per snapshot of its current metadata file, each with that
 * file's key, size and ETag and the snapshot's id; the current snapshot's marked `currentInFile`,
 * so a head written for it can later be shown current by a listing alone (latest-lookup.ts).
 */
import type { VersionFile } from "../table-format.ts";
import type { IcebergTable } from "./table-state.ts";

export function versionFilesOf(table: IcebergTable): VersionFile[] {
  const { file, metadata } = table.read;
  return table.ordered.snapshots.map((s) => ({
    version: table.ordered.versionOf.get(s.id)!,
    id: s.id,
    key: table.metadataKey,
    size: file.size,
    etag: file.etag,
    lastModified: file.lastModified,
    ...(s.id === metadata.currentSnapshotId ? { currentInFile: true } : {}),
  }));
}

/** The current snapshot's version file; null for a table without a current snapshot. */
export function currentVersionFile(table: IcebergTable): VersionFile | null {
  const current = table.read.metadata.currentSnapshotId;
  return current === null ? null : (versionFilesOf(table).find((f) => f.id === current) ?? null);
}
