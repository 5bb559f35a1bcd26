/**
 * Stage `cleanup_old_checkpoints`: keep the newest `maxCheckpointFiles` checkpoints (2 by
 * default: the newest and one to fall back to) and delete older ones. The only deletes
 * lakewarden ever makes inside `_lakewarden/checkpoints/`; other files there are left alone.
 *
 * A file is deleted only once it is proven to hold nothing the newest readable checkpoint kept
 * does not: its rows are read, and each must be in that checkpoint or in an archive segment it
 * names. One that cannot be read is set aside under `_lakewarden/damaged/`, never deleted; one
 * with rows nothing newer holds stays, and the result says why.
 */
import { NotFoundError } from "../store/errors.ts";
import type { DeleteFailure, ObjectStore } from "../store/object-store.ts";
import { setAside } from "./damaged.ts";
import type { DamageNote } from "./damaged.ts";
import { CorruptCheckpointError } from "./errors.ts";
import type { CheckpointFile, StoredCheckpoint } from "./load.ts";
import { listCheckpointFiles, readCheckpoint } from "./load.ts";
import { DAMAGED_PREFIX, parseSegmentKey } from "../model/layout.ts";

export const DEFAULT_MAX_CHECKPOINT_FILES = 2;

export interface PruneCheckpointsOptions {
  maxCheckpointFiles?: number;
  /** Keys that stay whatever their rank, e.g. the newest checkpoint that loads. */
  keep?: readonly string[];
  /** Checkpoint files already listed. */
  files?: readonly CheckpointFile[];
  /** List and decide, but delete nothing. */
  dryRun?: boolean;
  /** The checkpoint the archive before this prune wrote (Archived.held): read from memory, not the store, while the file is unchanged. */
  held?: StoredCheckpoint | null;
  /** For the notes of files set aside (default now). */
  now?: Date;
}

export interface PruneCheckpointsResult {
  pruned: string[];
  kept: string[];
  failed: DeleteFailure[];
  /** Why a file past the newest kept was not deleted, one line each (absent: none). */
  problems?: string[];
  /** Damaged files moved to `_lakewarden/damaged/` instead of deleted (absent: none). */
  setAside?: DamageNote[];
}

export async function cleanupOldCheckpoints(store: ObjectStore, options: PruneCheckpointsOptions = {}): Promise<PruneCheckpointsResult> {
  const max = options.maxCheckpointFiles ?? DEFAULT_MAX_CHECKPOINT_FILES;
  if (!Number.isSafeInteger(max) || max < 1) throw new RangeError(`maxCheckpointFiles must be at least 1, got ${max}`);
  const files = options.files ? [...options.files] : await listCheckpointFiles(store);
  const newestFirst = files.sort((a, b) => b.version - a.version);
  const protectedKeys = new Set(options.keep ?? []);
  const kept = newestFirst.filter((file, rank) => rank < max || protectedKeys.has(file.key)).map((f) => f.key);
  const past = newestFirst.filter((file) => !kept.includes(file.key));
  if (past.length === 0) return { pruned: [], kept, failed: [] };

  const problems: string[] = [];
  const setAsideNow: DamageNote[] = [];
  const covering = await newestReadable(
    store,
    newestFirst.filter((file) => kept.includes(file.key)),
    options.held ?? null,
  );
  const doomed: string[] = [];
  for (const file of past) {
    if (!covering) {
      problems.push(`${store.uriOf(file.key)}: not pruned: no newer checkpoint could be read to prove it holds this one's rows`);
      kept.push(file.key);
      continue;
    }
    const proof = await provenCovered(store, file, covering);
    if (proof.state === "covered") doomed.push(file.key);
    else if (proof.state === "gone") continue;
    else if (proof.state === "uncovered") {
      problems.push(`${store.uriOf(file.key)}: not pruned: versions ${proof.versions} are in no newer checkpoint (${covering.key}) or archive segment`);
      kept.push(file.key);
    } else if (options.dryRun) {
      problems.push(`${store.uriOf(file.key)}: would be set aside under ${DAMAGED_PREFIX}, not pruned: ${proof.problem}`);
    } else {
      setAsideNow.push(await moveAside(store, file, proof.problem, (options.now ?? new Date()).getTime()));
      problems.push(`${store.uriOf(file.key)}: set aside, not pruned (${proof.problem})`);
    }
  }
  const extra = { ...(problems.length > 0 ? { problems } : {}), ...(setAsideNow.length > 0 ? { setAside: setAsideNow } : {}) };
  if (doomed.length === 0 || options.dryRun) return { pruned: doomed, kept, failed: [], ...extra };
  const { deleted, failed } = await store.deleteMany(doomed);
  const failedKeys = new Set(failed.map((f) => f.key));
  return { pruned: deleted.filter((key) => !failedKeys.has(key)), kept, failed, ...extra };
}

/** The newest of `files` (newest first) that reads: from the archive just written when it is that file, else read. */
async function newestReadable(store: ObjectStore, files: readonly CheckpointFile[], held: StoredCheckpoint | null): Promise<StoredCheckpoint | null> {
  for (const file of files) {
    if (held && held.key === file.key && held.etag === file.etag) return held;
    try {
      return await readCheckpoint(store, file);
    } catch (error) {
      if (!(error instanceof CorruptCheckpointError || error instanceof NotFoundError)) throw error;
    }
  }
  return null;
}

type Proof = { state: "covered" } | { state: "gone" } | { state: "uncovered"; versions: string } | { state: "damaged"; problem: string };

/** Whether every row of `file` is in `covering` or in a segment it names. */
async function provenCovered(store: ObjectStore, file: CheckpointFile, covering: StoredCheckpoint): Promise<Proof> {
  let rows: number[];
  try {
    rows = (await readCheckpoint(store, file)).records.map((r) => r.version);
  } catch (error) {
    if (error instanceof NotFoundError) return { state: "gone" };
    if (error instanceof CorruptCheckpointError) return { state: "damaged", problem: error.message };
    throw error;
  }
  const held = new Set(covering.records.map((r) => r.version));
  const segments = covering.archiveSegments.map(parseSegmentKey).filter((s) => s !== null);
  const lost = rows.filter((v) => !held.has(v) && !segments.some((s) => s.first <= v && v <= s.last));
  if (lost.length === 0) return { state: "covered" };
  return { state: "uncovered", versions: lost.length > 5 ? `${lost.slice(0, 5).join(", ")} and ${lost.length - 5} more` : lost.join(", ") };
}

/** Copies a damaged file aside, then removes it from the folder while it is still the file copied. */
async function moveAside(store: ObjectStore, file: CheckpointFile, problem: string, nowMillis: number): Promise<DamageNote> {
  const kept = await setAside(store, file.key, problem, nowMillis);
  if (kept.etag !== null && (await store.head(file.key).catch(() => null))?.etag === kept.etag) await store.deleteMany([file.key]);
  return { file: file.key, set_aside: kept.key, problem, covered: { from: null, through: file.version }, found_at_millis: nowMillis };
}
