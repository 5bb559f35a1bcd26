/**
 * The last version the newest checkpoint covers: the head carries the versions after it.
 * Read from checkpoint names alone (one LIST), since a name states the version it covers.
 */
import { CHECKPOINTS_PREFIX, parseCheckpointKey } from "../checkpoint/layout.ts";
import type { ObjectStore } from "../store/object-store.ts";

export async function newestCheckpointVersion(store: ObjectStore): Promise<number | null> {
  let newest: number | null = null;
  for await (const object of store.list(CHECKPOINTS_PREFIX, { delimiter: "/" })) {
    const version = parseCheckpointKey(object.key);
    if (version !== null && (newest === null || version > newest)) newest = version;
  }
  return newest;
}
