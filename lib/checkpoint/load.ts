/**
 * Finding and loading checkpoints. The newest file that loads wins; a corrupt or vanished
 * newest file falls back to the one before it; none loadable is an empty history, never an
 * error (the manifests still hold what they hold). Store errors (access denied, unreachable)
 * and a file in a newer checkpoint format (UnsupportedCheckpointError) are not corruption and
 * do propagate: falling back past the latter would write its history over.
 */
import type { ListedKey, ObjectStore } from "../store/object-store.ts";
import { NotFoundError } from "../store/errors.ts";
import type { CheckpointContent } from "./codec.ts";
import { decodeCheckpoint } from "./codec.ts";
import { CorruptCheckpointError } from "./errors.ts";
import { CHECKPOINTS_PREFIX, parseCheckpointKey } from "../model/layout.ts";

export interface CheckpointFile {
  key: string;
  version: number;
  size: number;
  etag: string;
  lastModified: Date;
}

export interface StoredCheckpoint extends CheckpointContent {
  key: string;
  etag: string;
  size: number;
}

export interface SkippedCheckpoint {
  key: string;
  problem: string;
}

export interface LoadedCheckpoint {
  /** The newest checkpoint that loaded, or null: empty history. */
  checkpoint: StoredCheckpoint | null;
  /** Newer files that did not load, newest first, with why. */
  skipped: SkippedCheckpoint[];
  /** Every checkpoint file listed, ascending by version. */
  files: CheckpointFile[];
}

/** Checkpoint files ascending by version; other files in the folder (and anything below it) are ignored. */
export async function listCheckpointFiles(store: ObjectStore): Promise<CheckpointFile[]> {
  const files: CheckpointFile[] = [];
  for await (const object of store.list(CHECKPOINTS_PREFIX, { delimiter: "/" })) {
    const version = parseCheckpointKey(object.key);
    if (version === null) continue;
    files.push({ key: object.key, version, size: object.size, etag: object.etag, lastModified: object.lastModified });
  }
  return files.sort((a, b) => a.version - b.version);
}

/** The checkpoint files among keys another listing gave (one that covered the folder), ascending; files gone since are left out. */
export function checkpointFilesIn(listed: readonly ListedKey[]): CheckpointFile[] {
  const files: CheckpointFile[] = [];
  for (const entry of listed) {
    const version = parseCheckpointKey(entry.key);
    if (version === null) continue;
    const info = entry.info();
    if (info) files.push({ key: info.key, version, size: info.size, etag: info.etag, lastModified: info.lastModified });
  }
  return files.sort((a, b) => a.version - b.version);
}

/** Reads and validates one checkpoint file; CorruptCheckpointError when it is not a valid one. */
export async function readCheckpoint(store: ObjectStore, file: Pick<CheckpointFile, "key" | "version">): Promise<StoredCheckpoint> {
  const uri = store.uriOf(file.key);
  const { body, etag, size } = await store.get(file.key);
  const content = decodeCheckpoint(body, uri);
  if (content.version !== file.version) {
    throw new CorruptCheckpointError(uri, `covers version ${content.version} but its name says ${file.version}`);
  }
  return { ...content, key: file.key, etag, size };
}

export async function loadNewestCheckpoint(store: ObjectStore, listed?: readonly CheckpointFile[]): Promise<LoadedCheckpoint> {
  const files = listed ? [...listed] : await listCheckpointFiles(store);
  const skipped: SkippedCheckpoint[] = [];
  for (const file of [...files].reverse()) {
    try {
      return { checkpoint: await readCheckpoint(store, file), skipped, files };
    } catch (error) {
      if (error instanceof CorruptCheckpointError) skipped.push({ key: file.key, problem: error.message });
      else if (error instanceof NotFoundError) skipped.push({ key: file.key, problem: `${store.uriOf(file.key)}: removed while loading` });
      else throw error;
    }
  }
  return { checkpoint: null, skipped, files };
}
