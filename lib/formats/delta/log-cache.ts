/**
 * Parsed log files, remembered by (store URI, key, ETag). Delta commits are written once and never
 * changed (put-if-absent), and a checkpoint rewritten by a racing writer has the same content, so
 * a file seen with the same ETag parses to the same actions. Reading every version of a table
 * (cleanup reads each version's snapshot) then reads each commit and checkpoint once instead of
 * once per version. Bounded by entries; the oldest entry goes first.
 */
import type { DeltaAction } from "./actions.ts";

const MAX_ENTRIES = 4096;
const cache = new Map<string, Promise<DeltaAction[]>>();

export function cachedActions(uri: string, etag: string | undefined, read: () => Promise<DeltaAction[]>): Promise<DeltaAction[]> {
  if (!etag) return read();
  const id = `${uri}\u0000${etag}`;
  const hit = cache.get(id);
  if (hit) {
    cache.delete(id);
    cache.set(id, hit);
    return hit;
  }
  const pending = read();
  cache.set(id, pending);
  pending.catch(() => cache.delete(id));
  while (cache.size > MAX_ENTRIES) cache.delete(cache.keys().next().value!);
  return pending;
}
