/**
 * The listing of a format's own folders: every candidate cleanup may consider, nothing else.
 * Listed prefix by prefix, page by page; with a budget it stops between objects and says where
 * (a cursor: which prefix, after which key), so a later run lists on from there.
 *
 * A listing can hold every file of a big table (a million and more), and it is held from the
 * plan to the end of the run: it is kept in columns (the key, the size and the modification
 * time of each object; about 24 bytes and the key's string an object, against some 200 as
 * ObjectInfo objects), and read back as ObjectInfo one object at a time. The ETag is not kept:
 * nothing cleanup decides depends on it.
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

/** Listed objects in listing order: what the plan, the re-plans and the post-delete check read. */
export interface ListedObjects extends Iterable<ObjectInfo> {
  readonly length: number;
}

/** ListedObjects in columns; see the module comment. */
export class CompactListing implements ListedObjects {
  private readonly keys: string[] = [];
  private sizes = new Float64Array(1024);
  private mtimes = new Float64Array(1024);

  static of(...parts: Iterable<ObjectInfo>[]): CompactListing {
    const listing = new CompactListing();
    for (const part of parts) for (const object of part) listing.push(object);
    return listing;
  }

  push(object: ObjectInfo): void {
    this.add(object.key, object.size, object.lastModified.getTime());
  }

  add(key: string, size: number, lastModifiedMillis: number): void {
    const index = this.keys.length;
    if (index === this.sizes.length) {
      const sizes = new Float64Array(index * 2);
      sizes.set(this.sizes);
      this.sizes = sizes;
      const mtimes = new Float64Array(index * 2);
      mtimes.set(this.mtimes);
      this.mtimes = mtimes;
    }
    this.keys.push(key);
    this.sizes[index] = size;
    this.mtimes[index] = lastModifiedMillis;
  }

  get length(): number {
    return this.keys.length;
  }

  *[Symbol.iterator](): Iterator<ObjectInfo> {
    for (let i = 0; i < this.keys.length; i++) yield { key: this.keys[i]!, size: this.sizes[i]!, etag: "", lastModified: new Date(this.mtimes[i]!) };
  }
}

export interface ListingPart {
  objects: CompactListing;
  cursor: ListingCursor;
}

export async function listManagedFiles(store: ObjectStore, format: TableFormat, progress?: CleanupProgress): Promise<ObjectInfo[]> {
  return [...(await listManagedFilesFrom(store, format, progress ? { progress } : {})).objects];
}

export async function listManagedFilesFrom(store: ObjectStore, format: TableFormat, options: ListingOptions = {}): Promise<ListingPart> {
  options.progress?.stage("listing files");
  const objects = new CompactListing();
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
