/**
 * Which tables this deployment looks after: named table URIs and prefixes to discover tables
 * under. A handler acts only on tables inside these scopes, whatever a message says: IAM would
 * refuse the rest anyway, and refusing here gives a clear log line instead of AccessDenied.
 */
import { isHiddenFolder } from "../../lib/follow/discover-tables.ts";
import { ENV, ConfigurationError, uriList, type Environment } from "./environment.ts";

export interface TableScopes {
  /** Table URIs, no trailing slash: `s3://bucket/lake/orders.lance`. */
  tables: string[];
  /** Prefix URIs, each ending in "/": `s3://bucket/lake/`. */
  prefixes: string[];
  /**
   * The tables under the prefixes this deployment may change (IAM names only these roots);
   * absent: every table under the prefixes.
   */
  roots?: string[];
}

export function readTableScopes(env: Environment): TableScopes {
  const tables = uriList(env, ENV.tables).map((uri) => uri.replace(/\/+$/, ""));
  const prefixes = uriList(env, ENV.tablePrefixes).map((uri) => (uri.endsWith("/") ? uri : `${uri}/`));
  if (tables.length === 0 && prefixes.length === 0) {
    throw new ConfigurationError(`${ENV.tables} / ${ENV.tablePrefixes}`, "name no table; set at least one");
  }
  const roots = env[ENV.tableRoots] === undefined ? undefined : uriList(env, ENV.tableRoots).map((uri) => uri.replace(/\/+$/, ""));
  return { tables, prefixes, ...(roots ? { roots } : {}) };
}

/**
 * A named table, or a table under a prefix that discovery would find there (and, when the
 * deployment lists the roots it may change, one of those): folders starting with "_" or "."
 * (LanceDB's `__manifest` catalog, `_temporary/`...) are not user tables.
 */
export function isInScope(tableUri: string, scopes: TableScopes): boolean {
  if (scopes.tables.includes(tableUri)) return true;
  if (scopes.roots && !scopes.roots.includes(tableUri)) return false;
  return scopes.prefixes.some((prefix) => {
    if (!tableUri.startsWith(prefix) || tableUri.length === prefix.length) return false;
    return !tableUri
      .slice(prefix.length)
      .split("/")
      .some((segment) => isHiddenFolder(segment));
  });
}
