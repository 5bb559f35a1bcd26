/**
 * The environment contract between the CDK construct (which sets these variables) and the
 * handlers (which read them). One module so the two sides cannot drift apart. Retention
 * defaults use lib/maintenance/policy.ts's ENVIRONMENT_KEYS, shared with the CLI.
 */
export const ENV = {
  /** JSON array of table URIs: `["s3://bucket/lake/orders.lance"]`. */
  tables: "LAKEWARDEN_TABLES",
  /** JSON array of URIs under which tables are discovered: `["s3://bucket/lake/"]`. */
  tablePrefixes: "LAKEWARDEN_TABLE_PREFIXES",
  /**
   * JSON array of the table URIs under the prefixes that may be changed (IAM grants writes and
   * deletes on these roots only); unset: every table under the prefixes.
   */
  tableRoots: "LAKEWARDEN_TABLE_ROOTS",
  /** How many folder levels under a prefix discovery descends. */
  discoveryDepth: "LAKEWARDEN_DISCOVERY_DEPTH",
  /** Queue the scheduler sends one message per table to. */
  cleanupQueueUrl: "LAKEWARDEN_CLEANUP_QUEUE_URL",
  /** Head codec (`arrow` | `json`) and inline budget in bytes; when set, they override the tables' own config. */
  headCodec: "LAKEWARDEN_HEAD_CODEC",
  headInlineBytes: "LAKEWARDEN_HEAD_INLINE_BYTES",
  /** cleanup-table: keys deleted per second at most (unset: no limit; SlowDown always slows deletes). */
  maxDeleteRate: "LAKEWARDEN_MAX_DELETE_RATE",
  /** cleanup-table: continuations one scheduled request may chain at most (default 20). */
  maxContinuations: "LAKEWARDEN_MAX_CONTINUATIONS",
  /**
   * cleanup-table: objects of new work a run does before its time budget may stop it (a version
   * file read, an object listed, a key deleted each count one); unset: the library's default (1).
   */
  minWorkPerRun: "LAKEWARDEN_MIN_WORK_PER_RUN",
  /**
   * on-commit and cleanup-table: JSON object from table URI to its AWS Glue Data Catalog entry,
   * `{"s3://bucket/lake/orders": {"database": "sales", "table": "orders"}}` (optional
   * `catalogId`): the table's current commit pointer is read there (GetTable) before its head is
   * written or a run starts.
   */
  glueTables: "LAKEWARDEN_GLUE_TABLES",
  /**
   * on-commit and cleanup-table: JSON object from table URI to its Iceberg REST catalog table,
   * `{"s3://bucket/lake/orders": {"uri": "https://catalog.example.com/api/catalog", "warehouse": "lake",
   * "namespace": ["sales"], "table": "orders", "credentialsSecret": "arn:aws:secretsmanager:..."}}`:
   * the table's pointer is loaded there, cleanup commits its expiry there, and the credentials are
   * read from the named secret at run time (the variable names the secret, never holds its value).
   */
  catalogTables: "LAKEWARDEN_CATALOG_TABLES",
} as const;

/** Continuations one scheduled request may chain (each a Lambda lifetime, so about 5 hours at 15 minutes). */
export const DEFAULT_MAX_CONTINUATIONS = 20;

/** A FIFO queue's URL ends in `.fifo`: its messages need a group and a deduplication id. */
export function isFifoQueueUrl(url: string): boolean {
  return url.endsWith(".fifo");
}

export type Environment = Readonly<Record<string, string | undefined>>;

/** A variable that is missing or malformed; names the variable and the problem. */
export class ConfigurationError extends Error {
  readonly variable: string;
  constructor(variable: string, problem: string) {
    super(`environment variable ${variable}: ${problem}`);
    this.name = "ConfigurationError";
    this.variable = variable;
  }
}

export function requireString(env: Environment, variable: string): string {
  const value = env[variable];
  if (value === undefined || value === "") throw new ConfigurationError(variable, "is not set");
  return value;
}

export function optionalString(env: Environment, variable: string): string | undefined {
  const value = env[variable];
  return value === undefined || value === "" ? undefined : value;
}

export function optionalPositiveInteger(env: Environment, variable: string): number | undefined {
  return optionalInteger(env, variable, 1);
}

export function optionalInteger(env: Environment, variable: string, minimum: number): number | undefined {
  const text = optionalString(env, variable);
  if (text === undefined) return undefined;
  const value = /^\d+$/.test(text.trim()) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < minimum) throw new ConfigurationError(variable, `"${text}" is not a whole number ≥ ${minimum}`);
  return value;
}

/** A JSON array of strings; absent means empty. */
export function uriList(env: Environment, variable: string): string[] {
  const text = optionalString(env, variable);
  if (text === undefined) return [];
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ConfigurationError(variable, "is not valid JSON");
  }
  if (!Array.isArray(value) || !value.every((item) => typeof item === "string")) {
    throw new ConfigurationError(variable, "is not a JSON array of strings");
  }
  return value;
}
