/**
 * The listing of a format's own folders: every candidate cleanup may consider, nothing else.
 * Listed prefix by prefix, page by page; with a budget it stops between objects and says where
 * (a cursor: which prefix, after which key), so a later run lists on from there.
 *
 * A listing can hold every file of a big table (a million and more), and it is walked from the
 * plan to the end of the run: it is held a page at a time (spill.ts), full pages in columns
 * (key, size, modification time) on the run's spill file, and read back as ObjectInfo one page
 * at a time. The ETag is not kept: nothing cleanup decides depends on it.
 */
import type { TableFormat } from "../formats/table-format.ts";
import type { ObjectInfo, ObjectStore } from "../store/object-store.ts";
import type { CleanupProgress } from "./progress.ts";
import { listRanged } from "./ranged-listing.ts";
import type { PageCodec, SpillArea } from "./spill.ts";
import { SpillList, decodeJson, encodeJson } from "./spill.ts";

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
  /** Where full pages of the listing go (null: kept encoded in memory). */
  spill?: SpillArea | null;
}

/** Listed objects in listing order: what the plan, the re-plans and the post-delete check read. */
export interface ListedObjects extends Iterable<ObjectInfo> {
  readonly length: number;
}

/** A page of listed objects in columns: the key, size and modification time of each. */
interface ListingPage {
  keys: string[];
  sizes: number[];
  mtimes: number[];
}

const LISTING_CODEC: PageCodec<ObjectInfo> = {
  encode(objects) {
    const page: ListingPage = { keys: [], sizes: [], mtimes: [] };
    for (const object of objects) {
      page.keys.push(object.key);
      page.sizes.push(object.size);
      page.mtimes.push(object.lastModified.getTime());
    }
    return encodeJson(page);
  },
  decode(bytes) {
    const { keys, sizes, mtimes } = decodeJson<ListingPage>(bytes);
    return keys.map((key, i) => ({ key, size: sizes[i]!, etag: "", lastModified: new Date(mtimes[i]!) }));
  },
};

/** ListedObjects a page at a time (spill.ts); see the module comment. */
export class CompactListing implements ListedObjects {
  private readonly objects: SpillList<ObjectInfo>;

  constructor(area: SpillArea | null = null) {
    this.objects = new SpillList(LISTING_CODEC, area);
  }

  push(object: ObjectInfo): void {
    // No ETag: nothing cleanup decides depends on it.
    this.objects.push(object.etag === "" ? object : { key: object.key, size: object.size, etag: "", lastModified: object.lastModified });
  }

  add(key: string, size: number, lastModifiedMillis: number): void {
    this.objects.push({ key, size, etag: "", lastModified: new Date(lastModifiedMillis) });
  }

  get length(): number {
    return this.objects.length;
  }

  [Symbol.iterator](): Iterator<ObjectInfo> {
    return this.objects[Symbol.iterator]();
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
  const objects = new CompactListing(options.spill ?? null);
  const from = options.from ?? LISTING_START;
  if (from.done) return { objects, cursor: from };
  const prefixes = format.managedPrefixes;
  const walks = startWalks(store, prefixes, from);
  try {
    // Taken in prefix order, as listed one after another, though every prefix's first page was asked for at once.
    for (let index = from.prefixIndex; index < prefixes.length; index++) {
      const walk = walks[index - from.prefixIndex]!;
      let after = index === from.prefixIndex ? from.after : null;
      for (let next = await walk.first; !next.done; next = await walk.pages.next()) {
        if (options.shouldStop?.()) return { objects, cursor: { prefixIndex: index, after, done: false } };
        objects.push(next.value);
        after = next.value.key;
        options.progress?.advance(1);
      }
    }
  } finally {
    for (const walk of walks) void walk.pages.return?.(undefined).catch(() => undefined);
  }
  return { objects, cursor: { prefixIndex: prefixes.length, after: null, done: true } };
}

interface PrefixWalk {
  pages: AsyncIterator<ObjectInfo>;
  first: Promise<IteratorResult<ObjectInfo>>;
}

/**
 * The walk of every prefix from `from` on, each one's first page asked for now: one round trip
 * for a table's small folders instead of one after another. On a store a page is a round trip
 * away from (S3), a big folder's pages go out several at a time (ranged-listing.ts); a local
 * folder is read whole anyway. A first page no one waits for (the run stopped before its
 * prefix) fails quietly.
 */
function startWalks(store: ObjectStore, prefixes: readonly string[], from: ListingCursor): PrefixWalk[] {
  const remote = !store.uri.startsWith("file:");
  return prefixes.slice(from.prefixIndex).map((prefix, i) => {
    const after = i === 0 ? from.after : null;
    // No ETags: the listing does not keep them (CompactListing), and a local store makes each from a stat.
    const listing = remote ? listRanged(store, prefix, after) : store.list(prefix, { withoutEtags: true, ...(after !== null ? { startAfter: after } : {}) });
    const pages = listing[Symbol.asyncIterator]();
    const first = pages.next();
    first.catch(() => undefined);
    return { pages, first };
  });
}
