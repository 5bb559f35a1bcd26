/**
 * The last version the newest checkpoint covers: the head carries the versions after it.
 *
 * From checkpoint names alone (a name states the version it covers): one LIST, or, when the
 * previous head says where it stood, a HEAD per version a checkpoint written since could
 * cover. A checkpoint covers the newest version when it is written, so one written after the
 * previous head (of version p) covers p or later, up to the version being written: those few
 * names are asked for, each a GET-priced HEAD where the LIST costs 12.5 GETs on S3. A
 * checkpoint that raced the previous head (listed before it, written after) is missed: the
 * head then follows an older checkpoint and carries more versions than it needs, never fewer,
 * and readers check that (lib/versions/timeline.ts); the next checkpoint moves it on.
 */
import { listCheckpointFiles } from "../checkpoint/load.ts";
import { checkpointKey } from "../model/layout.ts";
import type { ObjectStore } from "../store/object-store.ts";
import { objectExists } from "../store/object-exists.ts";

/** Past this many candidate names, one LIST is cheaper. */
export const MAX_CHECKPOINT_PROBES = 4;

export async function newestCheckpointVersion(store: ObjectStore): Promise<number | null> {
  return (await listCheckpointFiles(store)).at(-1)?.version ?? null;
}

export interface PreviousBoundary {
  /** The version the previous head describes. */
  version: number;
  /** The checkpoint its versions follow (null: none then). */
  checkpoint: number | null;
}

/** The newest checkpoint for a head of `version`, probing from the previous head's boundary when it can. */
export async function checkpointBoundary(store: ObjectStore, version: number, previous: PreviousBoundary | null): Promise<number | null> {
  if (!previous || previous.version > version || version - previous.version + 1 > MAX_CHECKPOINT_PROBES) return newestCheckpointVersion(store);
  const candidates: number[] = [];
  for (let v = version; v >= previous.version; v--) if (previous.checkpoint === null || v > previous.checkpoint) candidates.push(v);
  const found = await Promise.all(candidates.map((v) => objectExists(store, checkpointKey(v))));
  const newest = candidates.find((_v, i) => found[i]);
  return newest ?? previous.checkpoint;
}
