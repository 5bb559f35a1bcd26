/**
 * One table in a catalog that speaks the Iceberg REST catalog protocol (Polaris, Lakekeeper,
 * Nessie, Unity, Gravitino, the Iceberg project's own server, S3 Tables' and Glue's Iceberg
 * endpoints), as the catalog seam (lib/formats/catalog-commit.ts) sees it: `load` is loadTable
 * (GET .../namespaces/{ns}/tables/{table}), `commitChanges` the table commit (POST to the same
 * path with the requirements and updates the format built). The format reads the metadata file
 * the answer names from storage; this module reads nothing else of the answer.
 *
 * A small typed client over fetch rather than an npm one: the one maintained REST client on npm
 * (iceberg-js) parses answers with JSON.parse, which rounds 64-bit snapshot ids, and signs no
 * request with SigV4; lakewarden needs exact ids in the commit it sends and SigV4 for S3 Tables.
 *
 * Authentication, one of: none; a bearer token; OAuth2 client credentials (a token from the
 * catalog's token endpoint, `v1/oauth/tokens` unless named, kept until shortly before it expires);
 * AWS SigV4 (S3 Tables: service "s3tables"; Glue's endpoint: "glue"), credentials from the SDK's
 * default chain unless given.
 *
 * Answers: 200 accepted (the answer names the new metadata file); 409 a conflict (a requirement
 * failed: the table moved); a 5xx, a timeout or no answer: the commit state is unknown; any other
 * answer is thrown as one line naming the table, and nothing was applied.
 */
import { createHash, createHmac, type Hash, type Hmac } from "node:crypto";
import type { CatalogCommitAnswer, TableCatalog } from "../formats/catalog-commit.ts";
import type { CatalogTable } from "../formats/table-format.ts";

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export type RestAuth =
  | { type: "none" }
  | { type: "bearer"; token: string }
  | { type: "oauth2"; clientId: string; clientSecret: string; scope?: string; tokenUri?: string }
  | { type: "sigv4"; region: string; service: string; credentials?: () => Promise<AwsCredentials> };

export interface RestTableOptions {
  /** The catalog's base URI, without `/v1` (e.g. `https://catalog.example.com/api/catalog`). */
  uri: string;
  /** The warehouse asked for in `GET v1/config` (S3 Tables: the table bucket's ARN). */
  warehouse?: string;
  namespace: readonly string[];
  table: string;
  auth?: RestAuth;
  /** Per request (default 30 s): past it the request counts as unanswered. */
  timeoutMs?: number;
  /** A fetch of the caller's (tests). */
  fetch?: typeof fetch;
}

/** A REST catalog answered something lakewarden cannot use: names the table and what it said. */
export class RestCatalogError extends Error {
  readonly status: number | null;
  constructor(label: string, status: number | null, problem: string, options?: { cause?: unknown }) {
    super(`${label}: ${problem}`, options);
    this.name = "RestCatalogError";
    this.status = status;
  }
}

/** `REST catalog table "sales.orders" at https://…`. */
export function describeRestTable(options: Pick<RestTableOptions, "uri" | "namespace" | "table" | "warehouse">): string {
  return `REST catalog table ${JSON.stringify([...options.namespace, options.table].join("."))} at ${options.uri}${options.warehouse ? ` (warehouse ${options.warehouse})` : ""}`;
}

/**
 * `namespace.table` as settings and the CLI take it; the last "." separates the table (nested
 * namespaces: `a.b.table`). Null when the text is not of that shape.
 */
export function parseRestTableName(text: string): { namespace: string[]; table: string } | null {
  const parts = text.split(".");
  if (parts.length < 2 || parts.some((part) => part.trim() === "" || /[\s/]/.test(part))) return null;
  return { namespace: parts.slice(0, -1), table: parts.at(-1)! };
}

/** S3 Tables' and Glue's Iceberg REST endpoints: `https://s3tables.<region>.amazonaws.com/iceberg`, `https://glue.<region>.amazonaws.com/iceberg`. */
const AWS_ENDPOINT = /^https:\/\/(s3tables|glue)\.([a-z0-9-]+)\.amazonaws\.com(\/|$)/;

/** The SigV4 service and region of an AWS Iceberg REST endpoint, or null for any other URI. */
export function awsIcebergEndpoint(uri: string): { service: "s3tables" | "glue"; region: string } | null {
  const match = AWS_ENDPOINT.exec(uri);
  return match ? { service: match[1] as "s3tables" | "glue", region: match[2]! } : null;
}

const DEFAULT_TIMEOUT_MS = 30_000;
/** A token is renewed this long before the catalog said it expires. */
const TOKEN_MARGIN_MS = 60_000;

class NoAnswer extends Error {}

export class RestCatalogTable implements TableCatalog {
  readonly label: string;
  readonly #options: RestTableOptions;
  readonly #fetch: typeof fetch;
  #prefix: Promise<string> | undefined;
  #token: { value: string; until: number } | undefined;

  constructor(options: RestTableOptions) {
    this.#options = options;
    this.#fetch = options.fetch ?? fetch;
    this.label = describeRestTable(options);
  }

  /**
   * The table as the catalog serves it now. A REST catalog serves Iceberg tables only, so the
   * entry reads as one (`table_type` ICEBERG) with the answer's `metadata-location` as its
   * pointer; its version is that location (the commit's requirements guard it, not a number).
   */
  async load(): Promise<CatalogTable> {
    const answer = await this.#send("GET", await this.#tablePath());
    if (answer.status === 404) throw new RestCatalogError(this.label, 404, `not found (${errorText(answer.body)}); nothing read, written or deleted`);
    if (answer.status !== 200)
      throw new RestCatalogError(this.label, answer.status, `loadTable answered ${answer.status} (${errorText(answer.body)}); nothing read, written or deleted`);
    const location = metadataLocationOf(answer.body);
    if (location === null) throw new RestCatalogError(this.label, 200, "loadTable answered without a metadata-location; nothing read, written or deleted");
    return { label: this.label, parameters: { table_type: "ICEBERG", metadata_location: location }, version: location };
  }

  /**
   * Why another maintenance service looks after this table, or null. A table reached through S3
   * Tables (requests signed for "s3tables") is left alone while S3 Tables' own snapshot
   * management is enabled (s3tables.ts); other catalogs say nothing of the kind.
   */
  async maintainedElsewhere(): Promise<string | null> {
    const auth = this.#options.auth;
    if (auth?.type !== "sigv4" || auth.service !== "s3tables") return null;
    const { isTableBucketArn, s3TablesSnapshotManagement } = await import("./s3tables.ts");
    const warehouse = this.#options.warehouse;
    if (warehouse === undefined || !isTableBucketArn(warehouse)) {
      throw new RestCatalogError(
        this.label,
        null,
        `S3 Tables is asked for a table bucket by its ARN (arn:aws:s3tables:<region>:<account>:bucket/<name>) as the warehouse, not ${JSON.stringify(warehouse ?? "(none)")}; nothing read, written or deleted`,
      );
    }
    return s3TablesSnapshotManagement(
      { tableBucketArn: warehouse, namespace: this.#options.namespace.join("."), table: this.#options.table },
      { region: auth.region, ...(auth.credentials ? { credentials: auth.credentials } : {}) },
    );
  }

  /** Sends the table commit (`body`: the CommitTableRequest's requirements and updates as JSON text). */
  async commitChanges(_base: CatalogTable, body: string): Promise<CatalogCommitAnswer> {
    let answer;
    try {
      answer = await this.#send("POST", await this.#tablePath(), body);
    } catch (error) {
      if (error instanceof NoAnswer) return { outcome: "unknown", reason: error.message };
      throw error;
    }
    if (answer.status === 200) {
      const pointer = metadataLocationOf(answer.body);
      return pointer === null ? { outcome: "unknown", reason: "the commit answered 200 without a metadata-location" } : { outcome: "accepted", pointer };
    }
    if (answer.status === 409) return { outcome: "conflict", reason: `409: ${errorText(answer.body)}` };
    if (answer.status >= 500) return { outcome: "unknown", reason: `${answer.status}: ${errorText(answer.body)}` };
    throw new RestCatalogError(
      this.label,
      answer.status,
      `the commit was refused (${answer.status}: ${errorText(answer.body)}); the catalog applied nothing and nothing was deleted`,
    );
  }

  async #tablePath(): Promise<string> {
    this.#prefix ??= this.#configPrefix();
    this.#prefix.catch(() => (this.#prefix = undefined));
    const prefix = await this.#prefix;
    // Namespace levels are joined by the unit separator (0x1F), as the protocol says.
    const namespace = encodeURIComponent(this.#options.namespace.join("\u001f"));
    return `v1/${prefix ? `${encodeURIComponent(prefix).replaceAll("%2F", "/")}/` : ""}namespaces/${namespace}/tables/${encodeURIComponent(this.#options.table)}`;
  }

  /** `GET v1/config`: the prefix the catalog puts before every table path (overrides win over defaults). */
  async #configPrefix(): Promise<string> {
    const query = this.#options.warehouse ? `?warehouse=${encodeURIComponent(this.#options.warehouse)}` : "";
    const answer = await this.#send("GET", `v1/config${query}`);
    if (answer.status !== 200)
      throw new RestCatalogError(this.label, answer.status, `GET v1/config answered ${answer.status} (${errorText(answer.body)}); nothing read, written or deleted`);
    const config = parseObject(answer.body);
    const pick = (section: unknown): string | undefined => {
      const value = (section as Record<string, unknown> | undefined)?.prefix;
      return typeof value === "string" ? value : undefined;
    };
    return pick(config?.overrides) ?? pick(config?.defaults) ?? "";
  }

  async #send(method: "GET" | "POST", path: string, body?: string): Promise<{ status: number; body: string }> {
    const url = new URL(path, `${this.#options.uri.replace(/\/+$/, "")}/`);
    const headers: Record<string, string> = { accept: "application/json", ...(body !== undefined ? { "content-type": "application/json" } : {}) };
    Object.assign(headers, await this.#authHeaders(method, url, headers, body));
    let response: Response;
    try {
      response = await this.#fetch(url, { method, headers, ...(body !== undefined ? { body } : {}), signal: AbortSignal.timeout(this.#options.timeoutMs ?? DEFAULT_TIMEOUT_MS) });
      return { status: response.status, body: await response.text() };
    } catch (error) {
      const why =
        (error as Error).name === "TimeoutError"
          ? `no answer within ${this.#options.timeoutMs ?? DEFAULT_TIMEOUT_MS} ms`
          : `no answer (${(error as Error).message}${(error as { cause?: Error }).cause ? `: ${(error as { cause?: Error }).cause!.message}` : ""})`;
      if (method === "POST") throw new NoAnswer(why);
      throw new RestCatalogError(this.label, null, `${method} ${url.pathname}: ${why}; nothing read, written or deleted`, { cause: error });
    }
  }

  async #authHeaders(method: string, url: URL, headers: Record<string, string>, body: string | undefined): Promise<Record<string, string>> {
    const auth = this.#options.auth ?? { type: "none" };
    switch (auth.type) {
      case "none":
        return {};
      case "bearer":
        return { authorization: `Bearer ${auth.token}` };
      case "oauth2":
        return { authorization: `Bearer ${await this.#oauthToken(auth)}` };
      case "sigv4":
        return signV4(auth, method, url, headers, body);
    }
  }

  /** OAuth2 client credentials (RFC 6749 §4.4) at the catalog's token endpoint. */
  async #oauthToken(auth: Extract<RestAuth, { type: "oauth2" }>): Promise<string> {
    if (this.#token && Date.now() < this.#token.until) return this.#token.value;
    const url = new URL(auth.tokenUri ?? "v1/oauth/tokens", `${this.#options.uri.replace(/\/+$/, "")}/`);
    const form = new URLSearchParams({ grant_type: "client_credentials", client_id: auth.clientId, client_secret: auth.clientSecret, scope: auth.scope ?? "catalog" });
    let response: Response;
    try {
      response = await this.#fetch(url, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
        body: form.toString(),
        signal: AbortSignal.timeout(this.#options.timeoutMs ?? DEFAULT_TIMEOUT_MS),
      });
    } catch (error) {
      throw new RestCatalogError(this.label, null, `the token endpoint ${url.href} did not answer (${(error as Error).message}); nothing read, written or deleted`, {
        cause: error,
      });
    }
    const text = await response.text();
    const answer = parseObject(text);
    const token = answer?.access_token;
    if (response.status !== 200 || typeof token !== "string") {
      throw new RestCatalogError(
        this.label,
        response.status,
        `the token endpoint ${url.href} gave no access token (${response.status}: ${errorText(text)}): check the client id and secret; nothing read, written or deleted`,
      );
    }
    const expiresIn = typeof answer?.expires_in === "number" ? answer.expires_in * 1000 : 3600_000;
    this.#token = { value: token, until: Date.now() + Math.max(0, expiresIn - TOKEN_MARGIN_MS) };
    return token;
  }
}

function parseObject(text: string): Record<string, unknown> | null {
  try {
    const value = JSON.parse(text) as unknown;
    return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

function metadataLocationOf(text: string): string | null {
  const location = parseObject(text)?.["metadata-location"];
  return typeof location === "string" && location !== "" ? location : null;
}

/** The protocol's ErrorModel (`{"error": {"message", "type", "code"}}`) in a few words, else the start of the body. */
function errorText(text: string): string {
  const error = parseObject(text)?.error as { message?: unknown; type?: unknown } | undefined;
  if (error && typeof error.message === "string") return `${typeof error.type === "string" ? `${error.type}: ` : ""}${error.message.split("\n")[0]}`;
  return text.trim().split("\n")[0]!.slice(0, 200) || "no body";
}

/** Node's SHA-256 in the shape @smithy/signature-v4 asks for. */
class Sha256 {
  readonly #hash: Hash | Hmac;
  constructor(secret?: unknown) {
    this.#hash = secret === undefined ? createHash("sha256") : createHmac("sha256", typeof secret === "string" ? secret : Buffer.from(secret as Uint8Array));
  }
  update(data: unknown): void {
    this.#hash.update(typeof data === "string" ? data : Buffer.from(data as Uint8Array));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.#hash.digest());
  }
  reset(): void {}
}

async function signV4(
  auth: Extract<RestAuth, { type: "sigv4" }>,
  method: string,
  url: URL,
  headers: Record<string, string>,
  body: string | undefined,
): Promise<Record<string, string>> {
  const [{ SignatureV4 }, credentials] = await Promise.all([
    import("@smithy/signature-v4"),
    auth.credentials ? auth.credentials() : import("@aws-sdk/credential-provider-node").then(({ defaultProvider }) => defaultProvider()()),
  ]);
  const signer = new SignatureV4({ service: auth.service, region: auth.region, credentials, sha256: Sha256 as never, uriEscapePath: true });
  const query: Record<string, string> = Object.fromEntries(url.searchParams);
  const signed = await signer.sign({
    method,
    protocol: url.protocol,
    hostname: url.hostname,
    ...(url.port ? { port: Number(url.port) } : {}),
    path: url.pathname,
    query,
    headers: { ...headers, host: url.host },
    ...(body !== undefined ? { body } : {}),
  });
  const { host: _host, ...rest } = signed.headers;
  return rest;
}
