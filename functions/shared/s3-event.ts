/**
 * S3 event notifications as delivered in an SQS message body ("Event message structure" in the
 * S3 User Guide): either `{"Records":[...]}` or, once per notification configuration change,
 * the `s3:TestEvent` message, which carries no object and is not a commit.
 */

export interface S3ObjectEvent {
  /** `ObjectCreated:Put`, `ObjectCreated:CompleteMultipartUpload`, `ObjectRemoved:Delete`... */
  eventName: string;
  bucket: string;
  /** The object key, decoded (S3 sends it form-URL-encoded: `+` for space, `%XX` for the rest). */
  key: string;
  eventTime: Date;
  size?: number;
  /** Orders events for the same key only. */
  sequencer?: string;
}

export type S3Notification = { kind: "test"; bucket: string } | { kind: "objects"; objects: S3ObjectEvent[] };

/** The message is not an S3 notification we can read; names where it came from and why. */
export class MalformedEventError extends Error {
  readonly source: string;
  constructor(source: string, problem: string) {
    super(`${source}: ${problem}`);
    this.name = "MalformedEventError";
    this.source = source;
  }
}

/** `source` names the message in errors, e.g. `SQS message 3f2a…`. */
export function parseS3Notification(body: string, source: string): S3Notification {
  let message: unknown;
  try {
    message = JSON.parse(body);
  } catch {
    throw new MalformedEventError(source, `body is not JSON: ${preview(body)}`);
  }
  if (!isObject(message)) throw new MalformedEventError(source, `body is not an S3 event: ${preview(body)}`);
  if (message.Event === "s3:TestEvent") {
    return { kind: "test", bucket: typeof message.Bucket === "string" ? message.Bucket : "" };
  }
  if (!Array.isArray(message.Records)) {
    throw new MalformedEventError(source, `body has no Records array: ${preview(body)}`);
  }
  return { kind: "objects", objects: message.Records.map((record, index) => parseRecord(record, index, source)) };
}

/** Decodes a key as S3 writes it into events: `+` is a space, then percent-decoding (UTF-8). */
export function decodeS3EventKey(encoded: string, source: string): string {
  return decodeKey(encoded, (problem) => new MalformedEventError(source, problem));
}

function decodeKey(encoded: string, fail: (problem: string) => Error): string {
  try {
    return decodeURIComponent(encoded.replace(/\+/g, " "));
  } catch {
    throw fail(`object key ${JSON.stringify(encoded)} is not valid URL encoding`);
  }
}

/** The inverse, for building events the way S3 does (tests, local tools). */
export function encodeS3EventKey(key: string): string {
  return encodeURIComponent(key).replace(/%20/g, "+").replace(/%2F/g, "/");
}

function parseRecord(record: unknown, index: number, source: string): S3ObjectEvent {
  const fail = (problem: string): MalformedEventError => new MalformedEventError(source, `record ${index} ${problem}`);
  if (!isObject(record) || typeof record.eventName !== "string" || !isObject(record.s3)) {
    throw fail("is not an S3 event record (eventName and s3 expected)");
  }
  const { bucket, object } = record.s3;
  if (!isObject(bucket) || typeof bucket.name !== "string" || bucket.name === "") {
    throw fail("has no s3.bucket.name");
  }
  if (!isObject(object) || typeof object.key !== "string" || object.key === "") {
    throw fail("has no s3.object.key");
  }
  const eventTime = new Date(typeof record.eventTime === "string" ? record.eventTime : Number.NaN);
  if (Number.isNaN(eventTime.getTime())) throw fail(`has an unreadable eventTime ${JSON.stringify(record.eventTime)}`);
  return {
    eventName: record.eventName,
    bucket: bucket.name,
    key: decodeKey(object.key, (problem) => fail(problem)),
    eventTime,
    size: typeof object.size === "number" ? object.size : undefined,
    sequencer: typeof object.sequencer === "string" ? object.sequencer : undefined,
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function preview(text: string): string {
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text);
}
