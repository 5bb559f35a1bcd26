/**
 * The AWS Glue Data Catalog as a source of commit pointers: one GetTable right before a run, so
 * the pointer is the catalog's current one (never cached, never taken from a message, which may
 * be old), and the place a commit through the catalog lands (UpdateTable guarded by the entry's
 * VersionId). What the entry means, and which parameters a commit sets, is the format's to say
 * (lib/formats/catalog.ts, catalog-commit.ts); this module only names the entry, carries the
 * update and turns Glue's answers and errors into one line each.
 *
 * The SDK loads with the first lookup, as the S3 SDK does (lib/store/s3-connection.ts): a run
 * that names no Glue table never pays for it.
 */
import type { GlueClient, GlueClientConfig, Table, TableInput } from "@aws-sdk/client-glue";
import type { CatalogCommitAnswer, TableCatalog } from "../formats/catalog-commit.ts";
import type { CatalogTable } from "../formats/table-format.ts";

/** A table in the Glue Data Catalog. */
export interface GlueTableName {
  database: string;
  table: string;
  /** The account whose catalog holds it; default: the caller's account. */
  catalogId?: string;
}

/** GetTable failed or answered something unusable: names the table, its database and what went wrong. */
export class GlueLookupError extends Error {
  readonly code: string;
  constructor(name: GlueTableName, code: string, problem: string, options?: { cause?: unknown }) {
    super(`${describeGlueTable(name)}: ${problem}; nothing read, written or deleted`, options);
    this.name = "GlueLookupError";
    this.code = code;
  }
}

/** UpdateTable was refused for a reason other than a concurrent commit: Glue applied nothing. */
export class GlueUpdateError extends Error {
  readonly code: string;
  constructor(name: GlueTableName, code: string, problem: string, options?: { cause?: unknown }) {
    super(`${describeGlueTable(name)}: ${problem}; the catalog applied nothing and nothing was deleted`, options);
    this.name = "GlueUpdateError";
    this.code = code;
  }
}

/** `Glue table "orders" in database "sales"` (and the catalog, when another account's). */
export function describeGlueTable(name: GlueTableName): string {
  return `Glue table ${JSON.stringify(name.table)} in database ${JSON.stringify(name.database)}${name.catalogId ? ` of catalog ${name.catalogId}` : ""}`;
}

/** Glue stores database and table names in lower case and looks them up ignoring case. */
export function normalizeGlueTableName(name: GlueTableName): GlueTableName {
  return { database: name.database.toLowerCase(), table: name.table.toLowerCase(), ...(name.catalogId ? { catalogId: name.catalogId } : {}) };
}

/**
 * `database.table` as the CLI and settings take it; the first "." separates them (Glue names
 * hold letters, digits and "_" as Athena creates them). Null when the text is not of that shape.
 */
export function parseGlueTableName(text: string): GlueTableName | null {
  const at = text.indexOf(".");
  if (at <= 0 || at === text.length - 1) return null;
  const database = text.slice(0, at).trim();
  const table = text.slice(at + 1).trim();
  if (database === "" || table === "" || /[\s/*?]/.test(database + table)) return null;
  return normalizeGlueTableName({ database, table });
}

export interface GlueCatalogOptions {
  /** Use this client (tests, or a caller's own configuration). */
  client?: GlueClient;
  /**
   * Settings for the client made otherwise; the SDK's environment applies to what is unset
   * (AWS_REGION, AWS_ENDPOINT_URL_GLUE, the credential chain).
   */
  config?: GlueClientConfig;
}

/**
 * Reads table entries from the Glue Data Catalog, and commits to one by UpdateTable guarded by the
 * entry's VersionId, as iceberg-java's GlueTableOperations and pyiceberg's GlueCatalog do.
 */
export class GlueCatalog {
  #client: GlueClient | undefined;
  readonly #config: GlueClientConfig;

  constructor(options: GlueCatalogOptions = {}) {
    this.#client = options.client;
    this.#config = options.config ?? {};
  }

  async #connect(): Promise<{ client: GlueClient; sdk: typeof import("./glue-sdk.ts") }> {
    const sdk = await import("./glue-sdk.ts");
    this.#client ??= new sdk.GlueClient({
      // Bounded like the S3 requests: a catalog that accepts connections and never answers fails the run instead of hanging it.
      requestHandler: { connectionTimeout: 10_000, requestTimeout: 30_000, throwOnRequestTimeout: true },
      ...this.#config,
    });
    return { client: this.#client, sdk };
  }

  async #getTable(name: GlueTableName): Promise<Table> {
    const { client, sdk } = await this.#connect();
    let answer;
    try {
      answer = await client.send(new sdk.GetTableCommand({ DatabaseName: name.database, Name: name.table, ...(name.catalogId ? { CatalogId: name.catalogId } : {}) }));
    } catch (error) {
      throw lookupError(name, error);
    }
    if (!answer.Table) throw new GlueLookupError(name, "EmptyAnswer", "GetTable answered without a table");
    return answer.Table;
  }

  /** The table's entry as Glue has it now (GetTable), with its VersionId. */
  async table(name: GlueTableName): Promise<CatalogTable> {
    return entryOf(name, await this.#getTable(name));
  }

  /**
   * Sets `changes` in the entry's parameters (UpdateTable of the whole entry as it is, with them
   * merged in) if and only if the entry is still `base`. Real Glue refuses an UpdateTable whose
   * VersionId is not the entry's (ConcurrentModificationException); the entry is also read right
   * before, so a moved entry is refused without relying on it (moto's Glue ignores VersionId).
   * A refusal is a conflict; no answer (a timeout, a 5xx, a dropped connection) is unknown;
   * anything else (access denied, invalid input) is thrown: Glue applied nothing.
   */
  async updateParameters(name: GlueTableName, base: CatalogTable, changes: Readonly<Record<string, string>>): Promise<CatalogCommitAnswer> {
    const current = await this.#getTable(name);
    const moved = entryMoved(base, entryOf(name, current));
    if (moved !== null) return { outcome: "conflict", reason: moved };
    const { client, sdk } = await this.#connect();
    try {
      await client.send(
        new sdk.UpdateTableCommand({
          DatabaseName: name.database,
          ...(name.catalogId ? { CatalogId: name.catalogId } : {}),
          TableInput: tableInputOf(current, changes),
          ...(base.version !== undefined ? { VersionId: base.version } : {}),
          // Glue keeps the entry before the update as a table version, as iceberg-java's commits leave it.
        }),
      );
    } catch (error) {
      const code = (error as { name?: string }).name ?? "Error";
      const message = ((error as { message?: string }).message ?? String(error)).split("\n")[0]!;
      if (code === "ConcurrentModificationException" || code === "EntityNotFoundException") {
        // The SDK retries a request that got no answer: a refusal of the retry may follow the first attempt's success.
        const now = await this.#getTable(name).catch(() => null);
        if (now && Object.entries(changes).every(([key, value]) => now.Parameters?.[key] === value)) return { outcome: "accepted" };
        return { outcome: "conflict", reason: `${code}: ${message}` };
      }
      if (answerLost(error)) return { outcome: "unknown", reason: `${code}: ${message}` };
      throw updateError(name, code, message, error);
    }
    return { outcome: "accepted" };
  }

  /** One Glue table as the catalog seam (lib/formats/catalog-commit.ts) sees it. */
  tableCatalog(name: GlueTableName): TableCatalog {
    return {
      label: describeGlueTable(name),
      load: () => this.table(name),
      updateParameters: (base, changes) => this.updateParameters(name, base, changes),
    };
  }
}

function entryOf(name: GlueTableName, table: Table): CatalogTable {
  return {
    label: describeGlueTable(name),
    ...(table.TableType ? { tableType: table.TableType } : {}),
    parameters: { ...(table.Parameters ?? {}) },
    ...(table.VersionId !== undefined ? { version: table.VersionId } : {}),
  };
}

/** Why `now` is not the entry `base` was (its VersionId, else any parameter), or null. */
function entryMoved(base: CatalogTable, now: CatalogTable): string | null {
  if (base.version !== undefined || now.version !== undefined) {
    return base.version === now.version ? null : `the entry is at version ${now.version ?? "(none)"}, not ${base.version ?? "(none)"}, the one the plan read`;
  }
  const keys = new Set([...Object.keys(base.parameters), ...Object.keys(now.parameters)]);
  const changed = [...keys].find((key) => base.parameters[key] !== now.parameters[key]);
  return changed === undefined ? null : `its ${changed} parameter changed since the plan read it`;
}

/** The entry as UpdateTable takes it (it replaces the whole entry), with `changes` in its parameters. */
function tableInputOf(table: Table, changes: Readonly<Record<string, string>>): TableInput {
  return {
    Name: table.Name!,
    ...(table.Description !== undefined ? { Description: table.Description } : {}),
    ...(table.Owner !== undefined ? { Owner: table.Owner } : {}),
    ...(table.LastAccessTime !== undefined ? { LastAccessTime: table.LastAccessTime } : {}),
    ...(table.LastAnalyzedTime !== undefined ? { LastAnalyzedTime: table.LastAnalyzedTime } : {}),
    ...(table.Retention !== undefined ? { Retention: table.Retention } : {}),
    ...(table.StorageDescriptor !== undefined ? { StorageDescriptor: table.StorageDescriptor } : {}),
    ...(table.PartitionKeys !== undefined ? { PartitionKeys: table.PartitionKeys } : {}),
    ...(table.ViewOriginalText !== undefined ? { ViewOriginalText: table.ViewOriginalText } : {}),
    ...(table.ViewExpandedText !== undefined ? { ViewExpandedText: table.ViewExpandedText } : {}),
    ...(table.TableType !== undefined ? { TableType: table.TableType } : {}),
    ...(table.TargetTable !== undefined ? { TargetTable: table.TargetTable } : {}),
    Parameters: { ...(table.Parameters ?? {}), ...changes },
  };
}

/** No answer from Glue (a timeout, a dropped connection) or a server error: the update may have applied. */
function answerLost(error: unknown): boolean {
  const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  if (status !== undefined) return status >= 500;
  return true;
}

function updateError(name: GlueTableName, code: string, message: string, error: unknown): GlueUpdateError {
  const problem =
    code === "AccessDeniedException"
      ? `access denied (${code}: ${message}): the role needs glue:UpdateTable on the catalog, the database and the table`
      : `UpdateTable failed (${code}: ${message})`;
  return new GlueUpdateError(name, code, problem, { cause: error });
}

function lookupError(name: GlueTableName, error: unknown): GlueLookupError {
  const code = (error as { name?: string }).name ?? "Error";
  const message = ((error as { message?: string }).message ?? String(error)).split("\n")[0]!;
  switch (code) {
    case "EntityNotFoundException":
      return new GlueLookupError(name, code, `not found in the Glue Data Catalog (${code}: ${message})`, { cause: error });
    case "AccessDeniedException":
      return new GlueLookupError(name, code, `access denied (${code}: ${message}): the role needs glue:GetTable on the catalog, the database and the table`, { cause: error });
    default:
      return new GlueLookupError(name, code, `GetTable failed (${code}: ${message})`, { cause: error });
  }
}
