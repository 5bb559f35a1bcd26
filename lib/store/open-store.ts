/** Opens the right ObjectStore for a location string. */
import type { LocalStoreOptions } from "./local-store.ts";
import { LocalStore } from "./local-store.ts";
import { parseLocation } from "./location.ts";
import type { ObjectStore, RequestStats } from "./object-store.ts";
import type { S3ConnectionOptions } from "./s3-connection.ts";
import { resolveS3Connection } from "./s3-connection.ts";
import { S3Store } from "./s3-store.ts";

export interface StoreOptions {
  /** S3 settings; unset fields come from the standard AWS environment. */
  s3?: S3ConnectionOptions;
  local?: Omit<LocalStoreOptions, "stats">;
  /** Counters to record into (default: a fresh RequestStats per store). */
  stats?: RequestStats;
}

/**
 * `s3://bucket/prefix` → S3Store; `file:///abs/dir`, `./rel/dir` or `/abs/dir` → LocalStore.
 * A malformed location throws InvalidLocationError. No request is made until the store is used.
 */
export function openStore(location: string, options: StoreOptions = {}): ObjectStore {
  const parsed = parseLocation(location);
  if (parsed.kind === "local") {
    return new LocalStore(parsed.path, { ...options.local, ...(options.stats ? { stats: options.stats } : {}) });
  }
  // Settings are checked now; the client is made with the first request, once the SDK is loaded.
  const connection = resolveS3Connection(options.s3);
  return new S3Store({
    client: connection.client ?? ((sdk) => new sdk.S3Client(connection.config)),
    bucket: parsed.bucket,
    prefix: parsed.prefix,
    endpoint: connection.label,
    ...(options.stats ? { stats: options.stats } : {}),
  });
}
