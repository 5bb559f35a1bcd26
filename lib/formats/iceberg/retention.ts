/**
 * The retention an Iceberg table declares (TableProperties defaults, iceberg.md §2) and the
 * switches cleanup obeys.
 */
import { TableFormatError } from "../errors.ts";

export const DAY_MS = 24 * 3600 * 1000;

export const ICEBERG_DEFAULTS = {
  maxSnapshotAgeMs: 5 * DAY_MS,
  minSnapshotsToKeep: 1,
  maxRefAgeMs: Number.POSITIVE_INFINITY,
  previousVersionsMax: 100,
  /** RemoveOrphanFiles' default `older_than`. */
  orphanOlderThanMs: 3 * DAY_MS,
} as const;

export interface TableRetention {
  maxSnapshotAgeMs: number;
  minSnapshotsToKeep: number;
  maxRefAgeMs: number;
  previousVersionsMax: number;
  /** `gc.enabled` (default true): false means no file of the table may be deleted by maintenance. */
  gcEnabled: boolean;
  /** The property each value came from, where the table set it. */
  sources: Partial<Record<"maxSnapshotAgeMs" | "minSnapshotsToKeep" | "maxRefAgeMs" | "previousVersionsMax" | "gcEnabled", string>>;
}

/**
 * A whole-number property, or null when unset. A value that is not one stops cleanup (iceberg-java
 * fails on it too): falling back to the default could expire snapshots the owner meant to keep.
 */
function wholeNumber(properties: Record<string, string>, key: string, uri: string): number | null {
  const text = properties[key];
  if (text === undefined) return null;
  if (!/^\d+$/.test(String(text).trim())) throw new TableFormatError(uri, `table property ${key} = "${text}" is not a whole number ≥ 0; nothing written or deleted`);
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : Number.POSITIVE_INFINITY;
}

/** `uri` names the table (or its metadata file) in the error a bad property gives. */
export function tableRetention(properties: Record<string, string>, uri = "table"): TableRetention {
  const sources: TableRetention["sources"] = {};
  const read = (key: string, field: keyof TableRetention["sources"], fallback: number): number => {
    const value = wholeNumber(properties, key, uri);
    if (value === null) return fallback;
    sources[field] = key;
    return value;
  };
  const maxSnapshotAgeMs = read("history.expire.max-snapshot-age-ms", "maxSnapshotAgeMs", ICEBERG_DEFAULTS.maxSnapshotAgeMs);
  const minSnapshotsToKeep = Math.max(1, read("history.expire.min-snapshots-to-keep", "minSnapshotsToKeep", ICEBERG_DEFAULTS.minSnapshotsToKeep));
  const maxRefAgeMs = read("history.expire.max-ref-age-ms", "maxRefAgeMs", ICEBERG_DEFAULTS.maxRefAgeMs);
  const previousVersionsMax = Math.max(1, read("write.metadata.previous-versions-max", "previousVersionsMax", ICEBERG_DEFAULTS.previousVersionsMax));
  const gc = properties["gc.enabled"];
  if (gc !== undefined) sources.gcEnabled = "gc.enabled";
  // Java's Boolean.parseBoolean: only "true" enables; "off", "no" or "0" disable, as they do there.
  return { maxSnapshotAgeMs, minSnapshotsToKeep, maxRefAgeMs, previousVersionsMax, gcEnabled: gc === undefined || String(gc).trim().toLowerCase() === "true", sources };
}

/** A duration for people: whole days, hours, minutes or seconds where exact, else milliseconds. */
export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return "never";
  for (const [unit, size] of [
    ["d", DAY_MS],
    ["h", 3600_000],
    ["m", 60_000],
    ["s", 1000],
  ] as const) {
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}
