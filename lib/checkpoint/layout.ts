/**
 * Where checkpoints live: `_lakewarden/checkpoints/{version:020}.arrow`. The zero-padded name
 * makes a plain ascending listing list them oldest first, on every store.
 */
export { CHECKPOINTS_PREFIX } from "../model/layout.ts";
import { CHECKPOINTS_PREFIX } from "../model/layout.ts";

const CHECKPOINT_NAME = /^(\d{20})\.arrow$/;

/** The key of the checkpoint covering history up to and including `version`. */
export function checkpointKey(version: number): string {
  if (!Number.isSafeInteger(version) || version < 0) throw new RangeError(`not a table version: ${version}`);
  return `${CHECKPOINTS_PREFIX}${String(version).padStart(20, "0")}.arrow`;
}

/** The version a checkpoint key names, or null for any other key (temp files, foreign files). */
export function parseCheckpointKey(key: string): number | null {
  if (!key.startsWith(CHECKPOINTS_PREFIX)) return null;
  const match = CHECKPOINT_NAME.exec(key.slice(CHECKPOINTS_PREFIX.length));
  if (!match) return null;
  const version = Number(match[1]);
  return Number.isSafeInteger(version) ? version : null;
}
