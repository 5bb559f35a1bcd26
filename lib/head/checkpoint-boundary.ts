/**
 * The last version the newest checkpoint covers: the head carries the versions after it.
 * Read from checkpoint names alone (one LIST), since a name states the version it covers.
 */
import { listCheckpointFiles } from "../checkpoint/load.ts";
import type { ObjectStore } from "../store/object-store.ts";

export async function newestCheckpointVersion(store: ObjectStore): Promise<number | null> {
  return (await listCheckpointFiles(store)).at(-1)?.version ?? null;
}
