/**
 * The timeline: every version a table has had, removed ones included. Built from
 *   0. archive segments: rows older checkpoints could no longer hold (read only when the
 *      caller wants versions older than the checkpoint's oldest row),
 *   1. the newest checkpoint that loads (history up to its version, removed versions too),
 *   2. versions some other source already holds (the head object's "versions since the last
 *      checkpoint": lib/head/timeline-source.ts passes them as `recent`),
 *   3. the version files neither covers (normally only the ones newer than the checkpoint).
 * The listing of version files decides `is_cleaned_up`: a version whose file is gone is
 * cleaned up, whatever an older checkpoint said; and one a checkpoint marked cleaned up stays so
 * (a Delta commit outlives the VACUUM that took its data). Tags as they are now decide `is_tagged`.
 */
import type { LoadedCheckpoint, StoredCheckpoint, SkippedCheckpoint } from "../checkpoint/load.ts";
import type { CheckpointFile } from "../checkpoint/load.ts";
import { checkpointFilesIn, loadNewestCheckpoint, readCheckpoint } from "../checkpoint/load.ts";
import { CorruptCheckpointError } from "../checkpoint/errors.ts";
import { CHECKPOINTS_PREFIX, checkpointKey, parseCheckpointKey } from "../model/layout.ts";
import { listSegments, readArchivedHistory } from "../checkpoint/segments.ts";
import { checkpointCoverage, readSetAside, soundFirstVersion, unlistedRanges } from "../checkpoint/damaged.ts";
import type { CoveredVersions, HistoryProblem } from "../checkpoint/damaged.ts";
import { ARCHIVE_PREFIX } from "../model/layout.ts";
import type { ListedVersion, Refs, TableFormat, VersionFile } from "../formats/table-format.ts";
import type { ObjectStore } from "../store/object-store.ts";
import { NotFoundError } from "../store/errors.ts";
import { DEFAULT_READ_CONCURRENCY } from "./read-version-records.ts";
import { mainBranchTaggedVersions } from "../model/refs.ts";
import type { VersionRecord } from "../model/version-record.ts";
import { objectExists } from "../store/object-exists.ts";

/** Records another source already holds, e.g. the head's versions after the newest checkpoint. */
export interface KnownVersions {
  records: readonly VersionRecord[];
  /** For reports: where they came from ("head"). */
  source: string;
  /**
   * What the source says about where its records start: the checkpoint they follow, written
   * for `version` (whose version file was `versionFile`). Lets `checkpointFromRecent` read
   * that checkpoint without listing the checkpoints.
   */
  boundary?: RecentBoundary;
}

export interface RecentBoundary {
  /** The checkpoint version the records follow (null: none). */
  checkpoint: number | null;
  /** The table version the source describes. */
  version: number;
  versionFile: Pick<VersionFile, "key" | "size" | "etag">;
}

export interface TimelineOptions {
  /** Version files already listed; saves the LIST. */
  versionFiles?: readonly VersionFile[];
  /** Or their keys (listVersions); saves the LIST too. */
  versionKeys?: readonly ListedVersion[];
  refs?: Refs;
  /** Records from another source (the head), or their promise; their version files are not read again. */
  recent?: KnownVersions | Promise<KnownVersions | null>;
  /** Only versions at or after this one (archive segments wholly older are not read). */
  since?: number;
  concurrency?: number;
  /** The newest checkpoint, already loaded (saves its LIST and GET). */
  checkpoint?: LoadedCheckpoint;
  /**
   * Read the checkpoint `recent` names (its boundary) instead of listing the checkpoints, when
   * that provably gives the same history (see checkpointNamedByRecent); else list as usual.
   */
  checkpointFromRecent?: boolean;
}

export interface Timeline {
  /** Every known version, ascending. */
  records: VersionRecord[];
  /** The checkpoint used, or null (none, or none loadable). */
  checkpoint: StoredCheckpoint | null;
  /** Newer checkpoint files that did not load, with why (the timeline fell back past them). */
  skippedCheckpoints: SkippedCheckpoint[];
  /**
   * Files of lakewarden's own history that could not be read (a checkpoint fallen back past or
   * missing, an archive segment, a damaged file a checkpoint remembers), with the versions they
   * covered and which of those nothing lists now. Empty on a healthy history.
   */
  historyProblems: HistoryProblem[];
  /** Versions whose version file exists now. */
  liveVersions: Set<number>;
  /** The refs the flags were taken from. */
  refs: Refs;
  /** How many records came from each source. */
  sources: { archive: number; checkpoint: number; recent: number; manifests: number };
}

export interface TimelineParts {
  archivedRecords?: readonly VersionRecord[];
  checkpointRecords: readonly VersionRecord[];
  recent: readonly VersionRecord[];
  manifestRecords: readonly VersionRecord[];
  liveVersions: ReadonlySet<number>;
  taggedVersions: ReadonlySet<number>;
}

/** Pure merge: later sources win for the same version (manifests are the ground truth). */
export function mergeTimeline(parts: TimelineParts): VersionRecord[] {
  const byVersion = new Map<number, VersionRecord>();
  for (const source of [parts.archivedRecords ?? [], parts.checkpointRecords, parts.recent, parts.manifestRecords]) {
    for (const record of source) byVersion.set(record.version, record);
  }
  return [...byVersion.values()]
    .sort((a, b) => a.version - b.version)
    .map((record) => ({
      ...record,
      is_tagged: parts.taggedVersions.has(record.version),
      // A record lakewarden's history marked cleaned up stays so with its version file kept (Delta: VACUUM took its data).
      is_cleaned_up: !parts.liveVersions.has(record.version) || record.is_cleaned_up,
    }));
}

/** Reads of a timeline whose version files vanished while it read (a cleanup removing them) before it gives up. */
const TIMELINE_ATTEMPTS = 3;

/**
 * A version file listed and then removed before it was read means a cleanup removed its version
 * meanwhile; cleanup writes a removed version's history to the checkpoint before its first file
 * goes, so reading again (checkpoint and listing afresh) finds it there.
 */
export async function readTimeline(store: ObjectStore, format: TableFormat, options: TimelineOptions = {}): Promise<Timeline> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await readTimelineOnce(
        store,
        format,
        attempt === 1 ? options : { ...options, versionFiles: undefined, versionKeys: undefined, refs: undefined, checkpoint: undefined },
      );
    } catch (error) {
      if (!(error instanceof NotFoundError) || attempt >= TIMELINE_ATTEMPTS) throw error;
    }
  }
}

async function readTimelineOnce(store: ObjectStore, format: TableFormat, options: TimelineOptions): Promise<Timeline> {
  const givenVersions = options.versionFiles ? options.versionFiles.map(listedFile) : options.versionKeys;
  // Neither given: one listing for both where the format has one, and for the checkpoints too when it can.
  const both = !givenVersions && !options.refs ? listVersionsAndRefs(store, format, { withCheckpoints: !options.checkpoint }) : null;
  const listed = givenVersions ? Promise.resolve(givenVersions) : both ? both.then((b) => b.versionKeys) : listVersions(store, format);
  const refsRead = options.refs ?? (both ? both.then((b) => b.refs) : format.readRefs(store));
  const knownSoon = Promise.resolve(options.recent ?? null);
  const newestOtherwise = (): Promise<LoadedCheckpoint> =>
    options.checkpointFromRecent
      ? knownSoon.then(async (known) => (await checkpointNamedByRecent(store, known, listed)) ?? loadNewestCheckpoint(store))
      : loadNewestCheckpoint(store);
  const newest = options.checkpoint
    ? Promise.resolve(options.checkpoint)
    : both
      ? both.then((b) => (b.checkpointFiles ? loadNewestCheckpoint(store, b.checkpointFiles) : newestOtherwise()))
      : newestOtherwise();
  // Settled together: a rejection of one is not left unhandled while another is awaited.
  const [loaded, versionFiles, refs, known] = await Promise.all([newest, listed, refsRead, knownSoon]);
  const checkpoint = loaded.checkpoint;
  const checkpointRecords = checkpoint?.records ?? [];
  const missing = missingNamedCheckpoint(store, known, loaded);
  const unreadableCheckpoints = missing ? [...loaded.skipped, missing] : loaded.skipped;
  const notes = checkpoint?.damaged ?? [];
  // Only on a damaged history (no cost otherwise): every segment listed, not only those the
  // checkpoint names, since one the damaged checkpoint wrote may hold what the fallback lacks.
  const damaged = unreadableCheckpoints.length > 0 || notes.length > 0;
  const listedSegments = damaged ? await listSegments(store) : [];
  // Segments hold only what is older than the checkpoint's oldest row: read them only when wanted.
  const oldestInCheckpoint = checkpointRecords[0]?.version;
  const segments = [...new Set([...(checkpoint?.archiveSegments ?? []), ...listedSegments.map((s) => s.key)])];
  const wantsOlder = segments.length > 0 && (damaged || options.since === undefined || oldestInCheckpoint === undefined || options.since < oldestInCheckpoint);
  const archive = wantsOlder
    ? await readArchivedHistory(store, { keys: segments, ...(options.since === undefined ? {} : { since: options.since }) })
    : { records: [], segments: [], unreadable: [] };
  const setAside = await Promise.all(notes.map(async (note) => ({ note, now: await readSetAside(store, note) })));
  // A file set aside and repaired in place since: its rows serve again (the next writer merges them back).
  const repaired = setAside.flatMap(({ now }) => (now.state === "repaired" ? now.content.records : []));
  const archived = repaired.length > 0 ? [...repaired, ...archive.records] : archive.records;
  const recent = known?.records ?? [];
  const covered = new Set([...checkpointRecords, ...recent].map((r) => r.version));
  // Metadata only for the files read (normally none): a listed file gone since was removed by a
  // cleanup meanwhile, which readTimeline answers by reading again.
  const toRead = versionFiles.filter((listed) => !covered.has(listed.version)).map((listed) => listed.file() ?? vanished(store, listed));
  const manifestRecords = toRead.length > 0 ? await format.readRecords(store, toRead, { concurrency: options.concurrency ?? DEFAULT_READ_CONCURRENCY }) : [];
  const liveVersions = new Set(versionFiles.map((file) => file.version));
  const merged = mergeTimeline({
    archivedRecords: archived,
    checkpointRecords,
    recent,
    manifestRecords,
    liveVersions,
    taggedVersions: mainBranchTaggedVersions(refs),
  });
  const records = options.since === undefined ? merged : merged.filter((record) => record.version >= options.since!);
  const servedBy = [...(checkpoint ? [checkpoint.key] : []), ...archive.segments.map((s) => s.key), ...(recent.length > 0 ? ["head"] : []), "version files"];
  const problem = (file: string, role: HistoryProblem["role"], text: string, covered: CoveredVersions, setAsideAt: string | null): HistoryProblem => ({
    file,
    role,
    problem: text,
    covered,
    unlisted: unlistedRanges(
      covered,
      merged.map((r) => r.version),
    ),
    set_aside: setAsideAt,
    served_by: servedBy,
  });
  const historyProblems = [
    ...unreadableCheckpoints.map((s) =>
      problem(s.key, "checkpoint", s.problem, checkpointCoverage(s.key, listedSegments, soundFirstVersion(checkpoint)) ?? { from: null, through: Number.MAX_SAFE_INTEGER }, null),
    ),
    ...archive.unreadable.map((u) => problem(u.segment.key, "archive segment", u.problem, { from: u.segment.first, through: u.segment.last }, null)),
    ...setAside
      .filter(({ now }) => now.state === "damaged")
      .map(({ note }) => problem(note.file, note.file.startsWith(ARCHIVE_PREFIX) ? "archive segment" : "checkpoint", note.problem, note.covered, note.set_aside)),
  ];
  return {
    records,
    checkpoint,
    skippedCheckpoints: loaded.skipped,
    historyProblems,
    liveVersions,
    refs,
    sources: { archive: archived.length, checkpoint: checkpointRecords.length, recent: recent.length, manifests: manifestRecords.length },
  };
}

/**
 * The checkpoint the head says its versions follow, when no checkpoint at or above it was listed:
 * a missing checkpoint (checkpoints are pruned oldest first, the newest never), or null.
 */
function missingNamedCheckpoint(store: ObjectStore, known: KnownVersions | null, loaded: LoadedCheckpoint): SkippedCheckpoint | null {
  const named = known?.boundary?.checkpoint;
  if (named === null || named === undefined) return null;
  if ((loaded.checkpoint?.version ?? -1) >= named) return null;
  if (loaded.skipped.some((s) => (parseCheckpointKey(s.key) ?? -1) >= named)) return null;
  const key = checkpointKey(named);
  return { key, problem: `${store.uriOf(key)}: missing (the head names it as the checkpoint its versions follow)` };
}

/**
 * The table's live version files as listed, ascending: by key alone when the format can list so
 * (no stat per file on a local disk), the metadata of each on demand.
 */
export async function listVersions(store: ObjectStore, format: TableFormat): Promise<ListedVersion[]> {
  return format.listVersionKeys(store);
}

/** The version files as listVersions gives them and the refs: in one listing when the format can (Lance). */
export interface ListedVersionsAndRefs {
  versionKeys: ListedVersion[];
  refs: Refs;
  /** The checkpoint files, when the same listing covered them (see withCheckpoints). */
  checkpointFiles?: CheckpointFile[];
}

/**
 * The version files as listVersions gives them and the refs: in one listing when the format
 * can (Lance). `withCheckpoints`: start that listing at `_lakewarden/checkpoints/` when the
 * format can, so it lists the checkpoints too (every other key of ours after them as well:
 * config, format, head, lease, pins, runs; a handful).
 */
export async function listVersionsAndRefs(store: ObjectStore, format: TableFormat, options: { withCheckpoints?: boolean } = {}): Promise<ListedVersionsAndRefs> {
  const { versionKeys, refs, also } = await format.listVersionKeysAndRefs(store, options.withCheckpoints ? { alsoAfter: CHECKPOINTS_PREFIX } : {});
  return { versionKeys, refs, ...(options.withCheckpoints && also ? { checkpointFiles: checkpointFilesIn(also) } : {}) };
}

function listedFile(file: VersionFile): ListedVersion {
  return { version: file.version, key: file.key, file: () => file };
}

function vanished(store: ObjectStore, listed: ListedVersion): never {
  throw new NotFoundError(`${store.uriOf(listed.key)}: removed since it was listed`, { uri: store.uriOf(listed.key) });
}

/**
 * The checkpoint a current head names, read without listing the checkpoints; null when that is
 * not provably the history a listing would give (the caller then lists). It is when
 *   - the head is current: the newest version file listed is the one it was written for. No
 *     checkpoint then covers a version above the head's (a checkpoint covers the newest version
 *     when it was written, and the newest version is never removed);
 *   - no checkpoint of the head's own version exists (one HEAD request): one written since the
 *     head, by a cleanup or `lakewarden checkpoint` after the last commit, is read instead;
 *   - every version from the named checkpoint's up to the head's has a record (checkpoint,
 *     head) or a version file: a version removed before the head was written, by a run whose
 *     checkpoint the head did not see, has its record only in that newer checkpoint. A format
 *     whose version numbers leave gaps just lists, as before.
 */
async function checkpointNamedByRecent(store: ObjectStore, known: KnownVersions | null, listed: Promise<readonly ListedVersion[]>): Promise<LoadedCheckpoint | null> {
  const boundary = known?.boundary;
  if (!known || !boundary || boundary.checkpoint === null || boundary.checkpoint > boundary.version) return null;
  const named = boundary.checkpoint;
  const own = boundary.version;
  const [checkpoint, ownExists, files] = await Promise.all([readCheckpointOrNull(store, named), named < own ? objectExists(store, checkpointKey(own)) : false, listed]);
  const latest = files.at(-1)?.file();
  const file = boundary.versionFile;
  if (!latest || latest.version !== own || latest.key !== file.key || latest.size !== file.size || latest.etag !== file.etag) return null;
  if (ownExists) {
    const newer = await readCheckpointOrNull(store, own);
    return newer ? { checkpoint: newer, skipped: [], files: [] } : null;
  }
  if (!checkpoint) return null;
  const covered = new Set<number>();
  for (const source of [checkpoint.records, known.records, files]) for (const item of source) covered.add(item.version);
  for (let version = named + 1; version <= own; version++) if (!covered.has(version)) return null;
  return { checkpoint, skipped: [], files: [] };
}

async function readCheckpointOrNull(store: ObjectStore, version: number): Promise<StoredCheckpoint | null> {
  try {
    return await readCheckpoint(store, { key: checkpointKey(version), version });
  } catch (error) {
    if (error instanceof CorruptCheckpointError || error instanceof NotFoundError) return null;
    throw error;
  }
}
