/**
 * The one storage contract of lakewarden (see DESIGN.md, "Storage contract").
 *
 * A store is rooted at a location (an S3 bucket + prefix, or a local directory). Keys are
 * relative to that root, use `/` as separator, and can never escape it: a store rejects
 * `..`, absolute keys and empty segments with InvalidLocationError. That is what makes
 * "nothing outside the table root is ever deleted" structural rather than a check.
 */
export interface ObjectInfo {
  /** Key relative to the store root. */
  key: string;
  /** Size in bytes of the whole object. */
  size: number;
  /** Opaque ETag, quoted like S3's; pass it back unchanged as `ifMatch`. */
  etag: string;
  lastModified: Date;
}

/** A listed key; `info()` gives its metadata as `list` would have (null: the object is gone since). */
export interface ListedKey {
  key: string;
  info(): ObjectInfo | null;
}

/** `offset`+`length` reads a slice; `suffixLength` reads the last N bytes (clamped to the object). */
export type ByteRange = { offset: number; length: number } | { suffixLength: number };

export interface GetResult extends ObjectInfo {
  /** The bytes read: the whole object, or the requested range. `size` stays the whole object's size. */
  body: Uint8Array;
}

export interface PutOptions {
  /** Replace only if the current object's ETag equals this (S3 If-Match). Missing object → NotFoundError. */
  ifMatch?: string;
  /** Create only if no object exists (S3 If-None-Match: *). Existing object → PreconditionFailedError. */
  ifNoneMatch?: "*";
  contentType?: string;
}

export interface PutResult {
  etag: string;
}

export interface ListOptions {
  /** Only keys strictly greater than this (a full key, not relative to the prefix). */
  startAfter?: string;
  /** Stop after this many keys in total. */
  maxKeys?: number;
  /** With "/", only objects directly under the prefix; deeper keys are rolled up (see listPrefixes). */
  delimiter?: string;
  /**
   * The caller reads no ETag of the listed objects: a store that has to make each one (a local
   * directory, from the file's stat) may leave it "". A store that gets ETags with the listing
   * (S3) gives them anyway.
   */
  withoutEtags?: boolean;
}

export interface DeleteFailure {
  key: string;
  message: string;
  /** S3 answered SlowDown or 503 for this key (or its whole request): worth retrying later, slower. */
  throttled?: boolean;
}

export interface DeleteResult {
  /** Keys that are gone (including keys that did not exist, as S3 reports them). */
  deleted: string[];
  failed: DeleteFailure[];
}

export type RequestKind = "get" | "head" | "list" | "put" | "delete";
export type RequestCounts = Record<RequestKind, number>;

export interface ObjectStore {
  /** URI of the store root, e.g. `s3://bucket/prefix` or `file:///abs/dir`. */
  readonly uri: string;
  /** Request counters, shared with every store derived by `scope`. */
  readonly stats: RequestStats;

  /** Full URI of a key, for messages. */
  uriOf(key: string): string;
  /** A store rooted at `root/subpath`, sharing client and counters. */
  scope(subpath: string): ObjectStore;

  get(key: string, range?: ByteRange): Promise<GetResult>;
  head(key: string): Promise<ObjectInfo>;
  put(key: string, body: Uint8Array, options?: PutOptions): Promise<PutResult>;
  /** Objects whose key starts with `prefix`, in ascending key order, fetched page by page. */
  list(prefix: string, options?: ListOptions): AsyncIterable<ObjectInfo>;
  /**
   * Optional: `list` without asking each object for its metadata up front, for callers that
   * need the keys and the metadata of only a few (a local directory stats every file to list
   * it: 512 version files, ~2 ms of a 5 ms `versions`). Same keys, order and request counts as
   * `list`; use `listKeys()` (lib/store/list-keys.ts), which falls back to `list`.
   */
  listKeys?(prefix: string, options?: ListOptions): AsyncIterable<ListedKey>;
  /** The "directories" directly under `prefix` (S3 CommonPrefixes with delimiter "/"), each ending in "/". */
  listPrefixes(prefix: string): Promise<string[]>;
  /** Deletes keys in batches (1,000 per request on S3); per-key failures are returned, never thrown. */
  deleteMany(keys: readonly string[]): Promise<DeleteResult>;
}

/** Counts requests by kind. A ranged read counts as a get; a batch delete is one request. */
export class RequestStats {
  private counts: RequestCounts = { get: 0, head: 0, list: 0, put: 0, delete: 0 };

  record(kind: RequestKind, n = 1): void {
    this.counts[kind] += n;
  }

  snapshot(): RequestCounts {
    return { ...this.counts };
  }

  total(): number {
    return Object.values(this.counts).reduce((a, b) => a + b, 0);
  }

  reset(): void {
    this.counts = { get: 0, head: 0, list: 0, put: 0, delete: 0 };
  }
}
