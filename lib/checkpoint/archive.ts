/**
 * Stage `archive_versions`: write the new checkpoint `_lakewarden/checkpoints/{version:020}.arrow`.
 *
 * A new file is created only with If-None-Match: *, so a checkpoint, once written, is never
 * overwritten blindly. One case needs more: a later run at the same table version that learned
 * something (versions removed since, a corrupt file under that name). It then merges with the
 * stored file and replaces it with If-Match on the ETag it just read: the merge only adds
 * knowledge, and a racing writer makes the If-Match fail, so we re-read and merge again.
 */
import type { ObjectStore } from "../store/object-store.ts";
import { ConflictError, NotFoundError, PreconditionFailedError } from "../store/errors.ts";
import type { VersionRecord } from "../model/version-record.ts";
import { encodeCheckpoint } from "./codec.ts";
import type { CheckpointContent, StoredProtection } from "./codec.ts";
import { CorruptCheckpointError } from "./errors.ts";
import { mergeHistory, sameHistory } from "./history.ts";
import type { MergedHistory } from "./history.ts";
import { checkpointKey } from "../model/layout.ts";
import { listCheckpointFiles, loadNewestCheckpoint, readCheckpoint } from "./load.ts";
import type { LoadedCheckpoint } from "./load.ts";
import { parseSegmentKey } from "../model/layout.ts";
import { listSegments, writeSegment } from "./segments.ts";
import type { SegmentFile } from "../model/layout.ts";
import type { SkippedCheckpoint, StoredCheckpoint } from "./load.ts";
import { checkpointCoverage, readSetAside, setAside, soundFirstVersion } from "./damaged.ts";
import type { DamageNote } from "./damaged.ts";

const WRITE_ATTEMPTS = 5;

export interface ArchiveInput {
  /** The newest checkpoint that loaded before the run (null: none). */
  previous: StoredCheckpoint | null;
  /** Records read from version files (live or about to be removed) and from interrupted runs. */
  records: readonly VersionRecord[];
  /** Every version whose version file exists after the run. */
  liveVersions: ReadonlySet<number>;
  taggedVersions: ReadonlySet<number>;
  tableFormat: string;
  now: Date;
  maxEntries?: number;
  /** The protection state this run leaves (undefined: keep the previous one). */
  protection?: StoredProtection | null;
  /**
   * Checkpoint files the load fell past (corrupt, or missing though the head names them): each is
   * set aside under `_lakewarden/damaged/` before the new checkpoint is written, and remembered in it.
   */
  unreadable?: readonly SkippedCheckpoint[];
}

/** written: new file; replaced: same-version file updated with If-Match; unchanged: nothing new; empty: no history at all. */
export type ArchiveStatus = "written" | "replaced" | "unchanged" | "empty";

export interface ArchiveResult {
  status: ArchiveStatus;
  /** The checkpoint that now holds the history (null only when empty). */
  key: string | null;
  version: number;
  rows: number;
  cleanedUpRows: number;
  /** The archive segment rows past max entries were moved to, or null. */
  archived: string | null;
  /** Damaged files this archive set aside under `_lakewarden/damaged/` (absent: none). */
  setAside?: DamageNote[];
}

/**
 * An archive's result and the checkpoint it left in the store, as written: its content, key and
 * ETag (null: none, the history is empty). The checkpoint is a value beside the result, not in
 * it (the result goes into reports and receipts as it is): a caller that archives again or
 * prunes next hands it on, so neither reads and decodes back what was just written.
 */
export interface Archived {
  result: ArchiveResult;
  held: StoredCheckpoint | null;
}

/**
 * The newest checkpoint, as loadNewestCheckpoint finds it, after an earlier archive (`held`, its
 * checkpoint; cleanup archives before its deletes and after them): when the newest file listed
 * is still the one that archive wrote (same key, same ETag), its content is taken from memory
 * instead of being read and decoded back. Anything else (a file written or replaced since, by a
 * concurrent `lakewarden checkpoint` say) loads as usual.
 */
export async function loadNewestCheckpointAfter(store: ObjectStore, held: StoredCheckpoint | null): Promise<LoadedCheckpoint> {
  if (!held) return loadNewestCheckpoint(store);
  const files = await listCheckpointFiles(store);
  const newest = files.at(-1);
  if (newest && newest.key === held.key && newest.etag === held.etag) return { checkpoint: held, skipped: [], files };
  return loadNewestCheckpoint(store, files);
}

export async function archiveVersions(store: ObjectStore, input: ArchiveInput): Promise<ArchiveResult> {
  return (await archiveAndHold(store, input)).result;
}

/** archive_versions, with the checkpoint it left (see Archived). */
export async function archiveAndHold(store: ObjectStore, input: ArchiveInput): Promise<Archived> {
  const nowMillis = input.now.getTime();
  const damage = await settleDamage(store, input);
  const merge = (previous: CheckpointContent | null, notes: readonly DamageNote[] = damage.notes): MergedHistory =>
    withoutProvenNotes(
      mergeHistory({
        previous,
        records: damage.repairedRows.length > 0 ? [...damage.repairedRows, ...input.records] : input.records,
        liveVersions: input.liveVersions,
        taggedVersions: input.taggedVersions,
        nowMillis,
        tableFormat: input.tableFormat,
        // A concurrent writer's file merged with keeps the notes this archive did not settle.
        damaged: [...notes, ...(previous?.damaged ?? []).filter((n) => !damage.checked.has(n.set_aside) && !notes.some((m) => m.set_aside === n.set_aside))],
        ...(input.maxEntries !== undefined ? { maxEntries: input.maxEntries } : {}),
        ...(input.protection !== undefined ? { protection: input.protection } : {}),
      }),
    );
  const content = withSegments(merge(input.previous), damage.segments);
  let archivedTo: string | null = null;
  const setAsideNow: DamageNote[] = [...damage.setAside];
  const noteSegment = (note: DamageNote) => setAsideNow.push(note);
  const result = (status: ArchiveStatus, key: string | null, stored: CheckpointContent, held?: StoredCheckpoint): Archived => {
    const archived: ArchiveResult = {
      status,
      key,
      archived: archivedTo,
      version: stored.version,
      rows: stored.records.length,
      cleanedUpRows: stored.records.filter((r) => r.is_cleaned_up).length,
      ...(setAsideNow.length > 0 ? { setAside: setAsideNow } : {}),
    };
    return { result: archived, held: held ?? null };
  };
  /** Encodes `history` for `key`, and what the store holds once the put returns `etag`. */
  const encoded = (history: MergedHistory, key: string) => {
    const body = encodeCheckpoint(history);
    const { overflow: _overflow, ...stored } = history;
    return { body, held: (etag: string): StoredCheckpoint => ({ ...stored, key, etag, size: body.length }) };
  };
  const written = async (status: ArchiveStatus, key: string, history: MergedHistory, held: StoredCheckpoint): Promise<Archived> => {
    await removeSetAsideOriginals(store, damage.copies, key);
    return result(status, key, history, held);
  };

  if (content.records.length === 0 && damage.notes.length === 0) return result("empty", null, content);
  // Rows the checkpoint no longer holds go to an archive segment first: never dropped.
  archivedTo = await writeSegment(store, content.overflow, input.tableFormat, nowMillis, noteSegment);
  if (archivedTo !== null && !content.archiveSegments.includes(archivedTo)) content.archiveSegments.push(archivedTo);
  const previous = input.previous;
  if (previous && previous.version === content.version && sameHistory(previous, content)) {
    return result("unchanged", previous.key, previous, previous);
  }

  const key = checkpointKey(content.version);
  // A damaged file under the name the new checkpoint needs, copied aside already: replaced on the ETag copied.
  const copied = damage.copies.find((c) => c.file === key && c.etag !== null);
  // The checkpoint merged with is the file of that name (cleanup's second archive, after its
  // deletes, or a re-run at the same version): replace it on the ETag it was read with, rather
  // than try to create it, fail, and read and decode it a second time.
  const replaceOn = copied?.etag ?? (previous && previous.key === key ? previous.etag : null);
  if (replaceOn !== null) {
    try {
      const { body, held } = encoded(content, key);
      const { etag } = await store.put(key, body, { ifMatch: replaceOn, contentType: ARROW_FILE });
      return await written("replaced", key, content, held(etag));
    } catch (error) {
      if (!(error instanceof PreconditionFailedError || error instanceof ConflictError || error instanceof NotFoundError)) throw error;
    }
  }
  for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
    try {
      const { body, held } = encoded(content, key);
      const { etag } = await store.put(key, body, { ifNoneMatch: "*", contentType: ARROW_FILE });
      return await written("written", key, content, held(etag));
    } catch (error) {
      if (error instanceof ConflictError) continue;
      if (!(error instanceof PreconditionFailedError)) throw error;
    }
    // A file of that name exists: merge with it and replace it only if we know more.
    let existing: StoredCheckpoint | null = null;
    let etag: string;
    let merged = content;
    try {
      existing = await readCheckpoint(store, { key, version: content.version });
      etag = existing.etag;
    } catch (error) {
      if (error instanceof NotFoundError) continue;
      if (!(error instanceof CorruptCheckpointError)) throw error;
      // Never overwritten with fewer rows unseen: its bytes are set aside first, and remembered.
      const kept = await setAside(store, key, error.message, nowMillis);
      if (kept.etag === null) continue;
      etag = kept.etag;
      const note = damageNote(key, kept.key, error.message, damage.segmentFiles, soundFirstVersion(input.previous), nowMillis);
      setAsideNow.push(note);
      merged = withSegments(merge(input.previous, [...damage.notes, note]), damage.segments);
      if (archivedTo !== null && !merged.archiveSegments.includes(archivedTo)) merged.archiveSegments.push(archivedTo);
    }
    if (existing) merged = withSegments(merge(existing), damage.segments);
    if (merged !== content && existing) {
      const segment = await writeSegment(store, merged.overflow, input.tableFormat, nowMillis, noteSegment);
      if (segment !== null) {
        if (!merged.archiveSegments.includes(segment)) merged.archiveSegments.push(segment);
        archivedTo = segment;
      }
    }
    if (existing && sameHistory(existing, merged)) return result("unchanged", key, existing, existing);
    try {
      const { body, held } = encoded(merged, key);
      const { etag: writtenEtag } = await store.put(key, body, { ifMatch: etag, contentType: ARROW_FILE });
      return await written("replaced", key, merged, held(writtenEtag));
    } catch (error) {
      if (!(error instanceof PreconditionFailedError || error instanceof ConflictError || error instanceof NotFoundError)) throw error;
    }
  }
  throw new ConflictError(`${store.uriOf(key)}: checkpoint kept changing under concurrent writers; not written`, { uri: store.uriOf(key) });
}

const ARROW_FILE = "application/vnd.apache.arrow.file";

interface SettledDamage {
  /** The notes the new checkpoint keeps: the previous one's still damaged, and those set aside now. */
  notes: DamageNote[];
  /** The notes of the files set aside by this archive. */
  setAside: DamageNote[];
  /** Where each was copied from, and the ETag copied (null: it was missing). */
  copies: { file: string; etag: string | null }[];
  /** Rows of files set aside earlier and repaired in place since: they come back. */
  repairedRows: VersionRecord[];
  /** Segment keys the new checkpoint must name (a damaged history lists them all; repaired files name theirs). */
  segments: string[];
  segmentFiles: SegmentFile[];
  /** The set-aside keys of the previous checkpoint's notes, as checked now. */
  checked: Set<string>;
}

/**
 * The damage this archive deals with before it writes: the previous checkpoint's notes checked
 * again (a repaired file's rows come back, a deleted one's note goes), and each unreadable
 * checkpoint copied aside. No request at all on a healthy history.
 */
async function settleDamage(store: ObjectStore, input: ArchiveInput): Promise<SettledDamage> {
  const nowMillis = input.now.getTime();
  const earlier = input.previous?.damaged ?? [];
  const unreadable = input.unreadable ?? [];
  const none: SettledDamage = { notes: [], setAside: [], copies: [], repairedRows: [], segments: [], segmentFiles: [], checked: new Set() };
  if (earlier.length === 0 && unreadable.length === 0) return none;
  const notes: DamageNote[] = [];
  const repairedRows: VersionRecord[] = [];
  const segments: string[] = [];
  for (const note of earlier) {
    const state = await readSetAside(store, note);
    if (state.state === "damaged") notes.push(note);
    if (state.state === "repaired") {
      repairedRows.push(...state.content.records);
      segments.push(...state.content.archiveSegments);
    }
  }
  const segmentFiles = unreadable.length > 0 ? await listSegments(store) : [];
  segments.push(...segmentFiles.map((s) => s.key));
  const setAsideNow: DamageNote[] = [];
  const copies: SettledDamage["copies"] = [];
  for (const file of unreadable) {
    const kept = await setAside(store, file.key, file.problem, nowMillis);
    copies.push({ file: file.key, etag: kept.etag });
    setAsideNow.push(damageNote(file.key, kept.key, file.problem, segmentFiles, soundFirstVersion(input.previous), nowMillis));
  }
  return { notes: [...notes, ...setAsideNow], setAside: setAsideNow, copies, repairedRows, segments, segmentFiles, checked: new Set(earlier.map((n) => n.set_aside)) };
}

function damageNote(file: string, keptAt: string, problem: string, segments: readonly SegmentFile[], first: number | null, nowMillis: number): DamageNote {
  return { file, set_aside: keptAt, problem, covered: checkpointCoverage(file, segments, first) ?? { from: null, through: 0 }, found_at_millis: nowMillis };
}

/**
 * The history without the notes of damaged files it is proven to hold every version of: each
 * number from the note's first version to its last is a row (a history may lose nothing of a
 * file and still be unable to read it; then there is nothing to keep saying).
 */
function withoutProvenNotes(history: MergedHistory): MergedHistory {
  const notes = history.damaged ?? [];
  if (notes.length === 0) return history;
  const versions = history.records.map((r) => r.version);
  const kept = notes.filter((note) => !holdsEvery(versions, note.covered));
  if (kept.length === notes.length) return history;
  const { damaged: _damaged, ...rest } = history;
  return kept.length > 0 ? { ...rest, damaged: kept } : rest;
}

/** True when `ascending` has every whole number from `covered.from` to `covered.through` (an unknown start is never proven). */
function holdsEvery(ascending: readonly number[], covered: DamageNote["covered"]): boolean {
  if (covered.from === null) return false;
  const start = ascending.findIndex((v) => v >= covered.from!);
  if (start < 0) return false;
  const span = covered.through - covered.from + 1;
  return ascending[start] === covered.from && ascending[start + span - 1] === covered.through;
}

/** The history naming every segment in `segments` too (oldest first), so a reader finds their rows. */
function withSegments(history: MergedHistory, segments: readonly string[]): MergedHistory {
  const missing = segments.filter((key) => !history.archiveSegments.includes(key));
  if (missing.length === 0) return history;
  const first = (key: string) => parseSegmentKey(key)?.first ?? 0;
  return { ...history, archiveSegments: [...history.archiveSegments, ...new Set(missing)].sort((a, b) => first(a) - first(b)) };
}

/**
 * A damaged checkpoint copied aside under another name than the one just written leaves the
 * checkpoint folder, so it never takes a fallback's place: deleted only while its ETag is still
 * the one copied (a file replaced since is left alone).
 */
async function removeSetAsideOriginals(store: ObjectStore, copies: SettledDamage["copies"], written: string): Promise<void> {
  for (const copy of copies) {
    if (copy.etag === null || copy.file === written) continue;
    try {
      if ((await store.head(copy.file)).etag !== copy.etag) continue;
    } catch (error) {
      if (error instanceof NotFoundError) continue;
      throw error;
    }
    await store.deleteMany([copy.file]);
  }
}
