/**
 * Where and how an S3 store connects, resolved from explicit options or the standard AWS
 * environment without loading the AWS SDK: opening a store stays cheap and a bad setting still
 * fails at once, while the SDK (tens of MiB) loads with the first request (s3-store.ts).
 */
import type { S3Client, S3ClientConfig } from "@aws-sdk/client-s3";
import { InvalidLocationError } from "./errors.ts";

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
  /**
   * Give up on a request whose answer has not come (or stalls) this long: default
   * LAKEWARDEN_S3_REQUEST_TIMEOUT (`15s`, `500ms`, `2m`), else 15 s, so an endpoint that accepts
   * connections and never answers fails instead of hanging. Each SDK attempt gets this long.
   */
  requestTimeoutMs?: number;
}

/**
 * The request timeout when neither the option nor LAKEWARDEN_S3_REQUEST_TIMEOUT sets one. It is
 * an idle timeout (no byte either way for this long), so a long transfer that moves is not cut:
 * 15 s is far above S3's first-byte latency, and with the SDK's 3 attempts a silent endpoint
 * fails in under a minute (the store then fails every request at once: s3-store.ts).
 */
export const DEFAULT_REQUEST_TIMEOUT_MS = 15_000;
export const REQUEST_TIMEOUT_VARIABLE = "LAKEWARDEN_S3_REQUEST_TIMEOUT";

/** The settings an S3Client is built from, checked (a malformed timeout throws here). */
export interface S3Connection {
  /** The caller's own client, when given: used as is. */
  client: S3Client | null;
  /** Where requests go, for error messages. */
  label: string;
  config: S3ClientConfig;
}

export function resolveS3Connection(options: S3ConnectionOptions = {}, env: NodeJS.ProcessEnv = process.env): S3Connection {
  const endpoint = options.endpoint ?? nonEmpty(env.AWS_ENDPOINT_URL_S3) ?? nonEmpty(env.AWS_ENDPOINT_URL);
  const region = options.region ?? nonEmpty(env.AWS_REGION) ?? nonEmpty(env.AWS_DEFAULT_REGION) ?? (endpoint ? "us-east-1" : undefined);
  const label = endpoint ?? (region ? `https://s3.${region}.amazonaws.com` : "AWS S3");
  if (options.client) return { client: options.client, label, config: {} };
  const requestTimeout = options.requestTimeoutMs ?? requestTimeoutFrom(env);
  const config: S3ClientConfig = {
    ...(endpoint ? { endpoint } : {}),
    ...(region ? { region } : {}),
    ...(options.credentials ? { credentials: options.credentials } : {}),
    ...(options.maxAttempts ? { maxAttempts: options.maxAttempts } : {}),
    forcePathStyle: options.forcePathStyle ?? endpoint !== undefined,
    // A bucket in another region answers 301; follow it rather than fail.
    followRegionRedirects: true,
    requestHandler: {
      connectionTimeout: options.connectionTimeoutMs ?? 10_000,
      requestTimeout,
      // Without this the SDK only logs a warning when the timeout passes, and keeps waiting.
      throwOnRequestTimeout: true,
    },
  };
  return { client: null, label, config };
}

/** LAKEWARDEN_S3_REQUEST_TIMEOUT as milliseconds: `30s`, `500ms`, `2m` or a bare number of ms. */
function requestTimeoutFrom(env: NodeJS.ProcessEnv): number {
  const text = nonEmpty(env[REQUEST_TIMEOUT_VARIABLE]);
  if (text === undefined) return DEFAULT_REQUEST_TIMEOUT_MS;
  const match = /^(\d+(?:\.\d+)?)\s*(ms|s|m)?$/i.exec(text);
  const millis = match ? Number(match[1]) * { ms: 1, s: 1000, m: 60_000 }[(match[2] ?? "ms").toLowerCase() as "ms" | "s" | "m"] : NaN;
  if (!Number.isFinite(millis) || millis <= 0) {
    throw new InvalidLocationError(`${REQUEST_TIMEOUT_VARIABLE} = ${JSON.stringify(text)} is not a duration (e.g. 30s, 500ms, 2m)`, { uri: `env:${REQUEST_TIMEOUT_VARIABLE}` });
  }
  return Math.round(millis);
}

function nonEmpty(value: string | undefined): string | undefined {
  return value && value.trim() !== "" ? value.trim() : undefined;
}
