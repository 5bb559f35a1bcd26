/**
 * The table properties that govern Delta cleanup (delta.md §3-5), parsed from metaData.configuration.
 * Durations are Spark calendar intervals such as `interval 30 days` or `interval 1 day 12 hours`
 * (the `interval` word optional); months and years are refused, as Spark refuses them for these
 * properties. A property that cannot be parsed stops cleanup: guessing a retention could delete
 * what the table owner meant to keep.
 */
import { TableFormatError } from "../errors.ts";
import type { MetadataAction, ProtocolAction } from "./actions.ts";
import { hasWriterFeature } from "./protocol.ts";

export const DELETED_FILE_RETENTION = "delta.deletedFileRetentionDuration";
export const LOG_RETENTION = "delta.logRetentionDuration";
export const ENABLE_EXPIRED_LOG_CLEANUP = "delta.enableExpiredLogCleanup";
export const CHECKPOINT_PROTECTION_VERSION = "delta.requireCheckpointProtectionBeforeVersion";

export const DAY_MS = 86_400_000;
export const DEFAULT_DELETED_FILE_RETENTION_MS = 7 * DAY_MS;
export const DEFAULT_LOG_RETENTION_MS = 30 * DAY_MS;

const UNIT_MS: Record<string, number> = {
  nanosecond: 1e-6,
  microsecond: 1e-3,
  millisecond: 1,
  second: 1000,
  minute: 60_000,
  hour: 3_600_000,
  day: DAY_MS,
  week: 7 * DAY_MS,
};

/** Milliseconds of a Spark interval string; null when it is not one (or uses months/years). */
export function parseIntervalMs(text: string): number | null {
  const words = text.trim().toLowerCase().split(/\s+/);
  if (words[0] === "interval") words.shift();
  if (words.length === 0 || words.length % 2 !== 0) return null;
  let total = 0;
  for (let i = 0; i < words.length; i += 2) {
    const amount = Number(words[i]);
    const unit = words[i + 1]!.replace(/s$/, "");
    const factor = UNIT_MS[unit];
    if (!Number.isFinite(amount) || factor === undefined) return null;
    total += amount * factor;
  }
  return total < 0 ? null : Math.round(total);
}

function duration(config: Record<string, string>, key: string, fallback: number, uri: string): number {
  const raw = config[key];
  if (raw === undefined || raw === null) return fallback;
  const ms = parseIntervalMs(String(raw));
  if (ms === null) throw new TableFormatError(uri, `table property ${key} = "${raw}" is not a duration lakewarden understands (e.g. "interval 7 days"); no cleanup`);
  return ms;
}

/**
 * A boolean property as Spark reads it (`toBoolean`: "true" or "false", any case). Anything else
 * stops cleanup, as it stops Spark: read as "not false", "off" would let log cleanup erase
 * history the owner meant to keep.
 */
function flag(config: Record<string, string>, key: string, fallback: boolean, uri: string): boolean {
  const raw = config[key];
  if (raw === undefined || raw === null) return fallback;
  const text = String(raw).trim().toLowerCase();
  if (text === "true" || text === "false") return text === "true";
  throw new TableFormatError(uri, `table property ${key} = "${raw}" is not true or false; no cleanup`);
}

export interface CleanupProperties {
  deletedFileRetentionMs: number;
  logRetentionMs: number;
  expiredLogCleanup: boolean;
  /** checkpointProtection's boundary V; 0 when the feature is not in the protocol (as Spark reads it). */
  checkpointProtectionBefore: number;
  /** Which keys were set on the table, for reports. */
  declared: Partial<Record<"deletedFileRetentionMs" | "logRetentionMs", string>>;
}

export function cleanupProperties(protocol: ProtocolAction, metadata: MetadataAction, uri: string): CleanupProperties {
  const config = metadata.configuration ?? {};
  const protectedRaw = config[CHECKPOINT_PROTECTION_VERSION];
  let checkpointProtectionBefore = 0;
  if (hasWriterFeature(protocol, "checkpointProtection") && protectedRaw !== undefined) {
    // Digits only, as Spark's toLong reads it: Number("") is 0, which would lift the protection.
    const v = /^\s*\d+\s*$/.test(String(protectedRaw)) ? Number(protectedRaw) : NaN;
    if (!Number.isSafeInteger(v) || v < 0) throw new TableFormatError(uri, `table property ${CHECKPOINT_PROTECTION_VERSION} = "${protectedRaw}" is not a version; no cleanup`);
    checkpointProtectionBefore = v;
  }
  const declared: CleanupProperties["declared"] = {};
  if (config[DELETED_FILE_RETENTION] !== undefined) declared.deletedFileRetentionMs = DELETED_FILE_RETENTION;
  if (config[LOG_RETENTION] !== undefined) declared.logRetentionMs = LOG_RETENTION;
  return {
    deletedFileRetentionMs: duration(config, DELETED_FILE_RETENTION, DEFAULT_DELETED_FILE_RETENTION_MS, uri),
    logRetentionMs: duration(config, LOG_RETENTION, DEFAULT_LOG_RETENTION_MS, uri),
    expiredLogCleanup: flag(config, ENABLE_EXPIRED_LOG_CLEANUP, true, uri),
    checkpointProtectionBefore,
    declared,
  };
}
