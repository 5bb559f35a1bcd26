/**
 * How a new checkpoint's history is built from the previous one and what a run saw: pure, so
 * every rule is testable alone.
 *   - history only grows: rows of the previous checkpoint are carried over;
 *   - a version whose version file no longer exists is `is_cleaned_up = true` (it was removed,
 *     by this run, an interrupted one, or anyone else), and so is one not in `liveVersions`
 *     whose file exists (Delta: VACUUM took its data); once cleaned up, always cleaned up;
 *   - `is_tagged` follows the tags as they are now;
 *   - at most `maxEntries` rows: past that the oldest move out (down to half, so archive
 *     segments stay few and large) into `overflow`, which the caller archives before it writes
 *     the checkpoint: history is never dropped;
 *   - the table's creation time survives even when version 1's row is long gone.
 */
import type { VersionRecord } from "../model/version-record.ts";
import { VERSION_RECORD_FIELDS } from "../model/version-record.ts";
import type { CheckpointContent, StoredProtection } from "./codec.ts";
import type { DamageNote } from "./damaged.ts";
import { encodeTransactionProperties } from "./properties.ts";

/** DESIGN.md: a checkpoint holds at most this many rows. */
export const DEFAULT_MAX_ENTRIES = 10_000;

export interface HistoryUpdate {
  previous: CheckpointContent | null;
  /** Records read from version files this run (their `is_cleaned_up` is recomputed). */
  records: readonly VersionRecord[];
  /** Every version whose version file exists now. */
  liveVersions: ReadonlySet<number>;
  /** Versions carrying a tag now. */
  taggedVersions: ReadonlySet<number>;
  nowMillis: number;
  tableFormat: string;
  maxEntries?: number;
  /** The protection state this run leaves (undefined: keep the previous checkpoint's). */
  protection?: StoredProtection | null;
  /** The damaged files this checkpoint remembers (undefined: the previous checkpoint's). */
  damaged?: readonly DamageNote[];
}

/** A checkpoint's content, and the oldest rows it no longer holds (to archive first). */
export interface MergedHistory extends CheckpointContent {
  overflow: VersionRecord[];
}

export function mergeHistory(update: HistoryUpdate): MergedHistory {
  const maxEntries = update.maxEntries ?? DEFAULT_MAX_ENTRIES;
  const rows = new Map<number, VersionRecord>();
  // Cleaned up stays cleaned up: a version whose data a cleanup took keeps its version file in
  // some formats (Delta: the commit outlives VACUUM), so the listing alone cannot say it.
  const cleanedBefore = new Set<number>();
  for (const row of update.previous?.records ?? []) {
    rows.set(row.version, row);
    if (row.is_cleaned_up) cleanedBefore.add(row.version);
  }
  // Fresh reads win: they come straight from the version file.
  for (const record of update.records) rows.set(record.version, record);

  const all = [...rows.values()]
    .sort((a, b) => a.version - b.version)
    .map((row) => ({
      ...row,
      is_cleaned_up: !update.liveVersions.has(row.version) || cleanedBefore.has(row.version),
      is_tagged: update.taggedVersions.has(row.version),
    }));
  const keep = all.length > maxEntries ? Math.ceil(maxEntries / 2) : all.length;
  const records = all.slice(all.length - keep);
  const overflow = all.slice(0, all.length - keep);

  const newest = all.at(-1)?.version ?? -1;
  const version = Math.max(update.previous?.version ?? 0, newest, 0);
  const creation = creationTime(update.previous, all[0] ?? null);
  return {
    version,
    records,
    createdAtMillis: update.nowMillis,
    datasetCreatedAtMillis: creation?.millis ?? null,
    datasetCreatedFromVersion: creation?.version ?? null,
    tableFormat: update.tableFormat,
    archiveSegments: [...(update.previous?.archiveSegments ?? [])],
    ...protectionAfter(update),
    ...damagedAfter(update),
    overflow,
  };
}

/** The protection state: this run's when it says one (null clears it), else the previous checkpoint's. */
function protectionAfter(update: HistoryUpdate): { protection?: StoredProtection } {
  const protection = update.protection !== undefined ? update.protection : update.previous?.protection;
  return protection ? { protection } : {};
}

function damagedAfter(update: HistoryUpdate): { damaged?: DamageNote[] } {
  const damaged = update.damaged ?? update.previous?.damaged ?? [];
  return damaged.length > 0 ? { damaged: [...damaged] } : {};
}

/** The earliest-version creation time known: the previous checkpoint's, or the oldest row's. */
function creationTime(previous: CheckpointContent | null, oldest: VersionRecord | null): { version: number; millis: number } | null {
  const fromPrevious =
    previous && previous.datasetCreatedFromVersion !== null && previous.datasetCreatedAtMillis !== null
      ? { version: previous.datasetCreatedFromVersion, millis: previous.datasetCreatedAtMillis }
      : null;
  const fromRows = oldest ? { version: oldest.version, millis: oldest.timestamp_millis } : null;
  if (fromPrevious && fromRows) return fromPrevious.version <= fromRows.version ? fromPrevious : fromRows;
  return fromPrevious ?? fromRows;
}

/** True when two histories say the same thing (the write time aside): no new checkpoint needed. */
export function sameHistory(a: CheckpointContent, b: CheckpointContent): boolean {
  if (a.version !== b.version || a.records.length !== b.records.length) return false;
  if (a.datasetCreatedAtMillis !== b.datasetCreatedAtMillis || a.datasetCreatedFromVersion !== b.datasetCreatedFromVersion) return false;
  if (JSON.stringify(a.protection ?? null) !== JSON.stringify(b.protection ?? null)) return false;
  if (JSON.stringify(a.archiveSegments) !== JSON.stringify(b.archiveSegments)) return false;
  if (JSON.stringify(a.damaged ?? []) !== JSON.stringify(b.damaged ?? [])) return false;
  return a.records.every((row, i) => rowKey(row) === rowKey(b.records[i]!));
}

/** Compares rows as stored (properties as their stored, possibly truncated, JSON). */
function rowKey(row: VersionRecord): string {
  return JSON.stringify(VERSION_RECORD_FIELDS.map((field) => (field === "transaction_properties" ? encodeTransactionProperties(row.transaction_properties) : row[field])));
}
