/**
 * The retention policy of one cleanup run, and the one place its sources are ranked and its
 * guards kept. Every source goes through the same parser and the same guards. Highest first,
 * as AWS CLI users expect (command line, then environment, then config files, then defaults):
 *   1. what the caller passes explicitly (CLI flags; library options),
 *   2. the environment (LAKEWARDEN_OLDER_THAN, ...: a shell's, or a Lambda's, set from the CDK props),
 *   3. the table's own config (keys prefixed `lakewarden.` in the latest version's config map),
 *   4. lakewarden's stored config for the table (`_lakewarden/config`, `lakewarden config set`),
 *   5. what the table declares in its format's own keys (Iceberg, Delta retention properties),
 *   6. built-in defaults.
 * A set value that a higher source overrides is a warning. Every effective value remembers where
 * it came from, so the report can say why.
 *
 * Guards: an older-than below 7 days and a safety window below 1 hour are refused unless
 * acknowledged (`allow_short_retention`, `allow_short_safety_window`) by the same source or a
 * higher one, whichever source the short value comes from: `shortSettingProblem`, which the CLI's
 * flags (lib/cli/flags.ts) and the CDK settings (infra/settings.ts) call too.
 */
import type { AppliedRetentions } from "../formats/table-format.ts";
import { PolicyError, ShortSettingError } from "./errors.ts";
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
  /** Acknowledges an older-than below MIN_SAFE_RETENTION_MS (nothing reads a version that long). */
  allowShortRetention?: boolean;
  /** Acknowledges a safety window below MIN_SAFE_SAFETY_WINDOW_MS (no writer is active that long). */
  allowShortSafetyWindow?: boolean;
}

export type PolicyField = keyof Required<CleanupSettings>;

export interface RetentionPolicy {
  olderThanMs: number;
  retainVersions: number;
  protectBefore: number | null;
  deleteUnverified: boolean;
  safetyWindowMs: number;
  allowShortRetention: boolean;
  allowShortSafetyWindow: boolean;
  /** Where each value came from: `table config lakewarden.older_than`, `option` or `default`. */
  sources: Record<PolicyField, string>;
  /** One line for each set value a higher source overrode (absent in policies saved before it). */
  warnings?: string[];
}

export const DEFAULT_SETTINGS: Required<CleanupSettings> = {
  olderThanMs: 7 * DAY_MS,
  retainVersions: 1,
  protectBefore: null,
  deleteUnverified: false,
  safetyWindowMs: 7 * DAY_MS,
  allowShortRetention: false,
  allowShortSafetyWindow: false,
};

/** An older-than below this needs allow_short_retention (Delta Lake refuses the same below 7 days unless its check is off). */
export const MIN_SAFE_RETENTION_MS = 7 * DAY_MS;
/** A safety window below this needs allow_short_safety_window. */
export const MIN_SAFE_SAFETY_WINDOW_MS = 3_600_000;

/** The table config keys lakewarden reads (Lance: the manifest's `config` map). */
export const TABLE_CONFIG_KEYS: Record<PolicyField, string> = {
  olderThanMs: "lakewarden.older_than",
  retainVersions: "lakewarden.retain_versions",
  protectBefore: "lakewarden.protect_before",
  deleteUnverified: "lakewarden.delete_unverified",
  safetyWindowMs: "lakewarden.safety_window",
  allowShortRetention: "lakewarden.allow_short_retention",
  allowShortSafetyWindow: "lakewarden.allow_short_safety_window",
};

/** The environment variables a Lambda reads for its defaults. */
export const ENVIRONMENT_KEYS: Record<PolicyField, string> = {
  olderThanMs: "LAKEWARDEN_OLDER_THAN",
  retainVersions: "LAKEWARDEN_RETAIN_VERSIONS",
  protectBefore: "LAKEWARDEN_PROTECT_BEFORE",
  deleteUnverified: "LAKEWARDEN_DELETE_UNVERIFIED",
  safetyWindowMs: "LAKEWARDEN_SAFETY_WINDOW",
  allowShortRetention: "LAKEWARDEN_ALLOW_SHORT_RETENTION",
  allowShortSafetyWindow: "LAKEWARDEN_ALLOW_SHORT_SAFETY_WINDOW",
};

/** The command-line flags that set each field (for messages). */
const FLAGS: Record<PolicyField, string> = {
  olderThanMs: "--older-than",
  retainVersions: "--retain-versions",
  protectBefore: "--protect-before",
  deleteUnverified: "--delete-unverified",
  safetyWindowMs: "--safety-window",
  allowShortRetention: "--allow-short-retention",
  allowShortSafetyWindow: "--allow-short-safety-window",
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
    case "deleteUnverified":
    case "allowShortRetention":
    case "allowShortSafetyWindow": {
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
    case "allowShortRetention":
    case "allowShortSafetyWindow":
      if (typeof value !== "boolean") bad("a boolean");
      break;
  }
}

/** What the table declares in its format's own config keys (TableFormat.declaredRetention). */
export interface FormatDeclaredSettings {
  settings: Pick<CleanupSettings, "olderThanMs" | "retainVersions" | "safetyWindowMs">;
  sources: Partial<Record<PolicyField, string>>;
}

/** The sources of a setting, lowest first; a source overrides every one before it. */
export type SettingSource = "default" | "format" | "stored config" | "table config" | "environment" | "option";
const SOURCE_RANK: Record<SettingSource, number> = { default: 0, format: 1, "stored config": 2, "table config": 3, environment: 4, option: 5 };

/** Where a value came from, and how to acknowledge a short one there. */
export interface SettingOrigin {
  source: SettingSource;
  /** The value as a person wrote it there: `--older-than 0s`, `lakewarden config lakewarden.older_than = "0s"`. */
  shown: string;
  /** How to acknowledge a short value at this source: `add --allow-short-retention`. */
  acknowledge: string;
}

/** How a field's setting at `source` is named and acknowledged (`key` names the CDK setting for "environment" when it came from the stack). */
export function settingOrigin(field: PolicyField, source: SettingSource, text: string): SettingOrigin {
  const ack = field === "olderThanMs" ? "allowShortRetention" : "allowShortSafetyWindow";
  switch (source) {
    case "option":
      return { source, shown: `${FLAGS[field]} ${text}`, acknowledge: `add ${FLAGS[ack]}` };
    case "environment":
      return { source, shown: `${ENVIRONMENT_KEYS[field]}=${text}`, acknowledge: `set ${ENVIRONMENT_KEYS[ack]}=true` };
    case "table config":
      return { source, shown: `table config ${TABLE_CONFIG_KEYS[field]} = ${JSON.stringify(text)}`, acknowledge: `set ${TABLE_CONFIG_KEYS[ack]}=true in the table's config` };
    case "stored config":
      return {
        source,
        shown: `lakewarden config ${TABLE_CONFIG_KEYS[field]} = ${JSON.stringify(text)}`,
        acknowledge: `add ${TABLE_CONFIG_KEYS[ack].replace("lakewarden.", "")}=true to lakewarden config set`,
      };
    default:
      return { source, shown: `${field} ${text}`, acknowledge: "acknowledge it" };
  }
}

/**
 * The guard every source of a setting goes through: an older-than below 7 days or a safety
 * window below 1 hour is refused unless `allowed`. Returns the one-line reason, or null.
 */
export function shortSettingProblem(
  field: "olderThanMs" | "safetyWindowMs",
  millis: number,
  origin: Pick<SettingOrigin, "shown" | "acknowledge">,
  allowed: boolean,
): string | null {
  const shown = formatDuration(millis);
  if (field === "olderThanMs") {
    if (millis >= MIN_SAFE_RETENTION_MS || allowed) return null;
    return (
      `${origin.shown} is below 7 days: a version removed while a query or a commit still reads it breaks that reader or writer; ` +
      `${origin.acknowledge} if nothing runs longer than ${shown}`
    );
  }
  if (millis >= MIN_SAFE_SAFETY_WINDOW_MS || allowed) return null;
  return (
    `${origin.shown} is below 1 hour: an unreferenced file that young may belong to a commit still being written, and deleting it breaks that commit; ` +
    `${origin.acknowledge} only when no writer is active or none takes longer than ${shown}`
  );
}

export interface PolicyLayers {
  /** Settings from the environment (settingsFromEnvironment): above the table's config, below `settings`. */
  environment?: CleanupSettings;
  /** Apply the guards (default true); `lakewarden config show` shows a refused setting instead of failing. */
  guard?: boolean;
}

/**
 * The effective policy for a table: `settings` (the caller's explicit choice), then
 * `layers.environment`, then its `lakewarden.*` config, then lakewarden's stored config
 * (`_lakewarden/config`), then what the table declares in its format's own keys, then the
 * defaults. Throws PolicyError for a value that does not parse, ShortSettingError for one the
 * guards refuse. `uri` names the table in errors.
 */
export function resolvePolicy(
  settings: CleanupSettings,
  tableConfig: Record<string, string>,
  uri: string,
  storedConfig: Record<string, string> = {},
  declared?: FormatDeclaredSettings,
  layers: PolicyLayers = {},
): RetentionPolicy {
  const resolved = { ...DEFAULT_SETTINGS } as Record<PolicyField, unknown>;
  const sources = {} as Record<PolicyField, string>;
  const origins = {} as Record<PolicyField, SettingOrigin>;
  const warnings: string[] = [];
  for (const field of Object.keys(DEFAULT_SETTINGS) as PolicyField[]) {
    sources[field] = "default";
    origins[field] = settingOrigin(field, "default", String(DEFAULT_SETTINGS[field]));
    const take = (value: unknown, source: SettingSource, sourceName: string, text: string): void => {
      const origin = settingOrigin(field, source, text);
      const before = origins[field];
      if (SOURCE_RANK[before.source] >= SOURCE_RANK["stored config"] && resolved[field] !== value) {
        warnings.push(`${origin.shown} overrides ${before.shown}`);
      }
      resolved[field] = value;
      sources[field] = sourceName;
      origins[field] = origin;
    };
    const fromFormat = (declared?.settings as CleanupSettings | undefined)?.[field];
    if (fromFormat !== undefined) {
      checkSetting(field, fromFormat, uri);
      take(fromFormat, "format", `table config ${declared?.sources[field] ?? "of the format"}`, String(fromFormat));
    }
    const configKey = TABLE_CONFIG_KEYS[field];
    const stored = storedConfig[configKey];
    if (stored !== undefined) take(parseSetting(field, stored, `lakewarden config ${configKey}`, uri), "stored config", `lakewarden config ${configKey}`, stored);
    const configured = tableConfig[configKey];
    if (configured !== undefined) take(parseSetting(field, configured, `table config ${configKey}`, uri), "table config", `table config ${configKey}`, configured);
    const fromEnvironment = layers.environment?.[field];
    if (fromEnvironment !== undefined) {
      checkSetting(field, fromEnvironment, uri);
      take(fromEnvironment, "environment", `environment ${ENVIRONMENT_KEYS[field]}`, settingText(field, fromEnvironment));
    }
    const given = settings[field];
    if (given !== undefined) {
      checkSetting(field, given, uri);
      take(given, "option", "option", settingText(field, given));
    }
  }
  const policy = { ...(resolved as Required<CleanupSettings>), sources, warnings };
  if (layers.guard !== false) guardPolicy(policy, origins, uri);
  return policy;
}

/** A caller-given value as a person would write it, for messages. */
function settingText(field: PolicyField, value: unknown): string {
  return (field === "olderThanMs" || field === "safetyWindowMs") && typeof value === "number" ? formatDuration(value) : String(value);
}

/** Refuses a short value unless the acknowledgement comes from its source or a higher one. */
function guardPolicy(policy: RetentionPolicy, origins: Record<PolicyField, SettingOrigin>, uri: string): void {
  const checks = [
    ["olderThanMs", "allowShortRetention"],
    ["safetyWindowMs", "allowShortSafetyWindow"],
  ] as const;
  for (const [field, ack] of checks) {
    const origin = origins[field];
    // The defaults are safe; what the format's own keys declare is the table's own rule (only ever
    // lengthened); the CLI checks its flags with this same guard before reading anything (flags.ts),
    // and a library caller's options are its explicit choice.
    if (SOURCE_RANK[origin.source] < SOURCE_RANK["stored config"] || origin.source === "option") continue;
    const allowed = policy[ack] && SOURCE_RANK[origins[ack].source] >= SOURCE_RANK[origin.source];
    const problem = shortSettingProblem(field, policy[field], origin, allowed);
    if (problem !== null) throw new ShortSettingError(uri, problem);
  }
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
    // Policies saved before these fields existed have none: false, by default.
    allow_short_retention: { value: policy.allowShortRetention ?? false, source: policy.sources.allowShortRetention ?? "default" },
    allow_short_safety_window: { value: policy.allowShortSafetyWindow ?? false, source: policy.sources.allowShortSafetyWindow ?? "default" },
  };
}
