/**
 * openStore for the Lambda functions: the same locations, with S3 through the small client
 * (s3-http-store.ts) instead of the AWS SDK, and one connection for every store it opens.
 */
import { LocalStore } from "./local-store.ts";
import { parseLocation } from "./location.ts";
import type { ObjectStore } from "./object-store.ts";
import { connectS3Http, S3HttpStore, type S3HttpConnection } from "./s3-http-store.ts";

/** Opens `s3://bucket/prefix` or a local path; the S3 connection is made from `env` at the first S3 location. */
export function httpStoreOpener(env: NodeJS.ProcessEnv = process.env): (location: string) => ObjectStore {
  let connection: S3HttpConnection | null = null;
  return (location) => {
    const parsed = parseLocation(location);
    if (parsed.kind === "local") return new LocalStore(parsed.path);
    connection ??= connectS3Http({}, env);
    return new S3HttpStore({ connection, bucket: parsed.bucket, prefix: parsed.prefix });
  };
}
