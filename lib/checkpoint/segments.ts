/**
 * Archive segments: history rows a checkpoint could no longer hold (past `max_entries`), in
 * `_lakewarden/archive/{first:020}-{last:020}.arrow`, in the checkpoint's own file format.
 * A segment is written create-only before the checkpoint that drops its rows, so a crash in
 * between leaves the rows in both places, never in neither. Segments are never pruned: they
 * are the history itself. `is_cleaned_up` and `is_tagged` are facts of the moment, so readers
 * derive them again (the timeline does); a segment's rows are otherwise immutable.
 */
import type { ObjectStore } from "../store/object-store.ts";
import { PreconditionFailedError } from "../store/errors.ts";
import { ARCHIVE_PREFIX } from "../model/layout.ts";
import type { VersionRecord } from "../model/version-record.ts";
import { decodeCheckpoint, encodeCheckpoint } from "./codec.ts";
import { CorruptCheckpointError } from "./errors.ts";

const SEGMENT_NAME = /^(\d{20})-(\d{20})\.arrow$/;

export interface SegmentFile {
  key: string;
  first: number;
  last: number;
}

export function segmentKey(first: number, last: number): string {
  return `${ARCHIVE_PREFIX}${String(first).padStart(20, "0")}-${String(last).padStart(20, "0")}.arrow`;
}

export function parseSegmentKey(key: string): SegmentFile | null {
  if (!key.startsWith(ARCHIVE_PREFIX)) return null;
  const match = SEGMENT_NAME.exec(key.slice(ARCHIVE_PREFIX.length));
  if (!match) return null;
  const first = Number(match[1]);
  const last = Number(match[2]);
  return Number.isSafeInteger(first) && Number.isSafeInteger(last) && first <= last ? { key, first, last } : null;
}

export async function listSegments(store: ObjectStore): Promise<SegmentFile[]> {
  const segments: SegmentFile[] = [];
  for await (const object of store.list(ARCHIVE_PREFIX, { delimiter: "/" })) {
    const parsed = parseSegmentKey(object.key);
    if (parsed) segments.push(parsed);
  }
  return segments.sort((a, b) => a.first - b.first);
}

/**
 * Writes `rows` (ascending) as one segment; a segment of that name already there (a retried
 * run) is kept as it is: rows are immutable, so the first write stands.
 */
export async function writeSegment(store: ObjectStore, rows: readonly VersionRecord[], tableFormat: string, nowMillis: number): Promise<string | null> {
  if (rows.length === 0) return null;
  const first = rows[0]!.version;
  const last = rows.at(-1)!.version;
  const key = segmentKey(first, last);
  const body = encodeCheckpoint({
    version: last,
    records: [...rows],
    createdAtMillis: nowMillis,
    datasetCreatedAtMillis: null,
    datasetCreatedFromVersion: null,
    tableFormat,
    archiveSegments: [],
  });
  try {
    await store.put(key, body, { ifNoneMatch: "*", contentType: "application/vnd.apache.arrow.file" });
  } catch (error) {
    if (!(error instanceof PreconditionFailedError)) throw error;
  }
  return key;
}

export interface ArchivedHistory {
  records: VersionRecord[];
  segments: SegmentFile[];
}

/**
 * Rows of the given segments (the checkpoint names them; by default every segment listed)
 * whose range reaches `since` or later, ascending. A corrupt or missing segment is an error
 * naming it: falling back past it would silently lose history.
 */
export async function readArchivedHistory(
  store: ObjectStore,
  options: { since?: number; keys?: readonly string[] } = {},
): Promise<ArchivedHistory> {
  const known = options.keys ? options.keys.map((key) => parseSegmentKey(key)) : await listSegments(store);
  const segments = known
    .filter((s): s is SegmentFile => s !== null)
    .filter((s) => options.since === undefined || s.last >= options.since)
    .sort((a, b) => a.first - b.first);
  const byVersion = new Map<number, VersionRecord>();
  for (const segment of segments) {
    const { body } = await store.get(segment.key);
    const uri = store.uriOf(segment.key);
    const content = decodeCheckpoint(body, uri);
    for (const record of content.records) {
      if (record.version < segment.first || record.version > segment.last) {
        throw new CorruptCheckpointError(uri, `holds version ${record.version}, outside the range ${segment.first}-${segment.last} its name gives`);
      }
      byVersion.set(record.version, record);
    }
  }
  return { records: [...byVersion.values()].sort((a, b) => a.version - b.version), segments };
}
