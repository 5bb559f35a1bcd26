/** The full listing of a format's own folders: every candidate cleanup may consider, nothing else. */
import type { TableFormat } from "../formats/table-format.ts";
import type { ObjectInfo, ObjectStore } from "../store/object-store.ts";
import type { CleanupProgress } from "./progress.ts";

export async function listManagedFiles(store: ObjectStore, format: TableFormat, progress?: CleanupProgress): Promise<ObjectInfo[]> {
  progress?.stage("listing files");
  const listing: ObjectInfo[] = [];
  // Prefixes are listed one after another: each is a paged walk already.
  for (const prefix of format.managedPrefixes) {
    for await (const object of store.list(prefix)) {
      listing.push(object);
      progress?.advance(1);
    }
  }
  return listing;
}
