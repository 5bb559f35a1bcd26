/**
 * A budget-stopped run's progress, saved under `_lakewarden/runs/progress/` so the next run
 * resumes instead of starting over:
 *   progress.json           which chain, when it began, the latest version it read at its start,
 *                           the listing cursor, and the segment files below (written last);
 *   {runKey}.scan-N.json    version files a run read (Lance manifests are immutable: a file read
 *                           once need not be read again while its key still lists), in segments
 *                           of about segmentItems() references;
 *   {runKey}.listing-N.json objects listed and not deleted yet, in order, up to the cursor
 *                           (keys, sizes and modification times, in columns), at most
 *                           segmentItems() a file: a run that only listed adds what it listed; a
 *                           run that deleted writes the whole remaining listing anew, so a
 *                           resumed run never needs the deleted keys to know what is left;
 *   {runKey}.deleted-N.json keys a run deleted (read back only by the post-delete check).
 * A segment whose progress.json never came (or that a newer progress.json no longer names) is an
 * orphan, removed with the rest when a run completes.
 *
 * What is saved is never trusted for a decision: a resumed run lists the version files again
 * and reads the new ones, reads refs and the latest version again, decides every version again,
 * plans every listed file against the fresh decisions, and re-plans right before deleting as
 * every run does. Saved listings only spare it listing again; a file written into the part
 * already listed is simply not a candidate in this chain (the next one sees it).
 */
import type { FileReference, VersionFile } from "../formats/table-format.ts";
import { RUN_PROGRESS_KEY, RUN_PROGRESS_PREFIX, runProgressSegmentKey } from "../model/layout.ts";
import type { VersionRecord } from "../model/version-record.ts";
import type { ObjectInfo, ObjectStore } from "../store/object-store.ts";
import type { ListingCursor } from "./listing.ts";
import { CompactListing } from "./listing.ts";
import type { ManifestScan, ScannedVersion } from "./process-manifests.ts";
import type { SpillArea } from "./spill.ts";
import { inChunks, partItemsFromEnvironment } from "./spill.ts";
import { ReferenceTable } from "./version-references.ts";

/** Progress older than this is dropped and the run starts over (a chain runs back to back). */
export const MAX_PROGRESS_AGE_MS = 24 * 3_600_000;
/** 2: listing segments hold what is left (1: the listing minus the deleted segments). */
const FORMAT = 2;
/** Objects or keys a segment file holds at most (65,536): a resumed run reads one segment at a time. */
export function segmentItems(): number {
  return partItemsFromEnvironment();
}

interface ProgressBody {
  format: number;
  chain_id: string;
  started_at: string;
  updated_at: string;
  /** Runs of the chain that saved progress so far. */
  runs: number;
  latest_at_start: number;
  cursor: { prefix_index: number; after: string | null; done: boolean };
  segments: { scan: string[]; listing: string[]; deleted: string[] };
}

interface ScanEntryJson {
  file: { version: number; id?: string; key: string; size: number; etag: string; last_modified: string };
  record: VersionRecord;
  references: FileReference[];
  unresolved: ScannedVersion["unresolved"];
  config: Record<string, string>;
}

/** A listing segment in columns: a resumed run reads objects back without a JSON array (and an ETag string) per object. */
interface ListingSegment {
  keys: string[];
  sizes: number[];
  mtimes: number[];
}

/** What the chain had done when the last run stopped. */
export interface SavedProgress {
  chainId: string;
  startedAt: Date;
  runs: number;
  latestAtStart: number;
  scan: ManifestScan;
  /** Listed objects not deleted yet, in listing order (a page at a time when loaded with a spill area). */
  listed: CompactListing;
  cursor: ListingCursor;
  /** The segment files progress.json names (a stopping run extends or replaces them). */
  segments: { scan: string[]; listing: string[]; deleted: string[] };
}

export interface LoadedProgress {
  saved: SavedProgress | null;
  /** Why saved progress was not used (stale, unreadable), for a warning. */
  problem: string | null;
}

export async function loadProgress(store: ObjectStore, files: readonly ObjectInfo[], now: Date, spill: SpillArea | null = null): Promise<LoadedProgress> {
  if (!files.some((f) => f.key === RUN_PROGRESS_KEY)) return { saved: null, problem: null };
  try {
    const body = await getJson<ProgressBody>(store, RUN_PROGRESS_KEY);
    if (body.format !== FORMAT) return { saved: null, problem: `saved cleanup progress has format ${body.format}, not ${FORMAT}: starting over` };
    const startedAt = new Date(body.started_at);
    if (!(now.getTime() - startedAt.getTime() <= MAX_PROGRESS_AGE_MS)) {
      return { saved: null, problem: `saved cleanup progress from ${body.started_at} is older than a day: starting over` };
    }
    const scan: ManifestScan = new Map();
    const table = new ReferenceTable();
    for (const key of body.segments.scan) {
      for (const entry of await getJson<ScanEntryJson[]>(store, key)) {
        const file: VersionFile = {
          version: entry.file.version,
          key: entry.file.key,
          size: entry.file.size,
          etag: entry.file.etag,
          lastModified: new Date(entry.file.last_modified),
          ...(entry.file.id !== undefined ? { id: entry.file.id } : {}),
        };
        scan.set(file.version, { file, record: entry.record, references: table.encode(entry.references), unresolved: entry.unresolved, config: entry.config, round: 0 });
      }
    }
    const listed = new CompactListing(spill);
    for (const key of body.segments.listing) {
      const { keys, sizes, mtimes } = await getJson<ListingSegment>(store, key);
      for (let i = 0; i < keys.length; i++) listed.add(keys[i]!, sizes[i]!, mtimes[i]!);
    }
    return {
      saved: {
        chainId: body.chain_id,
        startedAt,
        runs: body.runs,
        latestAtStart: body.latest_at_start,
        scan: new Map([...scan.entries()].sort((a, b) => a[0] - b[0])),
        listed,
        cursor: { prefixIndex: body.cursor.prefix_index, after: body.cursor.after, done: body.cursor.done },
        segments: body.segments,
      },
      problem: null,
    };
  } catch (error) {
    return { saved: null, problem: `saved cleanup progress unreadable, starting over: ${(error as Error).message}` };
  }
}

/** The keys the chain's earlier runs deleted, a segment at a time. */
export async function* deletedEarlier(store: ObjectStore, saved: Pick<SavedProgress, "segments">): AsyncIterable<string> {
  for (const key of saved.segments.deleted) yield* await getJson<string[]>(store, key);
}

/** What a stopping run adds to the chain's progress. */
export interface ProgressUpdate {
  runKey: string;
  chainId: string;
  chainStartedAt: Date;
  latestAtStart: number;
  scan: ManifestScan | null;
  /**
   * What this run listed, to add to the saved listing (`added`); or, once the run deleted, the
   * whole listing minus what was deleted (`remaining`), which replaces it.
   */
  listing: { added: Iterable<ObjectInfo> } | { remaining: Iterable<ObjectInfo> };
  cursor: ListingCursor | null;
  deletedNow: Iterable<string>;
  now: Date;
}

/** Writes the new segments, then progress.json naming them all. Returns progress.json's key. */
export async function saveProgress(store: ObjectStore, previous: SavedProgress | null, update: ProgressUpdate): Promise<string> {
  const replacing = "remaining" in update.listing;
  const segments = {
    scan: [...(previous?.segments.scan ?? [])],
    listing: replacing ? [] : [...(previous?.segments.listing ?? [])],
    deleted: [...(previous?.segments.deleted ?? [])],
  };
  const known = previous?.scan ?? new Map();
  const segment = (kind: string) => runProgressSegmentKey(update.runKey, kind);
  // Versions read, in segments of about segmentItems() references: a table of 100,000 fragments
  // names that many in every version, and one text of them all would not fit in a string.
  let scanPart: ScanEntryJson[] = [];
  let scanReferences = 0;
  let scanParts = 0;
  const flushScan = async () => {
    segments.scan.push(await putJson(store, segment(`scan-${scanParts++}`), scanPart));
    scanPart = [];
    scanReferences = 0;
  };
  for (const [version, scanned] of update.scan ?? []) {
    if (known.get(version)?.file.key === scanned.file.key) continue;
    const { file } = scanned;
    scanPart.push({
      file: {
        version: file.version,
        key: file.key,
        size: file.size,
        etag: file.etag,
        last_modified: file.lastModified.toISOString(),
        ...(file.id !== undefined ? { id: file.id } : {}),
      },
      record: scanned.record,
      references: scanned.references.list(),
      unresolved: scanned.unresolved,
      config: scanned.config,
    });
    scanReferences += scanned.references.length + 1;
    if (scanReferences >= segmentItems()) await flushScan();
  }
  if (scanPart.length > 0) await flushScan();
  const objects = "remaining" in update.listing ? update.listing.remaining : update.listing.added;
  let part = 0;
  for (const chunk of inChunks(objects, segmentItems())) {
    const columns: ListingSegment = { keys: [], sizes: [], mtimes: [] };
    for (const o of chunk) {
      columns.keys.push(o.key);
      columns.sizes.push(o.size);
      columns.mtimes.push(o.lastModified.getTime());
    }
    segments.listing.push(await putJson(store, segment(`listing-${part++}`), columns));
  }
  part = 0;
  for (const chunk of inChunks(update.deletedNow, segmentItems())) segments.deleted.push(await putJson(store, segment(`deleted-${part++}`), chunk));
  const cursor = update.cursor ?? previous?.cursor ?? { prefixIndex: 0, after: null, done: false };
  const body: ProgressBody = {
    format: FORMAT,
    chain_id: update.chainId,
    started_at: update.chainStartedAt.toISOString(),
    updated_at: update.now.toISOString(),
    runs: (previous?.runs ?? 0) + 1,
    latest_at_start: update.latestAtStart,
    cursor: { prefix_index: cursor.prefixIndex, after: cursor.after, done: cursor.done },
    segments,
  };
  const key = await putJson(store, RUN_PROGRESS_KEY, body);
  if (replacing && previous) {
    // The replaced listing segments: no progress.json names them now (orphans otherwise, removed when the chain completes).
    const named = new Set(segments.listing);
    await store.deleteMany(previous.segments.listing.filter((k) => !named.has(k))).catch(() => undefined);
  }
  return key;
}

/** Removes every progress file (progress.json first, so no reader sees a half-removed chain). */
export async function clearProgress(store: ObjectStore): Promise<number> {
  const keys: string[] = [];
  for await (const object of store.list(RUN_PROGRESS_PREFIX)) keys.push(object.key);
  if (keys.length === 0) return 0;
  const first = await store.deleteMany(keys.filter((k) => k === RUN_PROGRESS_KEY));
  if (first.failed.length > 0) return 0;
  const rest = await store.deleteMany(keys.filter((k) => k !== RUN_PROGRESS_KEY));
  return keys.length - rest.failed.length;
}

async function getJson<T>(store: ObjectStore, key: string): Promise<T> {
  const { body } = await store.get(key);
  return JSON.parse(new TextDecoder().decode(body)) as T;
}

async function putJson(store: ObjectStore, key: string, value: unknown): Promise<string> {
  await store.put(key, new TextEncoder().encode(JSON.stringify(value)), { contentType: "application/json" });
  return key;
}
