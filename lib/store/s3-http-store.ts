/**
 * ObjectStore on S3 through a small client of its own (aws-request.ts, s3-xml.ts), for the Lambda
 * functions: the same contract, errors and request counts as S3Store, which the CLI and the
 * library keep (with the AWS SDK's credential chain, profiles and every S3 feature).
 *
 * Why not the SDK in Lambda: the functions' cold start loaded @aws-sdk/client-s3 before the first
 * event, about 340 KiB of each minified bundle, and the S3 client alone takes 420 KiB and most of
 * a bare cold start (bench/results/cold-start.md); lakewarden uses five operations of it. This
 * client, its signer (aws4) and its XML parser add about 35 KiB, and it is tested against the SDK as its
 * oracle (test/store/s3-http-store.test.ts) and by the store conformance suite on moto.
 *
 * What it leaves to the SDK: credentials other than the environment's (profiles, SSO, instance
 * metadata; a Lambda's are in its environment), multipart uploads (no object lakewarden writes
 * comes near 5 GiB), checksums beyond Content-MD5 for DeleteObjects.
 */
import { createHash } from "node:crypto";
import { checkRange, rangeHeader } from "./byte-range.ts";
import { NoAnswerError, StoreError, ThrottledError } from "./errors.ts";
import { AwsClient, AwsServiceError, credentialsFromEnvironment, maxAttemptsFromEnvironment, type AwsRequest, type AwsResponse } from "./aws-request.ts";
import { checkKey, checkPrefix, checkSubpath } from "./keys.ts";
import { mapConcurrent } from "./map-concurrent.ts";
import { RequestStats } from "./object-store.ts";
import type { ByteRange, DeleteFailure, DeleteResult, GetResult, ListOptions, ObjectInfo, ObjectStore, PutOptions, PutResult } from "./object-store.ts";
import { resolveS3Connection, type S3ConnectionOptions } from "./s3-connection.ts";
import { NO_ANSWER_SETTINGS, THROTTLE_NAMES, mapS3Error } from "./s3-errors.ts";
import { deleteRequestXml, parseDeleteErrors, parseErrorBody, parseListPage, type ListPage } from "./s3-xml.ts";

const PAGE_SIZE = 1000;
const DELETE_BATCH = 1000;
/** As S3Store: after a request got no answer on any attempt, requests this soon after fail at once. */
const SILENT_ENDPOINT_HOLD_MS = 60_000;

/** What a store and its scopes share: the client, where requests go, and what the endpoint said so far. */
export interface S3HttpConnection {
  client: AwsClient;
  /** A custom endpoint (`http://127.0.0.1:5000`), or undefined for AWS's own per region. */
  endpoint: string | undefined;
  region: string;
  forcePathStyle: boolean;
  /** Where requests go, named in "cannot reach" errors. */
  label: string;
  /** Buckets S3 said live in another region (a 301 with x-amz-bucket-region), and which. */
  bucketRegions: Map<string, AwsClient>;
  silentSince: number | null;
}

/**
 * The connection from the standard AWS environment (AWS_REGION, AWS_ENDPOINT_URL_S3 or
 * AWS_ENDPOINT_URL, AWS_MAX_ATTEMPTS, LAKEWARDEN_S3_REQUEST_TIMEOUT) and the credentials in it.
 */
export function connectS3Http(options: Omit<S3ConnectionOptions, "client" | "credentials"> = {}, env: NodeJS.ProcessEnv = process.env): S3HttpConnection {
  const { config, label } = resolveS3Connection(options, env);
  const endpoint = typeof config.endpoint === "string" ? config.endpoint.replace(/\/+$/, "") : undefined;
  const region = typeof config.region === "string" ? config.region : undefined;
  if (!region) throw new StoreError("AWS_REGION is not set: the S3 client needs the region of its buckets", { uri: "env:AWS_REGION" });
  const requestTimeoutMs = (config.requestHandler as { requestTimeout?: number } | undefined)?.requestTimeout ?? 15_000;
  const client = s3Client(region, env, options.maxAttempts ?? maxAttemptsFromEnvironment(env), requestTimeoutMs);
  return { client, endpoint, region, forcePathStyle: config.forcePathStyle === true, label, bucketRegions: new Map(), silentSince: null };
}

function s3Client(region: string, env: NodeJS.ProcessEnv, maxAttempts: number, requestTimeoutMs: number): AwsClient {
  return new AwsClient({
    service: "s3",
    region,
    credentials: credentialsFromEnvironment(env),
    maxAttempts,
    requestTimeoutMs,
    errorCode: (response) => parseErrorBody(response.body.toString("utf8"))?.code,
  });
}

/** A key as S3 wants it in a path: each segment percent-encoded once (RFC 3986), the "/" kept. */
export function encodeKeyPath(key: string): string {
  return encodeURIComponent(key)
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%2F/g, "/");
}

export interface S3HttpStoreOptions {
  connection: S3HttpConnection;
  bucket: string;
  /** Key prefix of the store root inside the bucket, without leading or trailing "/" ("" = whole bucket). */
  prefix?: string;
  stats?: RequestStats;
  /** DeleteObjects requests in flight at once (default 4). */
  deleteConcurrency?: number;
}

export class S3HttpStore implements ObjectStore {
  readonly bucket: string;
  readonly prefix: string;
  readonly uri: string;
  readonly stats: RequestStats;
  readonly endpoint: string;
  private readonly connection: S3HttpConnection;
  private readonly deleteConcurrency: number;

  constructor(options: S3HttpStoreOptions) {
    this.connection = options.connection;
    this.bucket = options.bucket;
    this.prefix = (options.prefix ?? "").replace(/^\/+|\/+$/g, "");
    this.uri = this.prefix ? `s3://${this.bucket}/${this.prefix}` : `s3://${this.bucket}`;
    this.stats = options.stats ?? new RequestStats();
    this.endpoint = options.connection.label;
    this.deleteConcurrency = Math.max(1, options.deleteConcurrency ?? 4);
  }

  uriOf(key: string): string {
    return `${this.uri}/${key}`;
  }

  scope(subpath: string): S3HttpStore {
    const clean = checkSubpath(subpath, this.uri);
    return new S3HttpStore({ connection: this.connection, bucket: this.bucket, prefix: this.fullKey(clean), stats: this.stats, deleteConcurrency: this.deleteConcurrency });
  }

  async get(key: string, range?: ByteRange): Promise<GetResult> {
    checkKey(key, this.uri);
    const uri = this.uriOf(key);
    if (range) checkRange(range, uri);
    this.stats.record("get");
    const answer = await this.send(uri, { method: "GET", key: this.fullKey(key), headers: range ? { range: rangeHeader(range) } : {} });
    // A small Buffer may sit in Node's shared pool: callers get bytes of their own, as from the SDK.
    const whole = answer.body.byteOffset === 0 && answer.body.buffer.byteLength === answer.body.byteLength;
    const body = whole ? new Uint8Array(answer.body.buffer, 0, answer.body.byteLength) : new Uint8Array(answer.body);
    const size = totalSize(header(answer, "content-range")) ?? Number(header(answer, "content-length") ?? body.length);
    return { key, size, etag: requireEtag(answer, uri), lastModified: lastModified(answer), body };
  }

  async head(key: string): Promise<ObjectInfo> {
    checkKey(key, this.uri);
    const uri = this.uriOf(key);
    this.stats.record("head");
    const answer = await this.send(uri, { method: "HEAD", key: this.fullKey(key) });
    return { key, size: Number(header(answer, "content-length") ?? 0), etag: requireEtag(answer, uri), lastModified: lastModified(answer) };
  }

  async put(key: string, body: Uint8Array, options: PutOptions = {}): Promise<PutResult> {
    checkKey(key, this.uri);
    const uri = this.uriOf(key);
    this.stats.record("put");
    const headers: Record<string, string> = {
      ...(options.contentType ? { "content-type": options.contentType } : {}),
      ...(options.ifMatch !== undefined ? { "if-match": options.ifMatch } : {}),
      ...(options.ifNoneMatch ? { "if-none-match": options.ifNoneMatch } : {}),
    };
    const answer = await this.send(uri, { method: "PUT", key: this.fullKey(key), headers, body });
    return { etag: requireEtag(answer, uri) };
  }

  async *list(prefix: string, options: ListOptions = {}): AsyncIterable<ObjectInfo> {
    checkPrefix(prefix, this.uri);
    let remaining = options.maxKeys ?? Number.POSITIVE_INFINITY;
    if (remaining <= 0) return;
    let continuationToken: string | undefined;
    do {
      const page = await this.listPage(prefix, {
        ...(continuationToken ? { "continuation-token": continuationToken } : options.startAfter !== undefined ? { "start-after": this.fullKey(options.startAfter) } : {}),
        "max-keys": String(Math.min(PAGE_SIZE, remaining)),
        ...(options.delimiter ? { delimiter: options.delimiter } : {}),
      });
      for (const object of page.contents) {
        yield { ...object, key: this.relativeKey(object.key) };
        if (--remaining <= 0) return;
      }
      continuationToken = page.isTruncated ? page.nextContinuationToken : undefined;
    } while (continuationToken);
  }

  async listPrefixes(prefix: string): Promise<string[]> {
    checkPrefix(prefix, this.uri);
    const prefixes: string[] = [];
    let continuationToken: string | undefined;
    do {
      const page = await this.listPage(prefix, { ...(continuationToken ? { "continuation-token": continuationToken } : {}), "max-keys": String(PAGE_SIZE), delimiter: "/" });
      prefixes.push(...page.commonPrefixes.map((common) => this.relativeKey(common)));
      continuationToken = page.isTruncated ? page.nextContinuationToken : undefined;
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
    const body = Buffer.from(deleteRequestXml(keys.map((key) => this.fullKey(key))), "utf8");
    let errors;
    try {
      const answer = await this.send(this.uri, {
        method: "POST",
        query: { delete: "" },
        headers: { "content-type": "application/xml", "content-md5": createHash("md5").update(body).digest("base64") },
        body,
      });
      errors = parseDeleteErrors(answer.body.toString("utf8"));
    } catch (err) {
      // The whole request failed: every key in it is reported, none is thrown.
      const mapped = err instanceof StoreError ? err : this.mapError(err, this.uri);
      const throttled = mapped instanceof ThrottledError;
      return { deleted: [], failed: keys.map((key) => ({ key, message: mapped.message, ...(throttled ? { throttled } : {}) })) };
    }
    // Quiet mode lists only failures; a key missing from them is gone (absent keys count as deleted).
    const failed: DeleteFailure[] = [];
    const failedKeys = new Set<string>();
    for (const error of errors) {
      const key = this.relativeKey(error.key);
      failedKeys.add(key);
      const throttled = THROTTLE_NAMES.has(error.code);
      failed.push({ key, message: `${this.uriOf(key)}: ${error.code || "delete failed"}${error.message ? `: ${error.message}` : ""}`, ...(throttled ? { throttled } : {}) });
    }
    return { deleted: keys.filter((key) => !failedKeys.has(key)), failed };
  }

  private async listPage(prefix: string, query: Record<string, string>): Promise<ListPage> {
    this.stats.record("list");
    const uri = this.uriOf(prefix);
    const answer = await this.send(uri, { method: "GET", query: { "list-type": "2", prefix: this.listPrefix(prefix), "encoding-type": "url", ...query } });
    try {
      return parseListPage(answer.body.toString("utf8"));
    } catch (err) {
      throw new StoreError(`${uri}: ${(err as Error).message}`, { uri, cause: err });
    }
  }

  /**
   * One request to the bucket (with `key`, to an object), its error answer thrown as the store's
   * typed error. A bucket in another region answers 301 naming its region; the request is sent
   * there once and the bucket's region remembered, as the SDK's followRegionRedirects does.
   */
  private async send(
    uri: string,
    request: { method: AwsRequest["method"]; key?: string; query?: Record<string, string>; headers?: Record<string, string>; body?: Uint8Array },
  ): Promise<AwsResponse> {
    const connection = this.connection;
    if (connection.silentSince !== null && Date.now() - connection.silentSince < SILENT_ENDPOINT_HOLD_MS) {
      throw new NoAnswerError(`${uri}: not sent: no answer from S3 endpoint ${this.endpoint} within the timeout on any attempt of a request just before ${NO_ANSWER_SETTINGS}`, {
        uri,
      });
    }
    try {
      let client = connection.bucketRegions.get(this.bucket) ?? connection.client;
      let answer = await client.send(this.addressed(request, client.options.region));
      const bucketRegion = header(answer, "x-amz-bucket-region");
      if ((answer.status === 301 || answer.status === 400) && bucketRegion && bucketRegion !== client.options.region) {
        client = new AwsClient({ ...client.options, region: bucketRegion });
        connection.bucketRegions.set(this.bucket, client);
        answer = await client.send(this.addressed(request, bucketRegion));
      }
      if (answer.status >= 300) {
        const error = parseErrorBody(answer.body.toString("utf8"));
        const name = error?.code || (request.method === "HEAD" && answer.status === 404 ? "NotFound" : "");
        throw new AwsServiceError(name, error?.message || `HTTP ${answer.status}`, answer.status);
      }
      return answer;
    } catch (err) {
      throw this.mapError(err, uri);
    }
  }

  /** Where the request goes: path style for a custom endpoint or a bucket name with dots, else the bucket's own host. */
  private addressed(
    request: { method: AwsRequest["method"]; key?: string; query?: Record<string, string>; headers?: Record<string, string>; body?: Uint8Array },
    region: string,
  ): AwsRequest {
    const connection = this.connection;
    const keyPath = request.key === undefined ? "" : `/${encodeKeyPath(request.key)}`;
    const pathStyle = connection.forcePathStyle || this.bucket.includes(".");
    const aws = `s3.${region}.amazonaws.com`;
    const origin = connection.endpoint ?? (pathStyle ? `https://${aws}` : `https://${this.bucket}.${aws}`);
    const path = pathStyle ? `/${this.bucket}${keyPath}` : keyPath || "/";
    return {
      method: request.method,
      origin,
      path,
      ...(request.query ? { query: request.query } : {}),
      ...(request.headers ? { headers: request.headers } : {}),
      ...(request.body ? { body: request.body } : {}),
    };
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
    const mapped = mapS3Error(err, { uri, bucket: this.bucket, endpoint: this.endpoint });
    if (mapped instanceof NoAnswerError) this.connection.silentSince = Date.now();
    return mapped;
  }
}

function header(answer: AwsResponse, name: string): string | undefined {
  const value = answer.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function lastModified(answer: AwsResponse): Date {
  const text = header(answer, "last-modified");
  return text ? new Date(text) : new Date(0);
}

/** The object's full size from a Content-Range header ("bytes 0-9/1234"). */
function totalSize(contentRange: string | undefined): number | undefined {
  const match = contentRange ? /\/(\d+)\s*$/.exec(contentRange) : null;
  return match ? Number(match[1]) : undefined;
}

function requireEtag(answer: AwsResponse, uri: string): string {
  const etag = header(answer, "etag");
  if (!etag) throw new StoreError(`${uri}: S3 response carried no ETag`, { uri });
  return etag;
}
