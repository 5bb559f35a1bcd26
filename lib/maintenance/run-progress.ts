/**
 * A budget-stopped run's progress, saved under `_lakewarden/runs/progress/` so the next run
 * resumes instead of starting over:
 *   progress.json           which chain, when it began, the latest version it read at its start,
 *                           the listing cursor, and the segment files below (written last);
 *   {runKey}.scan.json      version files a run read (Lance manifests are immutable: a file read
 *                           once need not be read again while its key still lists);
 *   {runKey}.listing.json   objects a run listed, in order, up to the cursor (keys, sizes and
 *                           modification times, in columns);
 *   {runKey}.deleted.json   keys a run deleted.
 * Each run writes only what it added. A segment whose progress.json never came is an orphan,
 * removed with the rest when a run completes.
 *
 * What is saved is never trusted for a decision: a resumed run lists the version files again
 * and reads the new ones, reads refs and the latest version again, decides every version again,
 * plans every listed file against the fresh decisions, and re-plans right before deleting as
 * every run does. Saved listings only spare it listing again; a file written into the part
 * already listed is simply not a candidate in this chain (the next one sees it).
 */
import type { VersionFile } from "../formats/table-format.ts";
import { RUN_PROGRESS_KEY, RUN_PROGRESS_PREFIX } from "../model/layout.ts";
import type { VersionRecord } from "../model/version-record.ts";
import type { ObjectInfo, ObjectStore } from "../store/object-store.ts";
import type { ListedObjects, ListingCursor } from "./listing.ts";
import { CompactListing } from "./listing.ts";
import type { ManifestScan, ScannedVersion } from "./process-manifests.ts";

/** Progress older than this is dropped and the run starts over (a chain runs back to back). */
export const MAX_PROGRESS_AGE_MS = 24 * 3_600_000;
const FORMAT = 1;

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
  references: ScannedVersion["references"];
  unresolved: ScannedVersion["unresolved"];
  config: Record<string, string>;
}

/**
 * A listing segment in columns: a resumed run reads a million objects back without a JSON array
 * (and an ETag string) per object. Segments of the older shape, one array per object, still load.
 */
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
  /** Listed objects, minus the keys deleted since. */
  listed: CompactListing;
  cursor: ListingCursor;
  deleted: Set<string>;
  /** The segment files progress.json names (a stopping run extends the list). */
  segments: { scan: string[]; listing: string[]; deleted: string[] };
}

export interface LoadedProgress {
  saved: SavedProgress | null;
  /** Why saved progress was not used (stale, unreadable), for a warning. */
  problem: string | null;
}

export async function loadProgress(store: ObjectStore, files: readonly ObjectInfo[], now: Date): Promise<LoadedProgress> {
  if (!files.some((f) => f.key === RUN_PROGRESS_KEY)) return { saved: null, problem: null };
  try {
    const body = await getJson<ProgressBody>(store, RUN_PROGRESS_KEY);
    if (body.format !== FORMAT) return { saved: null, problem: `saved cleanup progress has format ${body.format}, not ${FORMAT}: starting over` };
    const startedAt = new Date(body.started_at);
    if (!(now.getTime() - startedAt.getTime() <= MAX_PROGRESS_AGE_MS)) {
      return { saved: null, problem: `saved cleanup progress from ${body.started_at} is older than a day: starting over` };
    }
    const scan: ManifestScan = new Map();
    for (const key of body.segments.scan) {
      for (const entry of await getJson<ScanEntryJson[]>(store, key)) {
        const file: VersionFile = { version: entry.file.version, key: entry.file.key, size: entry.file.size, etag: entry.file.etag, lastModified: new Date(entry.file.last_modified), ...(entry.file.id !== undefined ? { id: entry.file.id } : {}) };
        scan.set(file.version, { file, record: entry.record, references: entry.references, unresolved: entry.unresolved, config: entry.config, round: 0 });
      }
    }
    const deleted = new Set<string>();
    for (const key of body.segments.deleted) for (const k of await getJson<string[]>(store, key)) deleted.add(k);
    const listed = new CompactListing();
    for (const key of body.segments.listing) {
      const segment = await getJson<ListingSegment | [string, number, string, number][]>(store, key);
      if (Array.isArray(segment)) {
        // Written before listings were saved in columns: one [key, size, etag, mtime] array per object.
        for (const [k, size, , millis] of segment) if (!deleted.has(k)) listed.add(k, size, millis);
        continue;
      }
      const { keys, sizes, mtimes } = segment;
      for (let i = 0; i < keys.length; i++) if (!deleted.has(keys[i]!)) listed.add(keys[i]!, sizes[i]!, mtimes[i]!);
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
        deleted,
        segments: body.segments,
      },
      problem: null,
    };
  } catch (error) {
    return { saved: null, problem: `saved cleanup progress unreadable, starting over: ${(error as Error).message}` };
  }
}

/** What a stopping run adds to the chain's progress. */
export interface ProgressUpdate {
  runKey: string;
  chainId: string;
  chainStartedAt: Date;
  latestAtStart: number;
  scan: ManifestScan | null;
  listedNow: ListedObjects;
  cursor: ListingCursor | null;
  deletedNow: readonly string[];
  now: Date;
}

/** Writes the new segments, then progress.json naming them all. Returns progress.json's key. */
export async function saveProgress(store: ObjectStore, previous: SavedProgress | null, update: ProgressUpdate): Promise<string> {
  const segments = { scan: [...(previous?.segments.scan ?? [])], listing: [...(previous?.segments.listing ?? [])], deleted: [...(previous?.segments.deleted ?? [])] };
  const known = previous?.scan ?? new Map();
  const newScan: ScanEntryJson[] = [];
  for (const [version, scanned] of update.scan ?? []) {
    if (known.get(version)?.file.key === scanned.file.key) continue;
    const { file } = scanned;
    newScan.push({
      file: { version: file.version, key: file.key, size: file.size, etag: file.etag, last_modified: file.lastModified.toISOString(), ...(file.id !== undefined ? { id: file.id } : {}) },
      record: scanned.record,
      references: scanned.references,
      unresolved: scanned.unresolved,
      config: scanned.config,
    });
  }
  const segment = (kind: string) => `${RUN_PROGRESS_PREFIX}${update.runKey}.${kind}.json`;
  if (newScan.length > 0) segments.scan.push(await putJson(store, segment("scan"), newScan));
  if (update.listedNow.length > 0) {
    const columns: ListingSegment = { keys: [], sizes: [], mtimes: [] };
    for (const o of update.listedNow) {
      columns.keys.push(o.key);
      columns.sizes.push(o.size);
      columns.mtimes.push(o.lastModified.getTime());
    }
    segments.listing.push(await putJson(store, segment("listing"), columns));
  }
  if (update.deletedNow.length > 0) segments.deleted.push(await putJson(store, segment("deleted"), update.deletedNow));
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
  return putJson(store, RUN_PROGRESS_KEY, body);
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
