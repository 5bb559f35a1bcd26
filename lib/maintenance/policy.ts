/**
 * The retention policy of one cleanup run. Four layers, most specific first:
 *   1. the table's own config (keys prefixed `lakewarden.` in the latest version's config map),
 *   2. lakewarden's stored config for the table (`_lakewarden/config`, `lakewarden config set`),
 *   3. what the caller passes (CLI flags, Lambda environment),
 *   4. built-in defaults.
 * Every effective value remembers where it came from, so the report can say why.
 */
import type { AppliedRetentions } from "../formats/table-format.ts";
import { PolicyError } from "./errors.ts";
import { formatDuration, parseDuration } from "./duration.ts";

const DAY_MS = 86_400_000;

/** What a caller may set; unset fields fall through to the defaults. */
export interface CleanupSettings {
  /** Versions committed longer ago than this may be removed (default 7 days). */
  olderThanMs?: number;
  /** The newest N versions are always kept (default 1: the latest). */
  retainVersions?: number;
  /** History protection boundary P: versions below P go all in one run or not at all. */
  protectBefore?: number | null;
  /** Delete unreferenced files younger than the safety window without proof they were committed. */
  deleteUnverified?: boolean;
  /** Unreferenced files younger than this are kept unless a removed version names them (default 7 days). */
  safetyWindowMs?: number;
}

export type PolicyField = keyof Required<CleanupSettings>;

export interface RetentionPolicy {
  olderThanMs: number;
  retainVersions: number;
  protectBefore: number | null;
  deleteUnverified: boolean;
  safetyWindowMs: number;
  /** Where each value came from: `table config lakewarden.older_than`, `option` or `default`. */
  sources: Record<PolicyField, string>;
}

export const DEFAULT_SETTINGS: Required<CleanupSettings> = {
  olderThanMs: 7 * DAY_MS,
  retainVersions: 1,
  protectBefore: null,
  deleteUnverified: false,
  safetyWindowMs: 7 * DAY_MS,
};

/** The table config keys lakewarden reads (Lance: the manifest's `config` map). */
export const TABLE_CONFIG_KEYS: Record<PolicyField, string> = {
  olderThanMs: "lakewarden.older_than",
  retainVersions: "lakewarden.retain_versions",
  protectBefore: "lakewarden.protect_before",
  deleteUnverified: "lakewarden.delete_unverified",
  safetyWindowMs: "lakewarden.safety_window",
};

/** The environment variables a Lambda reads for its defaults. */
export const ENVIRONMENT_KEYS: Record<PolicyField, string> = {
  olderThanMs: "LAKEWARDEN_OLDER_THAN",
  retainVersions: "LAKEWARDEN_RETAIN_VERSIONS",
  protectBefore: "LAKEWARDEN_PROTECT_BEFORE",
  deleteUnverified: "LAKEWARDEN_DELETE_UNVERIFIED",
  safetyWindowMs: "LAKEWARDEN_SAFETY_WINDOW",
};

type Parsed<F extends PolicyField> = Required<CleanupSettings>[F];

/** What a bad duration is told it is not, in every error about one. */
export const DURATION_EXPECTED = "a duration (e.g. 7d, 12h, 30m, 0s)";

/** Parses one textual setting (config value, env var, CLI flag); throws PolicyError naming `where`. */
export function parseSetting<F extends PolicyField>(field: F, text: string, where: string, uri: string): Parsed<F> {
  const fail = (expected: string): never => {
    throw new PolicyError(uri, `${where} = ${JSON.stringify(text)} is not ${expected}`);
  };
  switch (field) {
    case "olderThanMs":
    case "safetyWindowMs": {
      const millis = parseDuration(text);
      return (millis === null ? fail(DURATION_EXPECTED) : millis) as Parsed<F>;
    }
    case "retainVersions": {
      const n = /^\d+$/.test(text.trim()) ? Number(text) : NaN;
      if (n === 0) fail("allowed: the latest version is always kept, so the fewest versions kept is 1");
      return (Number.isSafeInteger(n) ? n : fail("a whole number of versions (1 or more)")) as Parsed<F>;
    }
    case "protectBefore": {
      const trimmed = text.trim().toLowerCase();
      if (trimmed === "" || trimmed === "none") return null as Parsed<F>;
      const n = /^\d+$/.test(trimmed) ? Number(trimmed) : NaN;
      return (Number.isSafeInteger(n) ? n : fail("a table version number (or 'none')")) as Parsed<F>;
    }
    case "deleteUnverified": {
      const trimmed = text.trim().toLowerCase();
      if (trimmed === "true" || trimmed === "1" || trimmed === "yes") return true as Parsed<F>;
      if (trimmed === "false" || trimmed === "0" || trimmed === "no") return false as Parsed<F>;
      return fail("true or false");
    }
  }
  return fail("a known setting");
}

/** Checks caller-given values (they bypass parsing when passed as numbers). */
function checkSetting(field: PolicyField, value: unknown, uri: string): void {
  const bad = (expected: string): never => {
    throw new PolicyError(uri, `option ${field} = ${JSON.stringify(value)} is not ${expected}`);
  };
  switch (field) {
    case "olderThanMs":
    case "safetyWindowMs":
      if (typeof value !== "number" || !Number.isFinite(value) || value < 0) bad("a non-negative duration in ms");
      break;
    case "retainVersions":
      if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1) bad("a whole number ≥ 1");
      break;
    case "protectBefore":
      if (value !== null && (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0)) bad("a version number or null");
      break;
    case "deleteUnverified":
      if (typeof value !== "boolean") bad("a boolean");
      break;
  }
}

/** What the table declares in its format's own config keys (TableFormat.declaredRetention). */
export interface FormatDeclaredSettings {
  settings: Pick<CleanupSettings, "olderThanMs" | "retainVersions" | "safetyWindowMs">;
  sources: Partial<Record<PolicyField, string>>;
}

/**
 * The effective policy for a table, most specific first: its `lakewarden.*` config, then
 * lakewarden's stored config (`_lakewarden/config`), then the caller's settings, then what the
 * table declares in its format's own keys, then the defaults. `uri` names the table in errors.
 */
export function resolvePolicy(
  settings: CleanupSettings,
  tableConfig: Record<string, string>,
  uri: string,
  storedConfig: Record<string, string> = {},
  declared?: FormatDeclaredSettings,
): RetentionPolicy {
  const resolved = { ...DEFAULT_SETTINGS } as Record<PolicyField, unknown>;
  const sources = {} as Record<PolicyField, string>;
  for (const field of Object.keys(DEFAULT_SETTINGS) as PolicyField[]) {
    sources[field] = "default";
    const fromFormat = (declared?.settings as CleanupSettings | undefined)?.[field];
    if (fromFormat !== undefined) {
      checkSetting(field, fromFormat, uri);
      resolved[field] = fromFormat;
      sources[field] = `table config ${declared?.sources[field] ?? "of the format"}`;
    }
    const given = settings[field];
    if (given !== undefined) {
      checkSetting(field, given, uri);
      resolved[field] = given;
      sources[field] = "option";
    }
    const configKey = TABLE_CONFIG_KEYS[field];
    const stored = storedConfig[configKey];
    if (stored !== undefined) {
      resolved[field] = parseSetting(field, stored, `lakewarden config ${configKey}`, uri);
      sources[field] = `lakewarden config ${configKey}`;
    }
    const configured = tableConfig[configKey];
    if (configured !== undefined) {
      resolved[field] = parseSetting(field, configured, `table config ${configKey}`, uri);
      sources[field] = `table config ${configKey}`;
    }
  }
  return { ...(resolved as Required<CleanupSettings>), sources };
}

/** Caller settings from environment variables (LAKEWARDEN_OLDER_THAN=7d, ...); unset ones stay unset. */
export function settingsFromEnvironment(env: Record<string, string | undefined>): CleanupSettings {
  const settings: Record<string, unknown> = {};
  for (const field of Object.keys(ENVIRONMENT_KEYS) as PolicyField[]) {
    const name = ENVIRONMENT_KEYS[field];
    const text = env[name];
    if (text !== undefined && text !== "") settings[field] = parseSetting(field, text, `environment ${name}`, `env:${name}`);
  }
  return settings as CleanupSettings;
}

/**
 * The policy as the report and receipt print it: human units plus each value's source. Where the
 * format's own rules applied a retention (`applied`: the table's), that is what decided, and a
 * setting only lengthens it: the value shown is the longer of the two, with where each came from.
 * A built-in default never counts against the table's own retention.
 */
export function describePolicy(policy: RetentionPolicy, applied: AppliedRetentions = {}): Record<string, { value: string | number | boolean | null; source: string }> {
  const show = (field: "olderThanMs" | "retainVersions" | "safetyWindowMs", format: (value: number) => string | number) => {
    const own = { value: format(policy[field]), source: policy.sources[field] };
    const rule = applied[field];
    if (!rule) return own;
    const setting = policy.sources[field];
    if (setting === "default" || policy[field] === rule.value) return { value: format(rule.value), source: rule.source };
    if (policy[field] > rule.value) return { value: own.value, source: `${setting}, which lengthens ${format(rule.value)} (${rule.source})` };
    return { value: format(rule.value), source: `${rule.source}; ${setting} ${own.value} only lengthens it, never shortens it` };
  };
  return {
    older_than: show("olderThanMs", formatDuration),
    retain_versions: show("retainVersions", (n) => n),
    protect_before: { value: policy.protectBefore, source: policy.sources.protectBefore },
    delete_unverified: { value: policy.deleteUnverified, source: policy.sources.deleteUnverified },
    safety_window: show("safetyWindowMs", formatDuration),
  };
}
