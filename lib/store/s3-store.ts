/**
 * ObjectStore on S3 (or an S3-compatible endpoint) through @aws-sdk/client-s3.
 * Every store derived with `scope()` shares the client and the request counters.
 *
 * The SDK is loaded with the first request, not with this module: it is the largest thing
 * lakewarden loads (about 30 MiB of memory and 0.3 s), and a process working on local disk
 * (the CLI on a local table, the benchmarks' local cells) never needs it.
 */
import type { ListObjectsV2CommandOutput, S3Client } from "@aws-sdk/client-s3";
import { checkRange, rangeHeader } from "./byte-range.ts";
import { NoAnswerError, StoreError, ThrottledError } from "./errors.ts";
import { checkKey, checkPrefix, checkSubpath } from "./keys.ts";
import { mapConcurrent } from "./map-concurrent.ts";
import { RequestStats } from "./object-store.ts";
import type { ByteRange, DeleteFailure, DeleteResult, GetResult, ListOptions, ObjectInfo, ObjectStore, PutOptions, PutResult } from "./object-store.ts";
import { NO_ANSWER_SETTINGS, THROTTLE_NAMES, mapS3Error } from "./s3-errors.ts";

const PAGE_SIZE = 1000;
const DELETE_BATCH = 1000;

export type S3Sdk = typeof import("@aws-sdk/client-s3");
type Sdk = S3Sdk;
let sdkLoad: Promise<Sdk> | null = null;
const loadSdk = (): Promise<Sdk> => (sdkLoad ??= import("@aws-sdk/client-s3"));

/** The client a store and its scopes share: given, or made once by `make` at the first request. */
interface ClientCell {
  client: S3Client | null;
  pending: Promise<S3Client> | null;
  make: ((sdk: Sdk) => S3Client) | null;
  /** When a request last got no answer on any attempt (NoAnswerError), or null. */
  silentSince: number | null;
}

/**
 * After a request got no answer on any attempt, the requests that start this soon after fail at
 * once instead of each waiting out its own timeouts: a silent endpoint fails a command in one
 * request's time (timeout x attempts), not that times every request made one after another.
 * Later requests try again (a long-running `serve` or Lambda recovers when the endpoint does).
 */
const SILENT_ENDPOINT_HOLD_MS = 60_000;

/** Thrown by connect() while the endpoint is held silent; mapError gives it the request's URI. */
class HeldSilent extends Error {}

export interface S3StoreOptions {
  /** The client, or a function making it (called once, at the first request, after the SDK loaded). */
  client: S3Client | ((sdk: S3Sdk) => S3Client);
  bucket: string;
  /** Key prefix of the store root inside the bucket, without leading or trailing "/" ("" = whole bucket). */
  prefix?: string;
  stats?: RequestStats;
  /** Where requests go, named in "cannot reach" errors (default "AWS S3"). */
  endpoint?: string;
  /** DeleteObjects requests in flight at once (default 4). */
  deleteConcurrency?: number;
}

export class S3Store implements ObjectStore {
  private readonly cell: ClientCell;
  readonly bucket: string;
  readonly prefix: string;
  readonly uri: string;
  readonly stats: RequestStats;
  readonly endpoint: string;
  private readonly deleteConcurrency: number;

  constructor(options: S3StoreOptions, cell?: ClientCell) {
    this.cell =
      cell ??
      (typeof options.client === "function"
        ? { client: null, pending: null, make: options.client, silentSince: null }
        : { client: options.client, pending: null, make: null, silentSince: null });
    this.bucket = options.bucket;
    this.prefix = (options.prefix ?? "").replace(/^\/+|\/+$/g, "");
    this.uri = this.prefix ? `s3://${this.bucket}/${this.prefix}` : `s3://${this.bucket}`;
    this.stats = options.stats ?? new RequestStats();
    this.endpoint = options.endpoint ?? "AWS S3";
    this.deleteConcurrency = Math.max(1, options.deleteConcurrency ?? 4);
  }

  /** The client (null until the first request when the store was given a function making it). */
  get client(): S3Client | null {
    return this.cell.client;
  }

  uriOf(key: string): string {
    return `${this.uri}/${key}`;
  }

  scope(subpath: string): S3Store {
    const clean = checkSubpath(subpath, this.uri);
    return new S3Store(
      {
        client: this.cell.client ?? this.cell.make!,
        bucket: this.bucket,
        prefix: this.fullKey(clean),
        stats: this.stats,
        endpoint: this.endpoint,
        deleteConcurrency: this.deleteConcurrency,
      },
      this.cell,
    );
  }

  /** The SDK and the client, loaded and made once for the store and its scopes. */
  private async connect(): Promise<{ sdk: Sdk; client: S3Client }> {
    const cell = this.cell;
    if (cell.silentSince !== null && Date.now() - cell.silentSince < SILENT_ENDPOINT_HOLD_MS) throw new HeldSilent();
    const sdk = await loadSdk();
    if (cell.client) return { sdk, client: cell.client };
    cell.pending ??= Promise.resolve().then(() => (cell.client = cell.make!(sdk)));
    return { sdk, client: await cell.pending };
  }

  async get(key: string, range?: ByteRange): Promise<GetResult> {
    checkKey(key, this.uri);
    const uri = this.uriOf(key);
    if (range) checkRange(range, uri);
    this.stats.record("get");
    try {
      const { sdk, client } = await this.connect();
      const out = await client.send(new sdk.GetObjectCommand({ Bucket: this.bucket, Key: this.fullKey(key), ...(range ? { Range: rangeHeader(range) } : {}) }));
      const body = out.Body ? await out.Body.transformToByteArray() : new Uint8Array(0);
      const size = totalSize(out.ContentRange) ?? out.ContentLength ?? body.length;
      return { key, size, etag: requireEtag(out.ETag, uri), lastModified: out.LastModified ?? new Date(0), body };
    } catch (err) {
      throw this.mapError(err, uri);
    }
  }

  async head(key: string): Promise<ObjectInfo> {
    checkKey(key, this.uri);
    const uri = this.uriOf(key);
    this.stats.record("head");
    try {
      const { sdk, client } = await this.connect();
      const out = await client.send(new sdk.HeadObjectCommand({ Bucket: this.bucket, Key: this.fullKey(key) }));
      return { key, size: out.ContentLength ?? 0, etag: requireEtag(out.ETag, uri), lastModified: out.LastModified ?? new Date(0) };
    } catch (err) {
      throw this.mapError(err, uri);
    }
  }

  async put(key: string, body: Uint8Array, options: PutOptions = {}): Promise<PutResult> {
    checkKey(key, this.uri);
    const uri = this.uriOf(key);
    this.stats.record("put");
    try {
      const { sdk, client } = await this.connect();
      const out = await client.send(
        new sdk.PutObjectCommand({
          Bucket: this.bucket,
          Key: this.fullKey(key),
          Body: body,
          ContentLength: body.byteLength,
          ...(options.contentType ? { ContentType: options.contentType } : {}),
          ...(options.ifMatch !== undefined ? { IfMatch: options.ifMatch } : {}),
          ...(options.ifNoneMatch ? { IfNoneMatch: options.ifNoneMatch } : {}),
        }),
      );
      return { etag: requireEtag(out.ETag, uri) };
    } catch (err) {
      throw this.mapError(err, uri);
    }
  }

  async *list(prefix: string, options: ListOptions = {}): AsyncIterable<ObjectInfo> {
    checkPrefix(prefix, this.uri);
    let remaining = options.maxKeys ?? Number.POSITIVE_INFINITY;
    if (remaining <= 0) return;
    const startAfter = options.startAfter !== undefined ? this.fullKey(options.startAfter) : undefined;
    let continuationToken: string | undefined;
    do {
      const page = await this.listPage(prefix, {
        continuationToken,
        startAfter: continuationToken ? undefined : startAfter,
        maxKeys: Math.min(PAGE_SIZE, remaining),
        delimiter: options.delimiter,
      });
      for (const object of page.Contents ?? []) {
        if (object.Key === undefined) continue;
        yield {
          key: this.relativeKey(object.Key),
          size: object.Size ?? 0,
          etag: object.ETag ?? "",
          lastModified: object.LastModified ?? new Date(0),
        };
        if (--remaining <= 0) return;
      }
      continuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (continuationToken);
  }

  async listPrefixes(prefix: string): Promise<string[]> {
    checkPrefix(prefix, this.uri);
    const prefixes: string[] = [];
    let continuationToken: string | undefined;
    do {
      const page = await this.listPage(prefix, { continuationToken, maxKeys: PAGE_SIZE, delimiter: "/" });
      for (const common of page.CommonPrefixes ?? []) {
        if (common.Prefix !== undefined) prefixes.push(this.relativeKey(common.Prefix));
      }
      continuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (continuationToken);
    return prefixes;
  }

  async deleteMany(keys: readonly string[]): Promise<DeleteResult> {
    // Validate everything before deleting anything.
    for (const key of keys) checkKey(key, this.uri);
    const batches: string[][] = [];
    for (let i = 0; i < keys.length; i += DELETE_BATCH) batches.push(keys.slice(i, i + DELETE_BATCH));
    const results = await mapConcurrent(batches, this.deleteConcurrency, (batch) => this.deleteBatch(batch));
    return { deleted: results.flatMap((r) => r.deleted), failed: results.flatMap((r) => r.failed) };
  }

  private async deleteBatch(keys: string[]): Promise<DeleteResult> {
    this.stats.record("delete");
    try {
      const { sdk, client } = await this.connect();
      const out = await client.send(
        new sdk.DeleteObjectsCommand({
          Bucket: this.bucket,
          Delete: { Objects: keys.map((key) => ({ Key: this.fullKey(key) })), Quiet: true },
        }),
      );
      // Quiet mode lists only failures; a key missing from Errors is gone (absent keys count as deleted).
      const failed: DeleteFailure[] = [];
      const failedKeys = new Set<string>();
      for (const error of out.Errors ?? []) {
        if (error.Key === undefined) continue;
        const key = this.relativeKey(error.Key);
        failedKeys.add(key);
        const throttled = THROTTLE_NAMES.has(error.Code ?? "");
        failed.push({ key, message: `${this.uriOf(key)}: ${error.Code ?? "delete failed"}${error.Message ? `: ${error.Message}` : ""}`, ...(throttled ? { throttled } : {}) });
      }
      return { deleted: keys.filter((key) => !failedKeys.has(key)), failed };
    } catch (err) {
      // The whole request failed: every key in it is reported, none is thrown.
      const mapped = this.mapError(err, this.uri);
      const throttled = mapped instanceof ThrottledError;
      return { deleted: [], failed: keys.map((key) => ({ key, message: mapped.message, ...(throttled ? { throttled } : {}) })) };
    }
  }

  private async listPage(prefix: string, page: { continuationToken?: string; startAfter?: string; maxKeys: number; delimiter?: string }): Promise<ListObjectsV2CommandOutput> {
    this.stats.record("list");
    try {
      const { sdk, client } = await this.connect();
      return await client.send(
        new sdk.ListObjectsV2Command({
          Bucket: this.bucket,
          Prefix: this.listPrefix(prefix),
          MaxKeys: page.maxKeys,
          ...(page.continuationToken ? { ContinuationToken: page.continuationToken } : {}),
          ...(page.startAfter !== undefined ? { StartAfter: page.startAfter } : {}),
          ...(page.delimiter ? { Delimiter: page.delimiter } : {}),
        }),
      );
    } catch (err) {
      throw this.mapError(err, this.uriOf(prefix));
    }
  }

  private fullKey(key: string): string {
    return this.prefix ? `${this.prefix}/${key}` : key;
  }

  /** The bucket-level prefix for a listing; the store root itself lists as "root/". */
  private listPrefix(prefix: string): string {
    return this.prefix ? `${this.prefix}/${prefix}` : prefix;
  }

  private relativeKey(fullKey: string): string {
    return this.prefix ? fullKey.slice(this.prefix.length + 1) : fullKey;
  }

  private mapError(err: unknown, uri: string): StoreError {
    if (err instanceof HeldSilent) {
      return new NoAnswerError(`${uri}: not sent: no answer from S3 endpoint ${this.endpoint} within the timeout on any attempt of a request just before ${NO_ANSWER_SETTINGS}`, {
        uri,
      });
    }
    const mapped = mapS3Error(err, { uri, bucket: this.bucket, endpoint: this.endpoint });
    if (mapped instanceof NoAnswerError) this.cell.silentSince = Date.now();
    return mapped;
  }
}

/** The object's full size from a Content-Range header ("bytes 0-9/1234"). */
function totalSize(contentRange: string | undefined): number | undefined {
  const match = contentRange ? /\/(\d+)\s*$/.exec(contentRange) : null;
  return match ? Number(match[1]) : undefined;
}

function requireEtag(etag: string | undefined, uri: string): string {
  if (!etag) throw new StoreError(`${uri}: S3 response carried no ETag`, { uri });
  return etag;
}
