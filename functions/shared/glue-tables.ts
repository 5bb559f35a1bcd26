/** The tables whose commit pointer the AWS Glue Data Catalog owns (LAKEWARDEN_GLUE_TABLES), by table URI. */
import { normalizeGlueTableName, type GlueTableName } from "../../lib/catalog/glue.ts";
import { ConfigurationError, ENV, optionalString, type Environment } from "./environment.ts";

export function readGlueTables(env: Environment): Map<string, GlueTableName> {
  const text = optionalString(env, ENV.glueTables);
  const tables = new Map<string, GlueTableName>();
  if (text === undefined) return tables;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ConfigurationError(ENV.glueTables, "is not valid JSON");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new ConfigurationError(ENV.glueTables, 'is not a JSON object ({"s3://bucket/table": {"database": "...", "table": "..."}} expected)');
  }
  for (const [uri, entry] of Object.entries(value)) {
    const { database, table, catalogId } = (entry ?? {}) as Partial<Record<keyof GlueTableName, unknown>>;
    if (typeof database !== "string" || database === "" || typeof table !== "string" || table === "" || (catalogId !== undefined && typeof catalogId !== "string")) {
      throw new ConfigurationError(ENV.glueTables, `${uri}: expected {"database": "...", "table": "..."} with an optional "catalogId"`);
    }
    tables.set(uri.replace(/\/+$/, ""), normalizeGlueTableName({ database, table, ...(catalogId ? { catalogId } : {}) }));
  }
  return tables;
}
