/**
 * One signed AWS request over node:http(s), with the AWS SDK's standard retries: the transport of
 * the small S3 client (s3-http-store.ts) and the functions' small SQS sender.
 *
 * Why not the SDK on these paths: a Lambda cold start loads @aws-sdk/client-s3 (about 340 KiB
 * of each function's minified bundle, 420 KiB as a bundle alone; bench/results/bundle-sizes.md)
 * before its first event, and the functions use five S3 operations. This module is SigV4 from
 * aws4 (8 KiB minified, no dependencies) plus node:http. The SDK's own signer,
 * @smithy/signature-v4, imports @smithy/core's indexes, which then share chunks with the lazily
 * loaded Glue SDK: 70 KiB more at start for on-commit and cleanup-table (measured, esbuild 0.28).
 *
 * Retries follow the SDK's standard mode: up to AWS_MAX_ATTEMPTS attempts (default 3), full
 * jitter backoff from 100 ms (500 ms after a throttling answer) doubling to at most 20 s, on no
 * answer, a dropped connection, HTTP 5xx and 429, and the throttling and transient error codes.
 */
import { createHash } from "node:crypto";
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import aws4 from "aws4";

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface AwsRequest {
  method: "GET" | "HEAD" | "PUT" | "POST" | "DELETE";
  /** Where the request goes: `https://host[:port]`, no path. */
  origin: string;
  /** The path, already URI-encoded as it goes on the wire (S3 keys: each segment once). */
  path: string;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  body?: Uint8Array;
}

export interface AwsResponse {
  status: number;
  headers: IncomingMessage["headers"];
  body: Buffer;
}

export interface AwsClientOptions {
  /** The signing name: "s3", "sqs". */
  service: string;
  region: string;
  credentials: AwsCredentials;
  /** Attempts per request, the first included (default AWS_MAX_ATTEMPTS, else 3). */
  maxAttempts: number;
  /** An attempt with no byte either way for this long fails as a timeout (an idle timeout: a transfer that moves is not cut). */
  requestTimeoutMs: number;
  /** The error code of an error answer (S3: the XML's Code; SQS: the JSON's __type), which decides whether to retry. */
  errorCode(response: AwsResponse): string | undefined;
}

/** Codes that mean "slow down": retried after a longer pause. */
export const THROTTLING_CODES = new Set([
  "SlowDown",
  "Throttling",
  "ThrottlingException",
  "ThrottledException",
  "RequestThrottled",
  "RequestThrottledException",
  "RequestLimitExceeded",
  "TooManyRequestsException",
  "ProvisionedThroughputExceededException",
  "BandwidthLimitExceeded",
  "AWS.SimpleQueueService.RequestThrottled",
]);
const TRANSIENT_CODES = new Set(["RequestTimeout", "RequestTimeoutException", "InternalError", "ServiceUnavailable"]);
const TRANSIENT_STATUS = new Set([429, 500, 502, 503, 504]);
const BASE_DELAY_MS = 100;
const THROTTLED_BASE_DELAY_MS = 500;
const MAX_DELAY_MS = 20_000;

/** An error answer from the service, shaped as the SDK's errors are, so the store's error mapping reads both. */
export class AwsServiceError extends Error {
  readonly $metadata: { httpStatusCode: number };
  constructor(name: string, message: string, status: number) {
    super(message);
    this.name = name;
    this.$metadata = { httpStatusCode: status };
  }
}

/** Thrown when an attempt got no byte for `requestTimeoutMs`; named like the SDK's, which the error mapping knows. */
class RequestTimeoutError extends Error {
  readonly code = "ETIMEDOUT";
  constructor(ms: number) {
    super(`no answer within ${ms} ms`);
    this.name = "TimeoutError";
  }
}

export class AwsClient {
  private readonly agents = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };
  readonly options: AwsClientOptions;

  constructor(options: AwsClientOptions) {
    this.options = options;
  }

  /** The answer to the request, retried as the SDK would; an error answer after the last attempt is returned, not thrown. */
  async send(request: AwsRequest): Promise<AwsResponse> {
    for (let attempt = 1; ; attempt++) {
      let response: AwsResponse | undefined;
      let failure: unknown;
      try {
        response = await this.attempt(request);
      } catch (error) {
        failure = error;
      }
      const code = response && response.status >= 300 ? this.options.errorCode(response) : undefined;
      const retryable = response ? TRANSIENT_STATUS.has(response.status) || (code !== undefined && (THROTTLING_CODES.has(code) || TRANSIENT_CODES.has(code))) : true;
      if (!retryable || attempt >= this.options.maxAttempts) {
        if (response) return response;
        throw failure;
      }
      const base = code !== undefined && THROTTLING_CODES.has(code) ? THROTTLED_BASE_DELAY_MS : BASE_DELAY_MS;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(MAX_DELAY_MS, base * 2 ** (attempt - 1))));
    }
  }

  private async attempt(request: AwsRequest): Promise<AwsResponse> {
    const url = new URL(request.origin);
    const body = request.body ?? new Uint8Array(0);
    // RFC 3986 in the query as on the path: a space is %20 and "+" is %2B, so no reader takes "+" for a space.
    const search = new URLSearchParams(request.query ?? {}).toString().replace(/\+/g, "%20");
    const path = search ? `${request.path}?${search}` : request.path;
    const headers: Record<string, string> = {
      ...request.headers,
      // The payload's hash is signed: S3 rejects a body that changed on the way.
      "x-amz-content-sha256": createHash("sha256").update(body).digest("hex"),
      ...(body.byteLength > 0 || request.method === "PUT" || request.method === "POST" ? { "content-length": String(body.byteLength) } : {}),
    };
    // No body to aws4: it would hash it again and give a body without a content type a form's.
    const signed = aws4.sign({ service: this.options.service, region: this.options.region, method: request.method, host: url.host, path, headers }, this.options.credentials);
    const isHttps = url.protocol === "https:";
    return new Promise<AwsResponse>((resolve, reject) => {
      const sent = (isHttps ? httpsRequest : httpRequest)(
        {
          method: request.method,
          protocol: url.protocol,
          hostname: url.hostname,
          port: url.port || (isHttps ? 443 : 80),
          path,
          headers: signed.headers,
          agent: isHttps ? this.agents.https : this.agents.http,
        },
        (answer) => {
          const chunks: Buffer[] = [];
          answer.on("data", (chunk: Buffer) => chunks.push(chunk));
          answer.on("end", () => resolve({ status: answer.statusCode ?? 0, headers: answer.headers, body: Buffer.concat(chunks) }));
          answer.on("error", reject);
        },
      );
      sent.setTimeout(this.options.requestTimeoutMs, () => sent.destroy(new RequestTimeoutError(this.options.requestTimeoutMs)));
      sent.on("error", reject);
      sent.end(body.byteLength > 0 ? body : undefined);
    });
  }
}

/**
 * The Lambda's credentials, from the environment the runtime sets (AWS_ACCESS_KEY_ID,
 * AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN): the execution role's, valid for the life of the
 * execution environment. Throws naming the variables when they are missing.
 */
export function credentialsFromEnvironment(env: NodeJS.ProcessEnv): AwsCredentials {
  const accessKeyId = env.AWS_ACCESS_KEY_ID?.trim();
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY?.trim();
  if (!accessKeyId || !secretAccessKey) {
    throw new Error("AWS credentials not found: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set (the Lambda runtime sets them from the execution role)");
  }
  const sessionToken = env.AWS_SESSION_TOKEN?.trim();
  return { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) };
}

/** AWS_MAX_ATTEMPTS as the SDK reads it, else 3. */
export function maxAttemptsFromEnvironment(env: NodeJS.ProcessEnv): number {
  const value = Number(env.AWS_MAX_ATTEMPTS);
  return Number.isSafeInteger(value) && value >= 1 ? value : 3;
}
