/** Builds the one S3Client a family of S3 stores shares, from explicit options or the standard AWS environment. */
import { S3Client } from "@aws-sdk/client-s3";
import type { S3Connection, S3ConnectionOptions } from "./s3-connection.ts";
import { resolveS3Connection } from "./s3-connection.ts";

export type { S3ConnectionOptions } from "./s3-connection.ts";
export { DEFAULT_REQUEST_TIMEOUT_MS, REQUEST_TIMEOUT_VARIABLE } from "./s3-connection.ts";

export interface ResolvedS3Client {
  client: S3Client;
  /** Where requests go, for error messages. */
  endpoint: string;
}

export function createS3Client(options: S3ConnectionOptions = {}, env: NodeJS.ProcessEnv = process.env): ResolvedS3Client {
  const connection = resolveS3Connection(options, env);
  return { client: clientOf(connection), endpoint: connection.label };
}

/** The connection's S3Client: the caller's own, or a new one. */
export function clientOf(connection: S3Connection): S3Client {
  return connection.client ?? new S3Client(connection.config);
}
