/**
 * Makes fauxqs 2.4.1 list keys in S3's order. Imported by every place that starts the emulator
 * (test/support/fauxqs.ts, bench/harness/s3-server.ts) before it starts one.
 *
 * What fauxqs gets wrong, and what it costs:
 * - It sorts a listing with `localeCompare` ("_x" and "a" before "0" and "B") but filters
 *   `start-after` and continuation tokens with `<=` on the raw string. A paged listing (or one
 *   that pages itself with startAfter, as Delta's log listing does) then skips keys: after a page
 *   ending in "_999", every "0…" key is below the token and never listed. S3 lists in UTF-8
 *   binary order; delta-rs refuses a table whose `_last_checkpoint` lists before its checkpoints.
 * - Its continuation token is the page's last object key even when common prefixes follow that
 *   object in the page, so the next page lists those prefixes again.
 * - It sorts every key under the prefix on every page: sorting 100,000 keys with localeCompare
 *   takes about 0.23 s here, so a listing of 100,000 keys (100 pages) costs the emulator about
 *   23 s of CPU. Here the sorted keys are kept per bucket until a key is added or removed, and a
 *   page starts with a binary search.
 *
 * Only `S3Store.prototype.listObjects` is replaced; the HTTP layer around it is fauxqs's own.
 */
interface StoredObject {
  key: string;
}
interface ListOptions {
  prefix?: string;
  delimiter?: string;
  maxKeys?: number;
  startAfter?: string;
  marker?: string;
}
interface ListResult {
  objects: StoredObject[];
  commonPrefixes: string[];
  isTruncated: boolean;
}
type ObjectsMap = Map<string, StoredObject>;
interface FauxqsS3Store {
  buckets: Map<string, ObjectsMap>;
  listObjects(bucket: string, options?: ListOptions): ListResult;
}

/** UTF-16 code units remapped so that `<` on them is code-point (= UTF-8 byte) order: surrogates above U+E000–U+FFFF. */
function orderedUnit(unit: number): number {
  if (unit >= 0xd800 && unit <= 0xdfff) return unit + 0x2000;
  if (unit >= 0xe000) return unit - 0x800;
  return unit;
}

/** Compares two keys as S3 does: by their UTF-8 bytes. */
export function compareS3Keys(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return orderedUnit(x) - orderedUnit(y);
  }
  return a.length - b.length;
}

const sortedKeys = new WeakMap<ObjectsMap, string[]>();

/** The bucket's keys in S3 order, sorted again only after a key was added or removed. */
function keysInOrder(objects: ObjectsMap): string[] {
  let keys = sortedKeys.get(objects);
  if (keys) return keys;
  if (!Object.hasOwn(objects, "set")) watchKeySet(objects);
  keys = [...objects.keys()].sort(compareS3Keys);
  sortedKeys.set(objects, keys);
  return keys;
}

/** Drops the sorted keys whenever the map's key set changes (an overwrite keeps them). */
function watchKeySet(objects: ObjectsMap): void {
  const forget = () => sortedKeys.delete(objects);
  Object.defineProperties(objects, {
    set: {
      value(key: string, value: StoredObject) {
        if (!objects.has(key)) forget();
        return Map.prototype.set.call(objects, key, value);
      },
    },
    delete: {
      value(key: string) {
        forget();
        return Map.prototype.delete.call(objects, key);
      },
    },
    clear: {
      value() {
        forget();
        Map.prototype.clear.call(objects);
      },
    },
  });
}

/** The first index whose key is above `after` and at or above `prefix`. */
function firstIndex(keys: readonly string[], prefix: string, after: string): number {
  const from = compareS3Keys(after, prefix) >= 0 ? after : prefix;
  const strictly = from === after && after !== "";
  let low = 0;
  let high = keys.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    const order = compareS3Keys(keys[middle]!, from);
    if (order < 0 || (strictly && order === 0)) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** One page as S3's ListObjects gives it: objects and common prefixes merged in key order, at most maxKeys entries. */
function listInS3Order(objects: ObjectsMap, options: ListOptions = {}): ListResult {
  const prefix = options.prefix ?? "";
  const delimiter = options.delimiter || undefined;
  const maxKeys = options.maxKeys ?? 1000;
  const after = options.startAfter || options.marker || "";
  const keys = keysInOrder(objects);
  const page: (StoredObject | string)[] = [];
  let isTruncated = false;
  for (let i = firstIndex(keys, prefix, after); i < keys.length; i++) {
    const key = keys[i]!;
    if (!key.startsWith(prefix)) break;
    const at = delimiter ? key.indexOf(delimiter, prefix.length) : -1;
    const common = at >= 0 ? key.slice(0, at + delimiter!.length) : null;
    if (common !== null && (compareS3Keys(common, after) <= 0 || page.at(-1) === common)) continue;
    if (page.length >= maxKeys) {
      isTruncated = true;
      break;
    }
    page.push(common ?? objects.get(key)!);
  }
  return toResult(page, isTruncated);
}

/**
 * fauxqs continues after the page's last object; so a truncated page ends at its last object
 * when it has one, and the common prefixes after it come again on the next page.
 */
function toResult(page: (StoredObject | string)[], isTruncated: boolean): ListResult {
  let end = page.length;
  if (isTruncated && page.some((entry) => typeof entry !== "string")) {
    while (typeof page[end - 1] === "string") end--;
  }
  const kept = page.slice(0, end);
  return {
    objects: kept.filter((entry): entry is StoredObject => typeof entry !== "string"),
    commonPrefixes: kept.filter((entry): entry is string => typeof entry === "string"),
    isTruncated,
  };
}

/** fauxqs's S3 store class, whose prototype the emulator's store instances share. */
export async function fauxqsS3StoreClass<Store = FauxqsS3Store>(): Promise<{ prototype: Store }> {
  // fauxqs exports only its entry point; the store is a file beside it.
  const storeModule = new URL("./s3/s3Store.js", import.meta.resolve("fauxqs"));
  return ((await import(storeModule.href)) as { S3Store: { prototype: Store } }).S3Store;
}

let installed = false;

/** Replaces fauxqs's listing with S3's order, once per process; idempotent. */
export async function useS3ListingOrder(): Promise<void> {
  if (installed) return;
  const S3Store = await fauxqsS3StoreClass();
  const original = S3Store.prototype.listObjects;
  S3Store.prototype.listObjects = function (this: FauxqsS3Store, bucket: string, options?: ListOptions): ListResult {
    const objects = this.buckets.get(bucket);
    // An unknown bucket: fauxqs's own NoSuchBucket error.
    return objects ? listInS3Order(objects, options) : original.call(this, bucket, options);
  };
  installed = true;
}
