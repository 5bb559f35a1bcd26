/**
 * The deployment's tables whose commit pointer an Iceberg REST catalog owns (`restCatalogTables`):
 * validated here, granted in table-access.ts, handed to the functions as LAKEWARDEN_CATALOG_TABLES.
 * The catalog's credentials stay in a Secrets Manager secret the setting names; the functions read
 * it at run time, and only that secret.
 */
import { awsIcebergEndpoint, parseRestTableName } from "../lib/catalog/iceberg-rest.ts";

/** One table in an Iceberg REST catalog, as the settings take it. */
export interface RestCatalogTableInput {
  /** The catalog's base URI, https, without `/v1`: `https://catalog.example.com/api/catalog`. */
  uri: string;
  /** The warehouse the catalog is asked for (`GET v1/config?warehouse=`), when it needs one. */
  warehouse?: string;
  /** The table in the catalog: `namespace.table` (nested namespaces: `a.b.table`), or the bare name with `namespace`. */
  table: string;
  /** The namespace's levels, when `table` is the bare name (the resolved shape, which resolves to itself). */
  namespace?: readonly string[];
  /**
   * The Secrets Manager secret (its full ARN, or its name) whose value holds the catalog's
   * credentials as JSON: `{"clientId": "...", "clientSecret": "..."}` (OAuth2 client credentials,
   * optional "scope" and "tokenUri") or `{"token": "..."}`. Unset: the catalog is asked without credentials.
   */
  credentialsSecret?: string;
}

/** A validated REST catalog table: the namespace split into its levels. */
export interface RestCatalogTableSetting {
  uri: string;
  warehouse?: string;
  namespace: string[];
  table: string;
  credentialsSecret?: string;
}

const SECRET_ARN = /^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:[A-Za-z0-9/_+=.@-]+$/;
const SECRET_NAME = /^[A-Za-z0-9/_+=.@-]{1,512}$/;

/** Whether the secret is named by its ARN (granted as given) rather than by its name. */
export function isSecretArn(secret: string): boolean {
  return SECRET_ARN.test(secret);
}

/** `namespace.table`, or a bare table name with its namespace's levels (settings already resolved, as the CDK app passes them on). */
function restTableName(table: unknown, namespace: unknown): { namespace: string[]; table: string } | string {
  if (namespace === undefined) {
    const name = typeof table === "string" ? parseRestTableName(table) : null;
    return name ?? `table ${JSON.stringify(table)} is not namespace.table`;
  }
  const levels = Array.isArray(namespace) ? (namespace as unknown[]) : [];
  if (levels.length === 0 || !levels.every((level) => typeof level === "string" && level !== "" && !/[\s/.]/.test(level))) {
    return `namespace ${JSON.stringify(namespace)} is not a list of namespace levels`;
  }
  if (typeof table !== "string" || table === "" || /[\s/.]/.test(table)) return `table ${JSON.stringify(table)} is not a table name (with namespace given, the bare name)`;
  return { namespace: levels as string[], table };
}

/** The validated entry, or the problem with it (the caller names the setting and the table). */
export function resolveRestCatalogTable(entry: unknown): RestCatalogTableSetting | string {
  if (typeof entry !== "object" || entry === null || Array.isArray(entry)) {
    return `${JSON.stringify(entry)} is not a REST catalog table; write {"uri": "https://...", "table": "namespace.table", "credentialsSecret": "..."}`;
  }
  const { uri, warehouse, table, namespace, credentialsSecret, ...rest } = entry as Record<string, unknown>;
  const unknown = Object.keys(rest);
  if (unknown.length > 0) return `unknown key${unknown.length > 1 ? "s" : ""} ${unknown.join(", ")} (uri, warehouse, table, namespace, credentialsSecret are known)`;
  if (typeof uri !== "string" || !/^https:\/\/[^/]/.test(uri)) {
    return `uri ${JSON.stringify(uri)} is not an https:// URI (the catalog's credentials and answers must not travel in clear)`;
  }
  const aws = awsIcebergEndpoint(uri);
  if (aws?.service === "s3tables") {
    return (
      `${uri} is S3 Tables' endpoint: S3 Tables keeps a table's files in its own storage, outside this deployment's bucket, ` +
      "and removes unreferenced files itself; run `lakewarden cleanup --catalog` on it instead, which first checks S3 Tables' own snapshot management"
    );
  }
  if (aws?.service === "glue") return `${uri} is Glue's Iceberg endpoint: name the same table in glueTables (database.table), which commits through Glue's UpdateTable`;
  if (warehouse !== undefined && (typeof warehouse !== "string" || warehouse === "")) return `warehouse ${JSON.stringify(warehouse)} is not a name`;
  const name = restTableName(table, namespace);
  if (typeof name === "string") return name;
  if (credentialsSecret !== undefined && (typeof credentialsSecret !== "string" || !(SECRET_ARN.test(credentialsSecret) || SECRET_NAME.test(credentialsSecret)))) {
    return `credentialsSecret ${JSON.stringify(credentialsSecret)} is neither a Secrets Manager secret's ARN nor its name`;
  }
  return {
    uri: uri.replace(/\/+$/, ""),
    ...(warehouse !== undefined ? { warehouse: warehouse as string } : {}),
    namespace: name.namespace,
    table: name.table,
    ...(credentialsSecret !== undefined ? { credentialsSecret: credentialsSecret as string } : {}),
  };
}
