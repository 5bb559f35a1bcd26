/**
 * A REST catalog's credentials kept in an AWS Secrets Manager secret, read when a run needs them
 * (never put in an environment variable in clear, never cached past the call): the deployment
 * names the secret, the role may read exactly that one. The secret's value is JSON, one of
 *   {"clientId": "...", "clientSecret": "...", "scope"?: "...", "tokenUri"?: "..."}  OAuth2 client credentials
 *   {"token": "..."}                                                             a bearer token
 * Errors name the secret and what is wrong with it, never a value from it.
 *
 * The SDK loads with the first read (secrets-manager-sdk.ts): a deployment that names no secret
 * never loads it.
 */
import type { SecretsManagerClient, SecretsManagerClientConfig } from "@aws-sdk/client-secrets-manager";
import type { RestAuth } from "./iceberg-rest.ts";

/** The secret could not be read, or its value is not credentials lakewarden can use. */
export class CatalogSecretError extends Error {
  readonly code: string;
  constructor(secretId: string, code: string, problem: string, options?: { cause?: unknown }) {
    super(`catalog credentials secret ${secretId}: ${problem}; nothing read, written or deleted`, options);
    this.name = "CatalogSecretError";
    this.code = code;
  }
}

/** The REST catalog authentication a secret's value (JSON text) describes. */
export function restAuthFromSecret(secretId: string, text: string): RestAuth {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new CatalogSecretError(secretId, "NotJson", 'its value is not JSON (expected {"clientId": ..., "clientSecret": ...} or {"token": ...})');
  }
  const fields = typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  const field = (key: string): string | undefined => (typeof fields[key] === "string" && fields[key] !== "" ? (fields[key] as string) : undefined);
  const clientId = field("clientId");
  const clientSecret = field("clientSecret");
  const token = field("token");
  if (token !== undefined && (clientId !== undefined || clientSecret !== undefined)) {
    throw new CatalogSecretError(secretId, "Ambiguous", "it holds both a token and client credentials: keep one way to authenticate");
  }
  if (token !== undefined) return { type: "bearer", token };
  if (clientId !== undefined && clientSecret !== undefined) {
    const scope = field("scope");
    const tokenUri = field("tokenUri");
    return { type: "oauth2", clientId, clientSecret, ...(scope ? { scope } : {}), ...(tokenUri ? { tokenUri } : {}) };
  }
  const keys = Object.keys(fields).sort().join(", ") || "none";
  throw new CatalogSecretError(secretId, "NoCredentials", `its value has no usable credentials (keys: ${keys}; expected clientId and clientSecret, or token)`);
}

export interface CatalogSecretOptions {
  client?: SecretsManagerClient;
  /** For the client made otherwise; the SDK's environment applies to what is unset (AWS_REGION, AWS_ENDPOINT_URL_SECRETS_MANAGER). */
  config?: SecretsManagerClientConfig;
}

/** Reads the secret now (GetSecretValue, its current version) and returns the authentication it holds. */
export async function readCatalogSecret(secretId: string, options: CatalogSecretOptions = {}): Promise<RestAuth> {
  const sdk = await import("./secrets-manager-sdk.ts");
  const client =
    options.client ?? new sdk.SecretsManagerClient({ requestHandler: { connectionTimeout: 10_000, requestTimeout: 30_000, throwOnRequestTimeout: true }, ...options.config });
  let answer;
  try {
    answer = await client.send(new sdk.GetSecretValueCommand({ SecretId: secretId }));
  } catch (error) {
    const code = (error as { name?: string }).name ?? "Error";
    const message = ((error as { message?: string }).message ?? String(error)).split("\n")[0]!;
    const problem =
      code === "AccessDeniedException"
        ? `access denied (${code}: ${message}): the role needs secretsmanager:GetSecretValue on this secret`
        : code === "ResourceNotFoundException"
          ? `not found (${code}: ${message})`
          : `GetSecretValue failed (${code}: ${message})`;
    throw new CatalogSecretError(secretId, code, problem, { cause: error });
  }
  const text = answer.SecretString ?? (answer.SecretBinary ? new TextDecoder().decode(answer.SecretBinary) : undefined);
  if (text === undefined) throw new CatalogSecretError(secretId, "Empty", "it has no value");
  return restAuthFromSecret(secretId, text);
}
