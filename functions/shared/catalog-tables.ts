/**
 * The tables whose commit pointer a catalog owns, as the functions read them from their
 * environment: LAKEWARDEN_GLUE_TABLES (AWS Glue) and LAKEWARDEN_CATALOG_TABLES (Iceberg REST
 * catalogs), both by table URI. `catalogOf` gives a table's catalog for one run or one head write.
 *
 * A REST catalog's credentials are read from the Secrets Manager secret its entry names when the
 * catalog is asked for (each run, each batch of commits: a rotated secret takes effect at once);
 * the environment holds the secret's id, never its value. An S3 Tables or Glue Iceberg endpoint
 * is signed with the function's role (SigV4) and names no secret.
 *
 * The catalog clients and SDKs load on first use (dynamic imports): a deployment with no catalog
 * table never loads them.
 */
import type { TableCatalog } from "../../lib/formats/catalog-commit.ts";
import type { RestAuth } from "../../lib/catalog/iceberg-rest.ts";
import type { GlueCatalog, GlueTableName } from "../../lib/catalog/glue.ts";
import { ConfigurationError, ENV, optionalString, type Environment } from "./environment.ts";
import { readGlueTables } from "./glue-tables.ts";

/** One table in an Iceberg REST catalog, as LAKEWARDEN_CATALOG_TABLES names it. */
export interface RestCatalogTableEntry {
  /** The catalog's base URI, without `/v1`. */
  uri: string;
  warehouse?: string;
  namespace: string[];
  table: string;
  /** The Secrets Manager secret (ARN or name) holding the catalog's credentials; none: SigV4 for AWS endpoints, else no authentication. */
  credentialsSecret?: string;
}

export interface TableCatalogs {
  /** How many tables a catalog owns (0: the functions never load a catalog client). */
  readonly size: number;
  /** The catalog that owns this table's pointer, or null when none does. */
  catalogOf(tableUri: string): Promise<TableCatalog | null>;
}

export function readRestCatalogTables(env: Environment): Map<string, RestCatalogTableEntry> {
  const text = optionalString(env, ENV.catalogTables);
  const tables = new Map<string, RestCatalogTableEntry>();
  if (text === undefined) return tables;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ConfigurationError(ENV.catalogTables, "is not valid JSON");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new ConfigurationError(ENV.catalogTables, 'is not a JSON object ({"s3://bucket/table": {"uri": "...", "namespace": ["..."], "table": "..."}} expected)');
  }
  for (const [uri, entry] of Object.entries(value)) {
    const { uri: catalogUri, warehouse, namespace, table, credentialsSecret } = (entry ?? {}) as Record<string, unknown>;
    const optional = (field: unknown) => field === undefined || (typeof field === "string" && field !== "");
    if (
      typeof catalogUri !== "string" ||
      !/^https?:\/\/[^/]/.test(catalogUri) ||
      !Array.isArray(namespace) ||
      namespace.length === 0 ||
      !namespace.every((level) => typeof level === "string" && level !== "") ||
      typeof table !== "string" ||
      table === "" ||
      !optional(warehouse) ||
      !optional(credentialsSecret)
    ) {
      throw new ConfigurationError(
        ENV.catalogTables,
        `${uri}: expected {"uri": "https://...", "namespace": ["..."], "table": "..."} with an optional "warehouse" and "credentialsSecret"`,
      );
    }
    tables.set(uri.replace(/\/+$/, ""), {
      uri: catalogUri,
      namespace: namespace as string[],
      table,
      ...(warehouse !== undefined ? { warehouse: warehouse as string } : {}),
      ...(credentialsSecret !== undefined ? { credentialsSecret: credentialsSecret as string } : {}),
    });
  }
  return tables;
}

export function readTableCatalogs(env: Environment): TableCatalogs {
  const glue = readGlueTables(env);
  const rest = readRestCatalogTables(env);
  const both = [...rest.keys()].find((uri) => glue.has(uri));
  if (both !== undefined) throw new ConfigurationError(`${ENV.glueTables} / ${ENV.catalogTables}`, `${both} is named in both: one catalog owns a table's pointer`);
  let glueCatalog: Promise<GlueCatalog> | undefined;
  return {
    size: glue.size + rest.size,
    async catalogOf(tableUri) {
      const key = tableUri.replace(/\/+$/, "");
      const glueName: GlueTableName | undefined = glue.get(key);
      if (glueName) {
        // One client for the function's lifetime; it follows the environment (AWS_REGION, the role's credentials).
        glueCatalog ??= import("../../lib/catalog/glue.ts").then(({ GlueCatalog }) => new GlueCatalog());
        return (await glueCatalog).tableCatalog(glueName);
      }
      const entry = rest.get(key);
      if (!entry) return null;
      const { RestCatalogTable } = await import("../../lib/catalog/iceberg-rest.ts");
      return new RestCatalogTable({
        uri: entry.uri,
        ...(entry.warehouse !== undefined ? { warehouse: entry.warehouse } : {}),
        namespace: entry.namespace,
        table: entry.table,
        auth: await restAuthOf(entry),
      });
    },
  };
}

/** The secret's credentials (read now), SigV4 for an AWS endpoint, else none. */
async function restAuthOf(entry: RestCatalogTableEntry): Promise<RestAuth> {
  if (entry.credentialsSecret !== undefined) {
    const { readCatalogSecret } = await import("../../lib/catalog/catalog-secret.ts");
    return readCatalogSecret(entry.credentialsSecret);
  }
  const { awsIcebergEndpoint } = await import("../../lib/catalog/iceberg-rest.ts");
  const aws = awsIcebergEndpoint(entry.uri);
  if (aws) return { type: "sigv4", service: aws.service, region: aws.region };
  return { type: "none" };
}
