/**
 * Fail closed before cleanup writes or deletes anything: every data and delete file, manifest and
 * manifest list that the current snapshot and each ref's snapshot name must exist. When one does
 * not, the metadata and the files disagree (a writer that spelled the path differently from the
 * file it wrote, e.g. encoded where the file's name is not): the file the writer meant is named by
 * nothing, looks like an old orphan, and orphan removal would delete the table's live data while
 * the run reports success. Expired snapshots are not checked: their files may be gone already.
 *
 * Keys are looked up in the run's listing first; only the ones it lacks (a file outside the
 * managed folders, or one written after the listing) are asked for one by one.
 */
import type { ObjectInfo, ObjectStore } from "../../store/object-store.ts";
import { TableFormatError } from "../errors.ts";
import { readSnapshotFiles, type IcebergFileReader } from "./snapshot-files.ts";
import type { IcebergTable } from "./table-state.ts";
import { objectExists } from "../../store/object-exists.ts";

const CHECKED_ROLES = new Set(["data", "delete", "manifest", "manifest-list"]);
/** HEAD requests in flight at once for keys the listing lacks. */
const HEAD_CONCURRENCY = 16;

export async function assertRefFilesExist(store: ObjectStore, reader: IcebergFileReader, table: IcebergTable, listing: Iterable<ObjectInfo>): Promise<void> {
  const { metadata } = table.read;
  const uri = store.uriOf(table.metadataKey);
  // Which snapshot each key is first named by, for the error line: the current one first, then refs by name.
  const holders = new Map<string, string>();
  if (metadata.currentSnapshotId !== null) holders.set(metadata.currentSnapshotId, "the current snapshot");
  for (const ref of [...metadata.refs].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    if (!holders.has(ref.snapshotId)) holders.set(ref.snapshotId, `${ref.type} "${ref.name}"'s snapshot`);
  }
  const needed = new Map<string, string>();
  for (const [id, holder] of holders) {
    const snapshot = metadata.snapshots.find((s) => s.id === id);
    // A ref naming a missing snapshot is dropped by expiry (the spec's rule), not read.
    if (!snapshot) continue;
    const files = await readSnapshotFiles(reader, metadata, snapshot, table.resolve, uri);
    for (const reference of files.references) {
      if (CHECKED_ROLES.has(reference.role) && !needed.has(reference.path)) needed.set(reference.path, `${holder} ${id}`);
    }
  }
  for (const object of listing) needed.delete(object.key);
  if (needed.size === 0) return;

  const unlisted = [...needed.keys()].sort();
  for (let at = 0; at < unlisted.length; at += HEAD_CONCURRENCY) {
    const batch = unlisted.slice(at, at + HEAD_CONCURRENCY);
    const found = await Promise.all(batch.map((key) => objectExists(store, key)));
    const missing = batch.find((_, i) => !found[i]);
    if (missing !== undefined) {
      throw new TableFormatError(
        store.uri,
        `${needed.get(missing)} in ${table.metadataKey} names "${missing}", which does not exist (is a path in the metadata spelled differently from the file's name?); nothing written or deleted`,
      );
    }
  }
}
