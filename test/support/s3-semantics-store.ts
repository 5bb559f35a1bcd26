/**
 * Gives an S3 emulator that ignores conditional headers (fauxqs 2.4.1 accepts If-Match and
 * If-None-Match and writes anyway) the answers S3 documents:
 * - `ifNoneMatch: "*"` on an existing key → 412 PreconditionFailedError;
 * - `ifMatch` on a missing key → 404 NotFoundError;
 * - `ifMatch` with another ETag → 412 PreconditionFailedError.
 * The check and the write run under one per-key mutex for the whole process, so concurrent
 * conditional writers have exactly one winner. Conditions are still passed on, so a store that
 * does enforce them (real S3) stays authoritative across processes.
 *
 * It also clamps suffix reads longer than the object to the whole object, as S3 does (RFC 9110);
 * fauxqs answers those with 416.
 *
 * The check is S3's server-side work, not a client request: it is not counted in `stats`, while
 * a put refused by it still counts as the one put request S3 would have answered with 412/404.
 * When combining with FaultInjectingStore, put the fault injector outside this wrapper.
 */
import { InvalidRangeError, NotFoundError, PreconditionFailedError } from "../../lib/store/errors.ts";
import { KeyedMutex } from "../../lib/store/key-mutex.ts";
import { checkKey } from "../../lib/store/keys.ts";
import type { ByteRange, DeleteResult, GetResult, ListOptions, ObjectInfo, ObjectStore, PutOptions, PutResult, RequestStats } from "../../lib/store/object-store.ts";

const processMutex = new KeyedMutex();

export class S3SemanticsStore implements ObjectStore {
  readonly inner: ObjectStore;

  constructor(inner: ObjectStore) {
    this.inner = inner;
  }

  get uri(): string {
    return this.inner.uri;
  }

  get stats(): RequestStats {
    return this.inner.stats;
  }

  uriOf(key: string): string {
    return this.inner.uriOf(key);
  }

  scope(subpath: string): S3SemanticsStore {
    return new S3SemanticsStore(this.inner.scope(subpath));
  }

  async get(key: string, range?: ByteRange): Promise<GetResult> {
    try {
      return await this.inner.get(key, range);
    } catch (err) {
      if (!(err instanceof InvalidRangeError) || !range || !("suffixLength" in range) || range.suffixLength <= 0) throw err;
      // The emulator refused a suffix longer than the object: S3 returns the whole object.
      const whole = await this.inner.get(key);
      this.inner.stats.record("get", -1);
      if (whole.size === 0) throw err;
      return whole;
    }
  }

  head(key: string): Promise<ObjectInfo> {
    return this.inner.head(key);
  }

  list(prefix: string, options?: ListOptions): AsyncIterable<ObjectInfo> {
    return this.inner.list(prefix, options);
  }

  listPrefixes(prefix: string): Promise<string[]> {
    return this.inner.listPrefixes(prefix);
  }

  deleteMany(keys: readonly string[]): Promise<DeleteResult> {
    return this.inner.deleteMany(keys);
  }

  async put(key: string, body: Uint8Array, options: PutOptions = {}): Promise<PutResult> {
    if (options.ifNoneMatch !== "*" && options.ifMatch === undefined) return this.inner.put(key, body, options);
    checkKey(key, this.inner.uri);
    const uri = this.inner.uriOf(key);
    return processMutex.run(uri, async () => {
      const refusal = this.refusal(uri, await this.currentEtag(key), options);
      if (refusal) {
        this.inner.stats.record("put");
        throw refusal;
      }
      return this.inner.put(key, body, options);
    });
  }

  /** The error S3 would answer a conditional put with, given the current ETag (undefined = absent). */
  private refusal(uri: string, current: string | undefined, options: PutOptions): Error | undefined {
    if (options.ifNoneMatch === "*" && current !== undefined) {
      return new PreconditionFailedError(`${uri}: precondition failed (412): already exists (If-None-Match: *)`, { uri });
    }
    if (options.ifMatch === undefined) return undefined;
    if (current === undefined) return new NotFoundError(`${uri}: not found (404) for If-Match ${options.ifMatch}`, { uri });
    if (current !== options.ifMatch) {
      return new PreconditionFailedError(`${uri}: precondition failed (412): ETag is ${current}, not ${options.ifMatch} (If-Match)`, { uri });
    }
    return undefined;
  }

  /** The current ETag, or undefined when the key is absent; not counted as a request. */
  private async currentEtag(key: string): Promise<string | undefined> {
    try {
      return (await this.inner.head(key)).etag;
    } catch (err) {
      if (err instanceof NotFoundError) return undefined;
      throw err;
    } finally {
      this.inner.stats.record("head", -1);
    }
  }
}

/** Wraps `inner` so conditional puts answer as S3 documents (see S3SemanticsStore). */
export function withS3ConditionalSemantics(inner: ObjectStore): S3SemanticsStore {
  return new S3SemanticsStore(inner);
}
