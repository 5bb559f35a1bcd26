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
import { checkpointKey } from "./layout.ts";
import { listCheckpointFiles, loadNewestCheckpoint, readCheckpoint } from "./load.ts";
import type { LoadedCheckpoint } from "./load.ts";
import { writeSegment } from "./segments.ts";
import type { StoredCheckpoint } from "./load.ts";

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
}

/**
 * The checkpoint each archive left in the store, as written: its content, key and ETag. Kept
 * beside the result, not in it (the result goes into reports and receipts as it is).
 */
const heldCheckpoints = new WeakMap<ArchiveResult, StoredCheckpoint>();

/**
 * The newest checkpoint, as loadNewestCheckpoint finds it, after an earlier archive of this
 * process (`earlier`; cleanup archives before its deletes and after them): when the newest file
 * listed is still the one that archive wrote (same key, same ETag), its content is taken from
 * memory instead of being read and decoded back. Anything else (a file written or replaced
 * since, by a concurrent `lakewarden checkpoint` say) loads as usual.
 */
export async function loadNewestCheckpointAfter(store: ObjectStore, earlier: ArchiveResult | null): Promise<LoadedCheckpoint> {
  const held = earlier ? heldCheckpoints.get(earlier) : undefined;
  if (!held) return loadNewestCheckpoint(store);
  const files = await listCheckpointFiles(store);
  const newest = files.at(-1);
  if (newest && newest.key === held.key && newest.etag === held.etag) return { checkpoint: held, skipped: [], files };
  return loadNewestCheckpoint(store, files);
}

export async function archiveVersions(store: ObjectStore, input: ArchiveInput): Promise<ArchiveResult> {
  const merge = (previous: CheckpointContent | null): MergedHistory =>
    mergeHistory({
      previous,
      records: input.records,
      liveVersions: input.liveVersions,
      taggedVersions: input.taggedVersions,
      nowMillis: input.now.getTime(),
      tableFormat: input.tableFormat,
      ...(input.maxEntries !== undefined ? { maxEntries: input.maxEntries } : {}),
      ...(input.protection !== undefined ? { protection: input.protection } : {}),
    });
  const content = merge(input.previous);
  let archivedTo: string | null = null;
  const result = (status: ArchiveStatus, key: string | null, stored: CheckpointContent, held?: StoredCheckpoint): ArchiveResult => {
    const archived: ArchiveResult = {
      status,
      key,
      archived: archivedTo,
      version: stored.version,
      rows: stored.records.length,
      cleanedUpRows: stored.records.filter((r) => r.is_cleaned_up).length,
    };
    if (held) heldCheckpoints.set(archived, held);
    return archived;
  };
  /** Encodes `history` for `key`, and what the store holds once the put returns `etag`. */
  const encoded = (history: MergedHistory, key: string) => {
    const body = encodeCheckpoint(history);
    const { overflow: _overflow, ...stored } = history;
    return { body, held: (etag: string): StoredCheckpoint => ({ ...stored, key, etag, size: body.length }) };
  };

  if (content.records.length === 0) return result("empty", null, content);
  // Rows the checkpoint no longer holds go to an archive segment first: never dropped.
  archivedTo = await writeSegment(store, content.overflow, input.tableFormat, input.now.getTime());
  if (archivedTo !== null && !content.archiveSegments.includes(archivedTo)) content.archiveSegments.push(archivedTo);
  const previous = input.previous;
  if (previous && previous.version === content.version && sameHistory(previous, content)) {
    return result("unchanged", previous.key, previous, previous);
  }

  const key = checkpointKey(content.version);
  // The checkpoint merged with is the file of that name (cleanup's second archive, after its
  // deletes, or a re-run at the same version): replace it on the ETag it was read with, rather
  // than try to create it, fail, and read and decode it a second time.
  if (previous && previous.key === key) {
    try {
      const { body, held } = encoded(content, key);
      const { etag } = await store.put(key, body, { ifMatch: previous.etag, contentType: "application/vnd.apache.arrow.file" });
      return result("replaced", key, content, held(etag));
    } catch (error) {
      if (!(error instanceof PreconditionFailedError || error instanceof ConflictError || error instanceof NotFoundError)) throw error;
    }
  }
  for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
    try {
      const { body, held } = encoded(content, key);
      const { etag } = await store.put(key, body, { ifNoneMatch: "*", contentType: "application/vnd.apache.arrow.file" });
      return result("written", key, content, held(etag));
    } catch (error) {
      if (error instanceof ConflictError) continue;
      if (!(error instanceof PreconditionFailedError)) throw error;
    }
    // A file of that name exists: merge with it and replace it only if we know more.
    let existing: StoredCheckpoint | null = null;
    let etag: string;
    try {
      existing = await readCheckpoint(store, { key, version: content.version });
      etag = existing.etag;
    } catch (error) {
      if (error instanceof NotFoundError) continue;
      if (!(error instanceof CorruptCheckpointError)) throw error;
      etag = (await store.head(key)).etag;
    }
    const merged = existing ? merge(existing) : content;
    if (merged !== content) {
      const segment = await writeSegment(store, merged.overflow, input.tableFormat, input.now.getTime());
      if (segment !== null) {
        if (!merged.archiveSegments.includes(segment)) merged.archiveSegments.push(segment);
        archivedTo = segment;
      }
    }
    if (existing && sameHistory(existing, merged)) return result("unchanged", key, existing, existing);
    try {
      const { body, held } = encoded(merged, key);
      const { etag: written } = await store.put(key, body, { ifMatch: etag, contentType: "application/vnd.apache.arrow.file" });
      return result("replaced", key, merged, held(written));
    } catch (error) {
      if (!(error instanceof PreconditionFailedError || error instanceof ConflictError || error instanceof NotFoundError)) throw error;
    }
  }
  throw new ConflictError(`${store.uriOf(key)}: checkpoint kept changing under concurrent writers; not written`, { uri: store.uriOf(key) });
}
