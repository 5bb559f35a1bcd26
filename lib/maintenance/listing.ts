/**
 * The listing of a format's own folders: every candidate cleanup may consider, nothing else.
 * Listed prefix by prefix, page by page; with a budget it stops between objects and says where
 * (a cursor: which prefix, after which key), so a later run lists on from there.
 */
import type { TableFormat } from "../formats/table-format.ts";
import type { ObjectInfo, ObjectStore } from "../store/object-store.ts";
import type { CleanupProgress } from "./progress.ts";

/** Where a listing got to: the prefix (index into `managedPrefixes`) and the last key listed in it. */
export interface ListingCursor {
  prefixIndex: number;
  /** The last key listed under that prefix (null: none yet). */
  after: string | null;
  /** True once every prefix was listed to its end. */
  done: boolean;
}

export const LISTING_START: ListingCursor = { prefixIndex: 0, after: null, done: false };

export interface ListingOptions {
  progress?: CleanupProgress;
  /** Go on from here (a budget-stopped run's saved cursor). */
  from?: ListingCursor;
  /** Checked before each object is taken: true → stop, returning the cursor. */
  shouldStop?: () => boolean;
}

export interface ListingPart {
  objects: ObjectInfo[];
  cursor: ListingCursor;
}

export async function listManagedFiles(store: ObjectStore, format: TableFormat, progress?: CleanupProgress): Promise<ObjectInfo[]> {
  return (await listManagedFilesFrom(store, format, progress ? { progress } : {})).objects;
}

export async function listManagedFilesFrom(store: ObjectStore, format: TableFormat, options: ListingOptions = {}): Promise<ListingPart> {
  options.progress?.stage("listing files");
  const objects: ObjectInfo[] = [];
  const from = options.from ?? LISTING_START;
  if (from.done) return { objects, cursor: from };
  const prefixes = format.managedPrefixes;
  // Prefixes are listed one after another: each is a paged walk already.
  for (let index = from.prefixIndex; index < prefixes.length; index++) {
    let after = index === from.prefixIndex ? from.after : null;
    for await (const object of store.list(prefixes[index]!, after !== null ? { startAfter: after } : {})) {
      if (options.shouldStop?.()) return { objects, cursor: { prefixIndex: index, after, done: false } };
      objects.push(object);
      after = object.key;
      options.progress?.advance(1);
    }
  }
  return { objects, cursor: { prefixIndex: prefixes.length, after: null, done: true } };
}
