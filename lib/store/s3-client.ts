/** Builds the one S3Client a family of S3 stores shares, from explicit options or the standard AWS environment. */
import { S3Client } from "@aws-sdk/client-s3";
import type { S3ClientConfig } from "@aws-sdk/client-s3";

export interface S3ConnectionOptions {
  /** Use this client (and ignore the settings below). */
  client?: S3Client;
  /** Custom endpoint (emulators, S3-compatible stores); default AWS_ENDPOINT_URL_S3, then AWS_ENDPOINT_URL. */
  endpoint?: string;
  /** Default AWS_REGION, then AWS_DEFAULT_REGION, then the SDK's own chain (us-east-1 with a custom endpoint). */
  region?: string;
  /** Default: the SDK's credential chain (environment, profile, container, instance role). */
  credentials?: S3ClientConfig["credentials"];
  /** Default: true when an endpoint is set (emulators rarely resolve bucket subdomains). */
  forcePathStyle?: boolean;
  /** SDK attempts per request, first included (SDK default 3, or AWS_MAX_ATTEMPTS). */
  maxAttempts?: number;
  /** Give up connecting after this long (default 10 s), so a dead endpoint fails in seconds. */
  connectionTimeoutMs?: number;
  /** Give up on a response after this long (SDK default: none). */
  requestTimeoutMs?: number;
}

export interface ResolvedS3Client {
  client: S3Client;
  /** Where requests go, for error messages. */
  endpoint: string;
}

export function createS3Client(options: S3ConnectionOptions = {}, env: NodeJS.ProcessEnv = process.env): ResolvedS3Client {
  const endpoint = options.endpoint ?? nonEmpty(env.AWS_ENDPOINT_URL_S3) ?? nonEmpty(env.AWS_ENDPOINT_URL);
  const region = options.region ?? nonEmpty(env.AWS_REGION) ?? nonEmpty(env.AWS_DEFAULT_REGION) ?? (endpoint ? "us-east-1" : undefined);
  const label = endpoint ?? (region ? `https://s3.${region}.amazonaws.com` : "AWS S3");
  if (options.client) return { client: options.client, endpoint: label };
  const client = new S3Client({
    ...(endpoint ? { endpoint } : {}),
    ...(region ? { region } : {}),
    ...(options.credentials ? { credentials: options.credentials } : {}),
    ...(options.maxAttempts ? { maxAttempts: options.maxAttempts } : {}),
    forcePathStyle: options.forcePathStyle ?? endpoint !== undefined,
    // A bucket in another region answers 301; follow it rather than fail.
    followRegionRedirects: true,
    requestHandler: {
      connectionTimeout: options.connectionTimeoutMs ?? 10_000,
      ...(options.requestTimeoutMs ? { requestTimeout: options.requestTimeoutMs } : {}),
    },
  });
  return { client, endpoint: label };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value && value.trim() !== "" ? value.trim() : undefined;
}
