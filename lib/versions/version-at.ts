/**
 * Which version was current at a given time.
 *
 * Commit timestamps come from writers' clocks and need not grow with versions (clock skew,
 * several writers). But versions are committed in order: version v cannot have become current
 * before version v-1 did. So each version's "current from" time is the largest timestamp among
 * it and all earlier known versions (a running maximum), and the version current at time T is
 * the highest version whose "current from" is at or before T. This makes the answer a step
 * function that never goes back as T grows; equal times resolve to the higher version (the
 * later commit). Before the first known version's time there is no answer. Versions missing
 * from the timeline (lost before any checkpoint) cannot be answered and are skipped.
 */
import { TableFormatError } from "../formats/errors.ts";
import type { VersionRecord } from "../model/version-record.ts";

/** The time asked for precedes every version the table's history knows. */
export class NoVersionAtTimeError extends TableFormatError {}

export interface VersionAt {
  version: number;
  record: VersionRecord;
  /** When it became current: its timestamp, or a predecessor's if that was later (skew). */
  current_from_millis: number;
  /** When the next version took over; null while it is the latest. */
  current_until_millis: number | null;
}

/** The running maximum of timestamps over versions in ascending order. */
export function currentFromTimes(records: readonly VersionRecord[]): number[] {
  let running = -Infinity;
  return records.map((record) => (running = Math.max(running, record.timestamp_millis)));
}

/** The version current at `atMillis`, or null when it precedes every known version. */
export function versionAt(timeline: readonly VersionRecord[], atMillis: number): VersionAt | null {
  const records = [...timeline].sort((a, b) => a.version - b.version);
  const from = currentFromTimes(records);
  // Last index whose current-from is <= atMillis (from[] is non-decreasing).
  let low = 0;
  let high = records.length - 1;
  let found = -1;
  while (low <= high) {
    const mid = (low + high) >> 1;
    if (from[mid]! <= atMillis) {
      found = mid;
      low = mid + 1;
    } else {
      high = mid - 1;
    }
  }
  if (found === -1) return null;
  return {
    version: records[found]!.version,
    record: records[found]!,
    current_from_millis: from[found]!,
    current_until_millis: found + 1 < records.length ? from[found + 1]! : null,
  };
}

/**
 * A point in time from the command line: ISO 8601 (`2026-11-29T14:55:34Z`; a date alone is
 * midnight UTC, and a time without offset is UTC too, so answers never depend on the machine's
 * time zone) or Unix milliseconds. Null when it is neither.
 */
export function parseTimePoint(text: string): number | null {
  const trimmed = text.trim();
  if (/^\d+$/.test(trimmed)) {
    const millis = Number(trimmed);
    return Number.isSafeInteger(millis) ? millis : null;
  }
  if (!/^\d{4}-\d{2}-\d{2}/.test(trimmed)) return null;
  const hasTime = trimmed.length > 10;
  const hasZone = /(Z|[+-]\d{2}:?\d{2})$/i.test(trimmed);
  const millis = Date.parse(hasTime && !hasZone ? `${trimmed}Z` : trimmed);
  return Number.isNaN(millis) ? null : millis;
}
