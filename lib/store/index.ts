/** The public store API. */
export type {
  ByteRange,
  DeleteFailure,
  DeleteResult,
  GetResult,
  ListOptions,
  ObjectInfo,
  ObjectStore,
  PutOptions,
  PutResult,
  RequestCounts,
  RequestKind,
} from "./object-store.ts";
export { RequestStats } from "./object-store.ts";
export {
  AccessDeniedError,
  ConflictError,
  InvalidLocationError,
  InvalidRangeError,
  NotFoundError,
  PreconditionFailedError,
  StoreError,
  StoreUnavailableError,
  ThrottledError,
} from "./errors.ts";
export type { StoreErrorOptions } from "./errors.ts";
export { compareKeys } from "./keys.ts";
export { parseLocation } from "./location.ts";
export type { StoreLocation } from "./location.ts";
export { openStore } from "./open-store.ts";
export type { StoreOptions } from "./open-store.ts";
export { LocalStore } from "./local-store.ts";
export type { LocalStoreOptions } from "./local-store.ts";
export { S3Store } from "./s3-store.ts";
export type { S3StoreOptions } from "./s3-store.ts";
export { createS3Client } from "./s3-client.ts";
export type { ResolvedS3Client, S3ConnectionOptions } from "./s3-client.ts";
