/**
 * What a lakewarden deployment is told: which tables it looks after and how. One validated
 * shape, filled from CDK context (`-c lakewarden:tables=...`, cdk.json) or from construct props.
 *
 * Tables are named by their path inside the bucket (`lake/orders.lance`), not by URI, because a
 * bucket the stack creates has no name until deploy time; the functions receive full `s3://` URIs.
 */
import { normalizeGlueTableName, parseGlueTableName, type GlueTableName } from "../lib/catalog/glue.ts";
import { parseDuration } from "../lib/maintenance/duration.ts";
import { shortSettingProblem } from "../lib/maintenance/policy.ts";
import { LAKEWARDEN_PREFIX } from "../lib/maintenance/file-plan.ts";
import { resolveRestCatalogTable, type RestCatalogTableInput, type RestCatalogTableSetting } from "./catalog-settings.ts";

export type { RestCatalogTableInput, RestCatalogTableSetting } from "./catalog-settings.ts";

/** Everything lakewarden writes lives here, inside each table (DESIGN.md); IAM lets the functions write nowhere else. */
export const LAKEWARDEN_FOLDER = LAKEWARDEN_PREFIX;

export type HeadCodec = "arrow" | "json";

export interface RetentionSettings {
  /**
   * Versions older than this may be removed, e.g. "7d", "36h". Unset: lakewarden's default (7d);
   * an Iceberg table's snapshots then go by the table's own snapshot retention alone (set, it only keeps more).
   */
  olderThan?: string;
  /** Always keep at least this many newest versions. Unset: lakewarden's default (1), and for Iceberg the table's own retention. */
  retainVersions?: number;
  /**
   * Unreferenced files younger than this are kept unless a removed version proves they were committed.
   * Unset: lakewarden's default (7d), and a table's own `lakewarden.safety_window` applies.
   */
  safetyWindow?: string;
  /** An olderThan below 7 days only with this set: a version removed while a query or a commit still reads it breaks that reader or writer. */
  allowShortRetention?: boolean;
  /** A safety window below 1 hour only with this set: a younger file may belong to a commit still being written. */
  allowShortSafetyWindow?: boolean;
}

/**
 * Head settings for every table of the deployment. Unset (the default) leaves each table to
 * its own `lakewarden.head_codec` / `lakewarden.head_inline_bytes` config, then to lakewarden's
 * defaults (arrow, 1 MiB); set, they override the tables' config.
 */
export interface HeadSettings {
  codec?: HeadCodec;
  /** Budget for optional inline sections of the head (data-file footers), in bytes. */
  inlineBytes?: number;
}

export interface LakewardenSettings {
  /** Table roots inside the bucket, without leading or trailing slash: `lake/orders.lance`. */
  tables: string[];
  /** Prefixes under which every table is looked after, each ending in "/": `lake/`. */
  tablePrefixes: string[];
  /**
   * The roots of the tables under `tablePrefixes` that lakewarden may change (write its
   * `_lakewarden/` folder, delete files): IAM names each one. Tables discovered under a prefix
   * but not listed are read only and skipped. Required with `tablePrefixes` unless
   * `prefixWideAccess` is set.
   */
  tableRoots: string[];
  /**
   * Grant writes to `_lakewarden/` and deletes on every key under the `tablePrefixes` instead
   * of per table root. S3 ARN wildcards cross "/", so `lake/*` also covers keys of things
   * under `lake/` that are not tables; off by default, for prefixes whose tables are not known
   * at deploy time.
   */
  prefixWideAccess: boolean;
  /** EventBridge schedule expression for cleanup: `rate(1 day)`, `cron(0 3 * * ? *)`. */
  cleanupSchedule: string;
  retention: RetentionSettings;
  head: HeadSettings;
  /** How many folder levels under a prefix the scheduler descends looking for tables. */
  discoveryDepth: number;
  /**
   * Tables whose commit pointer the AWS Glue Data Catalog owns (Iceberg tables Athena, Glue
   * jobs or iceberg-java's GlueCatalog write), by table root: the cleanup function reads the
   * entry's `metadata_location` with GetTable right before each run, the commit function before
   * each head it writes (the head follows the catalog, not the newest metadata file), and both
   * are granted `glue:GetTable` on exactly these entries. Each root must be one lakewarden may change.
   */
  glueTables: Record<string, GlueTableName>;
  /**
   * Tables whose commit pointer an Iceberg REST catalog owns (Polaris, Lakekeeper, Nessie, Unity,
   * Gravitino...), by table root: the functions load the table from the catalog (the head follows
   * the catalog's pointer) and cleanup expires snapshots through the catalog's table commit. The
   * catalog's credentials are read at run time from the Secrets Manager secret each entry names,
   * and the functions may read exactly those secrets. Each root must be one lakewarden may change,
   * and not also in glueTables.
   */
  restCatalogTables: Record<string, RestCatalogTableSetting>;
  /**
   * Objects of new work a time-budgeted cleanup run does before its budget may stop it (a
   * version file read, an object listed, a key deleted each count one). Unset: the library's
   * default (1); raise it when a chain of runs spends its budgets re-checking.
   */
  minWorkPerRun?: number;
}

export const DEFAULT_SETTINGS: Omit<LakewardenSettings, "tables" | "tablePrefixes" | "tableRoots"> = {
  prefixWideAccess: false,
  cleanupSchedule: "rate(1 day)",
  // Retention unset: the functions use each table's own settings, then lakewarden's defaults, and an
  // Iceberg table's snapshot retention is its own (an explicit value only ever keeps more). A value
  // set here reaches the functions as LAKEWARDEN_* environment variables, which override the tables' settings.
  retention: {},
  head: {},
  discoveryDepth: 4,
  glueTables: {},
  restCatalogTables: {},
};

/** A setting that cannot be used; the message names the setting and the problem. */
export class InvalidSettingError extends Error {
  readonly setting: string;
  constructor(setting: string, problem: string) {
    super(`lakewarden setting ${setting}: ${problem}`);
    this.name = "InvalidSettingError";
    this.setting = setting;
  }
}

export interface SettingsInput {
  tables?: readonly string[];
  tablePrefixes?: readonly string[];
  tableRoots?: readonly string[];
  prefixWideAccess?: boolean;
  cleanupSchedule?: string;
  retention?: Partial<RetentionSettings>;
  head?: Partial<HeadSettings>;
  discoveryDepth?: number;
  /** Table root → `database.table`, or `{ database, table, catalogId? }` for another account's catalog. */
  glueTables?: Readonly<Record<string, string | GlueTableName>>;
  /** Table root → its table in an Iceberg REST catalog: `{ uri, table: "namespace.table", warehouse?, credentialsSecret? }`. */
  restCatalogTables?: Readonly<Record<string, RestCatalogTableInput>>;
  minWorkPerRun?: number;
}

/** Fills defaults and validates; throws InvalidSettingError on the first problem. */
export function resolveSettings(input: SettingsInput): LakewardenSettings {
  const tables = (input.tables ?? []).map((table) => normalizeTableRoot(table));
  const tablePrefixes = (input.tablePrefixes ?? []).map((prefix) => normalizePrefix(prefix));
  if (tables.length === 0 && tablePrefixes.length === 0) {
    throw new InvalidSettingError("tables", "name at least one table or table prefix to look after");
  }
  rejectOverlaps(tables, tablePrefixes);
  const tableRoots = (input.tableRoots ?? []).map((root) => normalizeTableRoot(root, "tableRoots"));
  const prefixWideAccess = input.prefixWideAccess ?? DEFAULT_SETTINGS.prefixWideAccess;
  checkTableRoots(tableRoots, tablePrefixes, prefixWideAccess);

  const cleanupSchedule = input.cleanupSchedule ?? DEFAULT_SETTINGS.cleanupSchedule;
  if (!/^(rate|cron)\(.+\)$/.test(cleanupSchedule)) {
    throw new InvalidSettingError("cleanupSchedule", `"${cleanupSchedule}" is not rate(...) or cron(...)`);
  }
  const retention: RetentionSettings = { ...DEFAULT_SETTINGS.retention, ...definedOnly(input.retention ?? {}) };
  for (const setting of ["olderThan", "safetyWindow"] as const) {
    const value = retention[setting];
    if (value !== undefined && parseDuration(value) === null) {
      throw new InvalidSettingError(setting, `"${value}" is not a duration like 7d, 36h or 90m`);
    }
  }
  if (retention.retainVersions !== undefined) requirePositiveInteger("retainVersions", retention.retainVersions);
  // The policy's own guard (lib/maintenance/policy.ts), as for every other source of these settings.
  const guards = [
    ["olderThan", "olderThanMs", "allowShortRetention"],
    ["safetyWindow", "safetyWindowMs", "allowShortSafetyWindow"],
  ] as const;
  for (const [setting, field, acknowledgement] of guards) {
    const value = retention[setting];
    if (value === undefined) continue;
    const origin = { shown: `"${value}"`, acknowledge: `set lakewarden:${acknowledgement} to true` };
    const problem = shortSettingProblem(field, parseDuration(value)!, origin, retention[acknowledgement] === true);
    if (problem !== null) throw new InvalidSettingError(setting, problem);
  }

  const head: HeadSettings = { ...DEFAULT_SETTINGS.head, ...definedOnly(input.head ?? {}) };
  if (head.codec !== undefined && head.codec !== "arrow" && head.codec !== "json") {
    throw new InvalidSettingError("headCodec", `"${String(head.codec)}" is not one of arrow, json`);
  }
  if (head.inlineBytes !== undefined && (!Number.isSafeInteger(head.inlineBytes) || head.inlineBytes < 0)) {
    throw new InvalidSettingError("headInlineBytes", `${String(head.inlineBytes)} is not a byte count`);
  }

  const discoveryDepth = input.discoveryDepth ?? DEFAULT_SETTINGS.discoveryDepth;
  requirePositiveInteger("discoveryDepth", discoveryDepth);
  const glueTables = resolveGlueTables(input.glueTables ?? {}, { tables, tablePrefixes, tableRoots, prefixWideAccess });
  const restCatalogTables = resolveRestCatalogTables(input.restCatalogTables ?? {}, { tables, tablePrefixes, tableRoots, prefixWideAccess }, glueTables);
  // At least one: with none, a budget could stop every run of a chain before it did anything new.
  if (input.minWorkPerRun !== undefined) requirePositiveInteger("minWorkPerRun", input.minWorkPerRun);
  return {
    tables,
    tablePrefixes,
    tableRoots,
    prefixWideAccess,
    cleanupSchedule,
    retention,
    head,
    discoveryDepth,
    glueTables,
    restCatalogTables,
    ...(input.minWorkPerRun !== undefined ? { minWorkPerRun: input.minWorkPerRun } : {}),
  };
}

/**
 * Each Glue-owned table must be one lakewarden may change (a named table, a listed root, or any
 * table under a prefix with prefixWideAccess): its cleanup deletes files there. Names are
 * lower-cased as Glue stores them, so the IAM ARNs match the ones Glue authorizes.
 */
function resolveGlueTables(
  input: Readonly<Record<string, string | GlueTableName>>,
  scopes: Pick<LakewardenSettings, "tables" | "tablePrefixes" | "tableRoots" | "prefixWideAccess">,
): Record<string, GlueTableName> {
  const out: Record<string, GlueTableName> = {};
  for (const [path, entry] of Object.entries(input)) {
    const root = catalogTableRoot("glueTables", path, scopes);
    if (out[root]) throw new InvalidSettingError("glueTables", `"${root}" is listed twice`);
    const name = typeof entry === "string" ? parseGlueTableName(entry) : glueTableObject(entry);
    if (!name) {
      throw new InvalidSettingError(
        "glueTables",
        `"${root}": ${JSON.stringify(entry)} is not a Glue table name; write database.table (or {"database": ..., "table": ..., "catalogId": ...})`,
      );
    }
    if (name.catalogId !== undefined && !/^\d{12}$/.test(name.catalogId)) {
      throw new InvalidSettingError("glueTables", `"${root}": catalogId ${JSON.stringify(name.catalogId)} is not a 12-digit AWS account id`);
    }
    out[root] = name;
  }
  return out;
}

type WriteScopes = Pick<LakewardenSettings, "tables" | "tablePrefixes" | "tableRoots" | "prefixWideAccess">;

/** A catalog-owned table's root, which must be one lakewarden may change: its cleanup deletes files there. */
function catalogTableRoot(setting: string, path: string, scopes: WriteScopes): string {
  const root = normalizeTableRoot(path, setting);
  const writable = scopes.tables.includes(root) || scopes.tableRoots.includes(root) || (scopes.prefixWideAccess && scopes.tablePrefixes.some((prefix) => root.startsWith(prefix)));
  if (!writable) throw new InvalidSettingError(setting, `"${root}" is not a table lakewarden may change; list it in tables or tableRoots first`);
  return root;
}

/** Each REST catalog table: a root lakewarden may change, owned by no other catalog, its entry valid (catalog-settings.ts). */
function resolveRestCatalogTables(
  input: Readonly<Record<string, RestCatalogTableInput>>,
  scopes: WriteScopes,
  glueTables: Readonly<Record<string, GlueTableName>>,
): Record<string, RestCatalogTableSetting> {
  const out: Record<string, RestCatalogTableSetting> = {};
  for (const [path, entry] of Object.entries(input)) {
    const root = catalogTableRoot("restCatalogTables", path, scopes);
    if (out[root]) throw new InvalidSettingError("restCatalogTables", `"${root}" is listed twice`);
    if (glueTables[root]) throw new InvalidSettingError("restCatalogTables", `"${root}" is also in glueTables: one catalog owns a table's pointer`);
    const resolved = resolveRestCatalogTable(entry);
    if (typeof resolved === "string") throw new InvalidSettingError("restCatalogTables", `"${root}": ${resolved}`);
    out[root] = resolved;
  }
  return out;
}

function glueTableObject(entry: unknown): GlueTableName | null {
  if (typeof entry !== "object" || entry === null) return null;
  const { database, table, catalogId } = entry as Record<string, unknown>;
  if (typeof database !== "string" || typeof table !== "string" || (catalogId !== undefined && typeof catalogId !== "string")) return null;
  if (database === "" || table === "" || /[\s/*?]/.test(database + table)) return null;
  return normalizeGlueTableName({ database, table, ...(catalogId ? { catalogId } : {}) });
}

/**
 * Reads settings from CDK context. List values may be JSON arrays (cdk.json) or, from the
 * command line (`-c lakewarden:tables=a.lance,b.lance`), comma-separated strings.
 */
export function settingsFromContext(tryGetContext: (key: string) => unknown): LakewardenSettings {
  const get = (key: string): unknown => tryGetContext(`lakewarden:${key}`);
  return resolveSettings({
    tables: contextList("tables", get("tables")),
    tablePrefixes: contextList("tablePrefixes", get("tablePrefixes")),
    tableRoots: contextList("tableRoots", get("tableRoots")),
    prefixWideAccess: contextBoolean("prefixWideAccess", get("prefixWideAccess")),
    cleanupSchedule: contextString("cleanupSchedule", get("cleanupSchedule")),
    retention: {
      olderThan: contextString("olderThan", get("olderThan")),
      retainVersions: contextNumber("retainVersions", get("retainVersions")),
      safetyWindow: contextString("safetyWindow", get("safetyWindow")),
      allowShortRetention: get("allowShortRetention") === true || get("allowShortRetention") === "true" ? true : undefined,
      allowShortSafetyWindow: get("allowShortSafetyWindow") === true || get("allowShortSafetyWindow") === "true" ? true : undefined,
    },
    head: {
      codec: contextString("headCodec", get("headCodec")) as HeadCodec | undefined,
      inlineBytes: contextNumber("headInlineBytes", get("headInlineBytes")),
    },
    discoveryDepth: contextNumber("discoveryDepth", get("discoveryDepth")),
    glueTables: contextGlueTables(get("glueTables")),
    restCatalogTables: contextRestCatalogTables(get("restCatalogTables")),
    minWorkPerRun: contextNumber("minWorkPerRun", get("minWorkPerRun")),
  });
}

/**
 * `glueTables` from context: a JSON object (cdk.json, or `-c 'lakewarden:glueTables={"lake/orders": "sales.orders"}'`)
 * or, from the command line, `root=database.table` pairs separated by commas.
 */
function contextGlueTables(value: unknown): Record<string, string | GlueTableName> | undefined {
  if (value === undefined || value === null || value === "") return undefined;
  if (typeof value === "string") {
    const text = value.trim();
    if (text.startsWith("{")) return contextGlueTables(parseJson("glueTables", text));
    const out: Record<string, string> = {};
    for (const pair of text
      .split(",")
      .map((item) => item.trim())
      .filter((item) => item !== "")) {
      const at = pair.indexOf("=");
      if (at <= 0) throw new InvalidSettingError("glueTables", `"${pair}" is not table-root=database.table`);
      out[pair.slice(0, at).trim()] = pair.slice(at + 1).trim();
    }
    return out;
  }
  if (typeof value === "object" && !Array.isArray(value)) return value as Record<string, string | GlueTableName>;
  throw new InvalidSettingError("glueTables", "expected an object of table root → database.table (JSON) or root=database.table pairs");
}

/** `restCatalogTables` from context: a JSON object (cdk.json, or `-c 'lakewarden:restCatalogTables={...}'`) of table root → entry. */
function contextRestCatalogTables(value: unknown): Record<string, RestCatalogTableInput> | undefined {
  if (value === undefined || value === null || value === "") return undefined;
  const object = typeof value === "string" ? parseJson("restCatalogTables", value.trim()) : value;
  if (typeof object === "object" && object !== null && !Array.isArray(object)) return object as Record<string, RestCatalogTableInput>;
  throw new InvalidSettingError("restCatalogTables", 'expected a JSON object of table root → {"uri": ..., "table": "namespace.table", "credentialsSecret": ...}');
}

function normalizeTableRoot(table: string, setting = "tables"): string {
  const root = table.replace(/\/+$/, "");
  checkPath(setting, table, root);
  if (root === "") throw new InvalidSettingError(setting, `"${table}" is the bucket root; name the table's folder`);
  return root;
}

/**
 * IAM cannot say "one folder level" (ARN wildcards cross "/"), so a prefix's tables can be
 * granted one by one only if they are named: refuse a prefix whose writable tables are unknown
 * rather than grant deletes on the whole prefix unasked.
 */
function checkTableRoots(roots: readonly string[], prefixes: readonly string[], prefixWide: boolean): void {
  if (prefixWide && roots.length > 0) {
    throw new InvalidSettingError("tableRoots", "prefixWideAccess already grants every key under the prefixes; set one or the other");
  }
  if (prefixes.length > 0 && roots.length === 0 && !prefixWide) {
    throw new InvalidSettingError(
      "tableRoots",
      `name the tables under ${prefixes.join(", ")} that lakewarden may change (lakewarden:tableRoots=lake/orders.lance,...), ` +
        "or set lakewarden:prefixWideAccess to true to allow writes and deletes on every key under the prefixes",
    );
  }
  const seen = new Set<string>();
  for (const root of roots) {
    if (seen.has(root)) throw new InvalidSettingError("tableRoots", `"${root}" is listed twice`);
    seen.add(root);
    const under = prefixes.find((prefix) => root.startsWith(prefix));
    if (!under) throw new InvalidSettingError("tableRoots", `"${root}" is under none of the tablePrefixes; list a table outside them in tables`);
    const nested = roots.find((other) => other !== root && root.startsWith(`${other}/`));
    if (nested) throw new InvalidSettingError("tableRoots", `"${root}" is inside table "${nested}"`);
  }
}

function normalizePrefix(prefix: string): string {
  const trimmed = prefix.replace(/\/+$/, "");
  checkPath("tablePrefixes", prefix, trimmed);
  // An empty prefix would mean the whole bucket: deletes on every key of it. Refused on purpose.
  if (trimmed === "") throw new InvalidSettingError("tablePrefixes", "the whole bucket cannot be a table prefix; name a folder");
  // "lake" alone would also match "lakehouse/..."; a prefix is always a folder.
  return `${trimmed}/`;
}

function checkPath(setting: string, original: string, path: string): void {
  if (path.startsWith("s3://")) {
    throw new InvalidSettingError(setting, `"${original}" is a URI; give the path inside the bucket (lake/orders.lance)`);
  }
  if (path === "") return; // the callers say why an empty path is refused
  if (path.startsWith("/") || path.split("/").some((segment) => segment === "" || segment === "." || segment === "..")) {
    throw new InvalidSettingError(setting, `"${original}" is not a clean relative path`);
  }
  if (/[*?]/.test(path)) throw new InvalidSettingError(setting, `"${original}" contains a wildcard`);
}

/**
 * S3 refuses two notification filters that can match one key, and a table inside a prefix
 * would also be cleaned twice. Either way the configuration is ambiguous, so it is an error.
 */
function rejectOverlaps(tables: readonly string[], prefixes: readonly string[]): void {
  const scopes = [...tables.map((t) => ({ kind: "table", path: `${t}/` })), ...prefixes.map((p) => ({ kind: "prefix", path: p }))];
  for (let i = 0; i < scopes.length; i++) {
    for (let j = i + 1; j < scopes.length; j++) {
      const a = scopes[i]!;
      const b = scopes[j]!;
      if (a.path.startsWith(b.path) || b.path.startsWith(a.path)) {
        throw new InvalidSettingError("tables", `${a.kind} "${a.path.replace(/\/$/, "")}" and ${b.kind} "${b.path.replace(/\/$/, "")}" overlap; list each table once`);
      }
    }
  }
}

function requirePositiveInteger(setting: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new InvalidSettingError(setting, `${String(value)} is not a positive integer`);
  }
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function contextList(setting: string, value: unknown): string[] | undefined {
  if (value === undefined || value === null || value === "") return undefined;
  if (Array.isArray(value) && value.every((item) => typeof item === "string")) return value;
  if (typeof value === "string") {
    const text = value.trim();
    if (text.startsWith("[")) return contextList(setting, parseJson(setting, text));
    return text
      .split(",")
      .map((item) => item.trim())
      .filter((item) => item !== "");
  }
  throw new InvalidSettingError(setting, "expected a list of strings (JSON array or comma-separated)");
}

function contextString(setting: string, value: unknown): string | undefined {
  if (value === undefined || value === null || value === "") return undefined;
  if (typeof value === "string") return value;
  throw new InvalidSettingError(setting, `expected a string, got ${JSON.stringify(value)}`);
}

function contextBoolean(setting: string, value: unknown): boolean | undefined {
  if (value === undefined || value === null || value === "") return undefined;
  if (value === true || value === "true") return true;
  if (value === false || value === "false") return false;
  throw new InvalidSettingError(setting, `expected true or false, got ${JSON.stringify(value)}`);
}

function contextNumber(setting: string, value: unknown): number | undefined {
  if (value === undefined || value === null || value === "") return undefined;
  const number = typeof value === "string" ? Number(value) : value;
  if (typeof number === "number" && !Number.isNaN(number)) return number;
  throw new InvalidSettingError(setting, `expected a number, got ${JSON.stringify(value)}`);
}

function parseJson(setting: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new InvalidSettingError(setting, `${text} is not valid JSON`);
  }
}
