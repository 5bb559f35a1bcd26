/**
 * The AWS Glue Data Catalog as a source of commit pointers: one GetTable right before a run, so
 * the pointer is the catalog's current one (never cached, never taken from a message, which may
 * be old). What the entry means is the format's to say (lib/formats/catalog.ts); this module only
 * names the entry and turns Glue's answers and errors into one line each.
 *
 * The SDK loads with the first lookup, as the S3 SDK does (lib/store/s3-connection.ts): a run
 * that names no Glue table never pays for it.
 */
import type { GlueClient, GlueClientConfig } from "@aws-sdk/client-glue";
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

/** Reads table entries from the Glue Data Catalog. */
export class GlueCatalog {
  #client: GlueClient | undefined;
  readonly #config: GlueClientConfig;

  constructor(options: GlueCatalogOptions = {}) {
    this.#client = options.client;
    this.#config = options.config ?? {};
  }

  /** The table's entry as Glue has it now (GetTable). */
  async table(name: GlueTableName): Promise<CatalogTable> {
    const { GetTableCommand, GlueClient } = await import("./glue-sdk.ts");
    this.#client ??= new GlueClient({
      // Bounded like the S3 requests: a catalog that accepts connections and never answers fails the run instead of hanging it.
      requestHandler: { connectionTimeout: 10_000, requestTimeout: 30_000, throwOnRequestTimeout: true },
      ...this.#config,
    });
    let answer;
    try {
      answer = await this.#client.send(new GetTableCommand({ DatabaseName: name.database, Name: name.table, ...(name.catalogId ? { CatalogId: name.catalogId } : {}) }));
    } catch (error) {
      throw lookupError(name, error);
    }
    const table = answer.Table;
    if (!table) throw new GlueLookupError(name, "EmptyAnswer", "GetTable answered without a table");
    return {
      label: describeGlueTable(name),
      ...(table.TableType ? { tableType: table.TableType } : {}),
      parameters: { ...(table.Parameters ?? {}) },
    };
  }
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
