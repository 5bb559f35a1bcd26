/**
 * The catalog a table command names: `--glue-table database.table` (AWS Glue), or `--catalog <uri>
 * --catalog-table namespace.table [--warehouse ...]` (an Iceberg REST catalog: Polaris, Lakekeeper,
 * Nessie, S3 Tables' endpoint). Credentials never come from the command line, where they would
 * land in shell history and process lists: Glue takes the AWS SDK's chain; a REST catalog takes,
 * from the environment, one of
 *   - LAKEWARDEN_CATALOG_CLIENT_ID and LAKEWARDEN_CATALOG_CLIENT_SECRET: OAuth2 client credentials
 *     (LAKEWARDEN_CATALOG_SCOPE, LAKEWARDEN_CATALOG_TOKEN_URI when the catalog needs them);
 *   - LAKEWARDEN_CATALOG_TOKEN: a bearer token;
 *   - LAKEWARDEN_CATALOG_SIGV4_SERVICE (s3tables, glue): AWS SigV4 with the SDK's credential chain,
 *     region LAKEWARDEN_CATALOG_SIGV4_REGION or AWS_REGION; an S3 Tables or Glue Iceberg endpoint
 *     (`https://s3tables.<region>.amazonaws.com/iceberg`) is signed without being told. Through S3
 *     Tables, cleanup first asks whether S3 Tables' own snapshot management is on (lib/catalog/s3tables.ts).
 */
import type { Command } from "commander";
import { GlueCatalog, parseGlueTableName } from "../catalog/glue.ts";
import { awsIcebergEndpoint, parseRestTableName, RestCatalogTable, type RestAuth } from "../catalog/iceberg-rest.ts";
import type { TableCatalog } from "../formats/catalog-commit.ts";
import { UsageError } from "./errors.ts";

export interface CatalogFlags {
  /** `--glue-table`: the AWS Glue Data Catalog entry whose pointer names the current metadata. */
  glueTable?: string;
  /** `--catalog`: an Iceberg REST catalog's base URI. */
  catalog?: string;
  /** `--catalog-table`: the table in that catalog, `namespace.table`. */
  catalogTable?: string;
  /** `--warehouse`: the warehouse the REST catalog is asked for (S3 Tables: the table bucket's ARN). */
  warehouse?: string;
}

/** Adds the flags naming a table's catalog (commands that read or commit through the catalog's pointer). */
export function withCatalogOptions(command: Command): Command {
  return command
    .option("--glue-table <database.table>", "take the current metadata from this AWS Glue Data Catalog entry")
    .option("--catalog <uri>", "the Iceberg REST catalog that owns the table (credentials: environment)")
    .option("--catalog-table <namespace.table>", "with --catalog: the table's name in the catalog")
    .option("--warehouse <name>", "with --catalog: the warehouse to ask the catalog for");
}

/** Whether the flags name a catalog at all. */
export function namesCatalog(flags: CatalogFlags): boolean {
  return flags.glueTable !== undefined || flags.catalog !== undefined || flags.catalogTable !== undefined || flags.warehouse !== undefined;
}

/** How messages name the flag that named the catalog. */
export function catalogFlagText(flags: CatalogFlags): string {
  return flags.glueTable !== undefined ? `the Glue entry ${flags.glueTable}` : `the REST catalog table ${flags.catalogTable ?? ""}`;
}

/** The catalog the flags name, or null; usage errors for a half-named or doubly-named one. */
export function catalogFromFlags(flags: CatalogFlags, env: NodeJS.ProcessEnv = process.env): TableCatalog | null {
  const rest = flags.catalog !== undefined || flags.catalogTable !== undefined || flags.warehouse !== undefined;
  if (flags.glueTable !== undefined) {
    if (rest) throw new UsageError("--glue-table and --catalog both name the table's catalog: give one");
    const name = parseGlueTableName(flags.glueTable);
    if (!name) throw new UsageError(`--glue-table ${JSON.stringify(flags.glueTable)}: expected database.table`);
    return new GlueCatalog().tableCatalog(name);
  }
  if (!rest) return null;
  if (flags.catalog === undefined) throw new UsageError(`${flags.catalogTable !== undefined ? "--catalog-table" : "--warehouse"} needs --catalog <uri>`);
  if (flags.catalogTable === undefined) throw new UsageError("--catalog needs --catalog-table <namespace.table>");
  if (!/^https?:\/\/[^/]/.test(flags.catalog)) throw new UsageError(`--catalog ${JSON.stringify(flags.catalog)}: expected an http:// or https:// URI`);
  const name = parseRestTableName(flags.catalogTable);
  if (!name) throw new UsageError(`--catalog-table ${JSON.stringify(flags.catalogTable)}: expected namespace.table`);
  return new RestCatalogTable({
    uri: flags.catalog,
    ...(flags.warehouse !== undefined ? { warehouse: flags.warehouse } : {}),
    ...name,
    auth: restAuthFromEnvironment(flags.catalog, env),
  });
}

/** The REST catalog's credentials from the environment (see the module comment). */
export function restAuthFromEnvironment(uri: string, env: NodeJS.ProcessEnv): RestAuth {
  const set = (name: string) => (env[name] !== undefined && env[name] !== "" ? env[name] : undefined);
  const clientId = set("LAKEWARDEN_CATALOG_CLIENT_ID");
  const clientSecret = set("LAKEWARDEN_CATALOG_CLIENT_SECRET");
  const token = set("LAKEWARDEN_CATALOG_TOKEN");
  const aws = awsIcebergEndpoint(uri);
  const service = set("LAKEWARDEN_CATALOG_SIGV4_SERVICE") ?? aws?.service;
  const given = [clientId !== undefined || clientSecret !== undefined ? "LAKEWARDEN_CATALOG_CLIENT_ID/SECRET" : null, token ? "LAKEWARDEN_CATALOG_TOKEN" : null].filter(
    (x) => x !== null,
  );
  if (given.length > 1) throw new UsageError(`${given.join(" and ")} are both set: set one way to authenticate to the catalog`);
  if (clientId !== undefined || clientSecret !== undefined) {
    if (clientId === undefined || clientSecret === undefined) throw new UsageError("LAKEWARDEN_CATALOG_CLIENT_ID and LAKEWARDEN_CATALOG_CLIENT_SECRET go together: set both");
    const scope = set("LAKEWARDEN_CATALOG_SCOPE");
    const tokenUri = set("LAKEWARDEN_CATALOG_TOKEN_URI");
    return { type: "oauth2", clientId, clientSecret, ...(scope ? { scope } : {}), ...(tokenUri ? { tokenUri } : {}) };
  }
  if (token) return { type: "bearer", token };
  if (service !== undefined) {
    const region = set("LAKEWARDEN_CATALOG_SIGV4_REGION") ?? aws?.region ?? set("AWS_REGION") ?? set("AWS_DEFAULT_REGION");
    if (region === undefined) throw new UsageError("SigV4 for the catalog needs a region: set LAKEWARDEN_CATALOG_SIGV4_REGION or AWS_REGION");
    return { type: "sigv4", service, region };
  }
  return { type: "none" };
}
