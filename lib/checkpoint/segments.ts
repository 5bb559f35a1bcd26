/**
 * Archive segments: history rows a checkpoint could no longer hold (past `max_entries`), in
 * `_lakewarden/archive/{first:020}-{last:020}.arrow`, in the checkpoint's own file format.
 * A segment is written create-only before the checkpoint that drops its rows, so a crash in
 * between leaves the rows in both places, never in neither. Segments are never pruned: they
 * are the history itself. `is_cleaned_up` and `is_tagged` are facts of the moment, so readers
 * derive them again (the timeline does); a segment's rows are otherwise immutable.
 */
import type { ObjectStore } from "../store/object-store.ts";
import { NotFoundError, PreconditionFailedError } from "../store/errors.ts";
import { ARCHIVE_PREFIX, parseSegmentKey, segmentKey, type SegmentFile } from "../model/layout.ts";
import type { VersionRecord } from "../model/version-record.ts";
import { decodeCheckpoint, encodeCheckpoint } from "./codec.ts";
import { CorruptCheckpointError } from "./errors.ts";
import { setAside } from "./damaged.ts";
import type { DamageNote } from "./damaged.ts";

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
 * run) is kept as it is: rows are immutable, so the first write stands. Unless it cannot be read:
 * then its bytes are set aside under `_lakewarden/damaged/` and these rows take its place
 * (`setAside` then says where it went).
 */
export async function writeSegment(
  store: ObjectStore,
  rows: readonly VersionRecord[],
  tableFormat: string,
  nowMillis: number,
  onSetAside?: (note: DamageNote) => void,
): Promise<string | null> {
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
  const options = { contentType: "application/vnd.apache.arrow.file" };
  try {
    await store.put(key, body, { ...options, ifNoneMatch: "*" });
    return key;
  } catch (error) {
    if (!(error instanceof PreconditionFailedError)) throw error;
  }
  const problem = await segmentProblem(store, key);
  if (problem === null) return key;
  const kept = await setAside(store, key, problem, nowMillis);
  // On the ETag copied: a segment rewritten since is left to the writer that rewrote it.
  if (kept.etag !== null) await store.put(key, body, { ...options, ifMatch: kept.etag }).catch(ignorePrecondition);
  else await store.put(key, body, { ...options, ifNoneMatch: "*" }).catch(ignorePrecondition);
  onSetAside?.({ file: key, set_aside: kept.key, problem, covered: { from: first, through: last }, found_at_millis: nowMillis });
  return key;
}

function ignorePrecondition(error: unknown): void {
  if (!(error instanceof PreconditionFailedError)) throw error;
}

/** Why the segment under `key` cannot be read, or null when it reads whole. */
async function segmentProblem(store: ObjectStore, key: string): Promise<string | null> {
  try {
    await readSegment(store, parseSegmentKey(key)!);
    return null;
  } catch (error) {
    if (error instanceof CorruptCheckpointError) return error.message;
    if (error instanceof NotFoundError) return `${store.uriOf(key)}: missing`;
    throw error;
  }
}

async function readSegment(store: ObjectStore, segment: SegmentFile): Promise<VersionRecord[]> {
  const { body } = await store.get(segment.key);
  const uri = store.uriOf(segment.key);
  const content = decodeCheckpoint(body, uri);
  for (const record of content.records) {
    if (record.version < segment.first || record.version > segment.last) {
      throw new CorruptCheckpointError(uri, `holds version ${record.version}, outside the range ${segment.first}-${segment.last} its name gives`);
    }
  }
  return content.records;
}

export interface ArchivedHistory {
  records: VersionRecord[];
  /** The segments read whole. */
  segments: SegmentFile[];
  /** Segments that could not be read (corrupt, missing), with why: the caller reports them. */
  unreadable: { segment: SegmentFile; problem: string }[];
}

/**
 * Rows of the given segments (the checkpoint names them; by default every segment listed)
 * whose range reaches `since` or later, ascending. A corrupt or missing segment is returned in
 * `unreadable`, naming it, and the others are still read: the caller must say so, never fall
 * silently past it.
 */
export async function readArchivedHistory(store: ObjectStore, options: { since?: number; keys?: readonly string[] } = {}): Promise<ArchivedHistory> {
  const known = options.keys ? options.keys.map((key) => parseSegmentKey(key)) : await listSegments(store);
  const wanted = known
    .filter((s): s is SegmentFile => s !== null)
    .filter((s) => options.since === undefined || s.last >= options.since)
    .sort((a, b) => a.first - b.first);
  const byVersion = new Map<number, VersionRecord>();
  const segments: SegmentFile[] = [];
  const unreadable: ArchivedHistory["unreadable"] = [];
  for (const segment of wanted) {
    let records: VersionRecord[];
    try {
      records = await readSegment(store, segment);
    } catch (error) {
      if (error instanceof CorruptCheckpointError) unreadable.push({ segment, problem: error.message });
      else if (error instanceof NotFoundError) unreadable.push({ segment, problem: `${store.uriOf(segment.key)}: missing` });
      else throw error;
      continue;
    }
    segments.push(segment);
    for (const record of records) byVersion.set(record.version, record);
  }
  return { records: [...byVersion.values()].sort((a, b) => a.version - b.version), segments, unreadable };
}
