/**
 * Typed store errors. Every error names the object it concerns (`uri`) so a user
 * reading a one-line message knows what failed and where.
 */
export interface StoreErrorOptions {
  /** Full URI of the object or prefix concerned, e.g. `s3://bucket/t.lance/_versions/1.manifest`. */
  uri: string;
  cause?: unknown;
}

export class StoreError extends Error {
  readonly uri: string;
  constructor(message: string, options: StoreErrorOptions) {
    super(message, { cause: options.cause });
    this.name = new.target.name;
    this.uri = options.uri;
  }
}

/** The object does not exist (S3 404 NoSuchKey / NotFound, ENOENT on disk). */
export class NotFoundError extends StoreError {}

/** A conditional write lost: If-Match saw another ETag, or If-None-Match: * saw an existing object (S3 412). */
export class PreconditionFailedError extends StoreError {}

/** A conflicting operation landed during a conditional write (S3 409 ConditionalRequestConflict): retry. */
export class ConflictError extends StoreError {}

/** The caller lacks permission (S3 403 AccessDenied, EACCES on disk). */
export class AccessDeniedError extends StoreError {}

/** The store could not be reached or answered with a server error after the SDK's retries. */
export class StoreUnavailableError extends StoreError {}

/** No answer within the request timeout on any attempt: the endpoint accepts and stays silent, or cannot be connected to. */
export class NoAnswerError extends StoreUnavailableError {}

/**
 * S3 asked us to slow down (503 SlowDown, or another 503) and the SDK's own retries did not get
 * through: the request may succeed later, at a lower rate. A StoreUnavailableError, so callers
 * that do not pace treat it as before.
 */
export class ThrottledError extends StoreUnavailableError {}

/** A key that would escape the store's root (`..`, absolute, empty segment) or a URI that cannot be parsed. */
export class InvalidLocationError extends StoreError {}

/** A ranged read asked for bytes the object does not have (S3 416 InvalidRange), or the range itself is malformed. */
export class InvalidRangeError extends StoreError {}

/** `Name: message` of anything thrown, for one log line or event (the CLI's user-facing line is lib/cli/errors.ts). */
export function errorSummary(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
