/**
 * Maps AWS SDK errors onto the store's typed errors. The error code (`err.name`) decides first:
 * S3 does not model PreconditionFailed or ConditionalRequestConflict as classes, and a
 * precondition failure has been seen with an unexpected HTTP status; the status is the fallback.
 */
import {
  AccessDeniedError,
  ConflictError,
  InvalidRangeError,
  NoAnswerError,
  NotFoundError,
  PreconditionFailedError,
  StoreError,
  StoreUnavailableError,
  ThrottledError,
} from "./errors.ts";
import { DEFAULT_REQUEST_TIMEOUT_MS } from "./s3-connection.ts";

export interface S3ErrorContext {
  /** URI of the object or prefix the request concerned. */
  uri: string;
  bucket: string;
  /** Where requests went, for "cannot reach" messages. */
  endpoint: string;
}

const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ECONNRESET",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EPIPE",
  "ECONNABORTED",
  "UND_ERR_CONNECT_TIMEOUT",
]);
const TIMEOUT_NAMES = new Set(["TimeoutError", "RequestTimeout", "RequestTimeoutException"]);
const ACCESS_NAMES = new Set(["AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "ExpiredToken", "InvalidToken", "AllAccessDisabled"]);
/** Codes S3 uses to say "too many requests, slow down" (503); the SDK retries them first (standard mode, AWS_MAX_ATTEMPTS). */
export const THROTTLE_NAMES = new Set(["SlowDown", "ServiceUnavailable", "Throttling", "ThrottlingException", "RequestLimitExceeded"]);
const SERVER_NAMES = new Set(["InternalError"]);

/** What sets how long a request waits for an answer, for every "no answer" message. */
export const NO_ANSWER_SETTINGS = `(LAKEWARDEN_S3_REQUEST_TIMEOUT, default ${DEFAULT_REQUEST_TIMEOUT_MS / 1000}s, per attempt; AWS_MAX_ATTEMPTS attempts, default 3)`;

interface SdkErrorShape {
  name?: string;
  message?: string;
  code?: string;
  $metadata?: { httpStatusCode?: number };
  cause?: unknown;
}

export function mapS3Error(err: unknown, context: S3ErrorContext): StoreError {
  if (err instanceof StoreError) return err;
  const e = (err ?? {}) as SdkErrorShape;
  const name = e.name ?? "";
  const status = e.$metadata?.httpStatusCode;
  const { uri } = context;
  const options = { uri, cause: err };

  if (name === "NoSuchBucket") {
    const bucketUri = `s3://${context.bucket}`;
    return new NotFoundError(`${bucketUri}: bucket does not exist (while accessing ${uri})`, { uri: bucketUri, cause: err });
  }
  if (name === "NoSuchKey" || name === "NotFound") return new NotFoundError(`${uri}: not found`, options);
  if (name === "PreconditionFailed") return preconditionFailed(uri, err);
  if (name === "ConditionalRequestConflict") return conflict(uri, err);
  if (ACCESS_NAMES.has(name)) return new AccessDeniedError(`${uri}: access denied (${name})`, options);
  if (name === "InvalidRange") return new InvalidRangeError(`${uri}: requested range not satisfiable`, options);

  const networkCode = networkErrorCode(err);
  if (networkCode === "timeout") {
    return new NoAnswerError(`${uri}: no answer from S3 endpoint ${context.endpoint} within the timeout on any attempt ${NO_ANSWER_SETTINGS}`, options);
  }
  if (networkCode) {
    return new StoreUnavailableError(`${uri}: cannot reach S3 endpoint ${context.endpoint} (${networkCode})`, options);
  }
  if (THROTTLE_NAMES.has(name) || status === 503) {
    return new ThrottledError(`${uri}: S3 endpoint ${context.endpoint} asked to slow down (${name || "HTTP 503"}) after retries`, options);
  }
  if (SERVER_NAMES.has(name)) {
    return new StoreUnavailableError(`${uri}: S3 endpoint ${context.endpoint} unavailable (${name}) after retries`, options);
  }

  switch (status) {
    case 404:
      return new NotFoundError(`${uri}: not found`, options);
    case 412:
      return preconditionFailed(uri, err);
    case 409:
      return conflict(uri, err);
    case 403:
      return new AccessDeniedError(`${uri}: access denied`, options);
    case 416:
      return new InvalidRangeError(`${uri}: requested range not satisfiable`, options);
  }
  if (status !== undefined && status >= 500) {
    return new StoreUnavailableError(`${uri}: S3 endpoint ${context.endpoint} answered HTTP ${status} (${name || "server error"}) after retries`, options);
  }
  const detail = [name, e.message].filter(Boolean).join(": ") || String(err);
  return new StoreError(`${uri}: ${detail}${status ? ` (HTTP ${status})` : ""}`, options);
}

function preconditionFailed(uri: string, cause: unknown): PreconditionFailedError {
  return new PreconditionFailedError(`${uri}: precondition failed (412): the object changed or already exists`, { uri, cause });
}

function conflict(uri: string, cause: unknown): ConflictError {
  return new ConflictError(`${uri}: conflicting concurrent request (409 ConditionalRequestConflict); retry`, { uri, cause });
}

/** The socket-level reason a request never got an answer, if that is what happened. */
function networkErrorCode(err: unknown): string | undefined {
  for (let current: unknown = err, depth = 0; current && depth < 5; depth++) {
    const e = current as SdkErrorShape & { errors?: unknown[] };
    // The SDK's own timeouts carry code ETIMEDOUT too: the name says which it was.
    if (e.name && TIMEOUT_NAMES.has(e.name)) return "timeout";
    if (e.code && NETWORK_CODES.has(e.code)) return e.code;
    // Node reports "connection refused on every address" as an AggregateError.
    const inner = e.errors?.find((x) => NETWORK_CODES.has((x as SdkErrorShape).code ?? ""));
    if (inner) return (inner as SdkErrorShape).code;
    current = e.cause;
  }
  return undefined;
}
