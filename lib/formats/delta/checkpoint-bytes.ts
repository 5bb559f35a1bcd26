/**
 * The bytes of checkpoint parts and sidecars, read once per store (one store per run: a cleanup,
 * a `versions`) and object version. A cleanup needs the newest checkpoint three times, whole:
 * the snapshot it replays from, log cleanup's proof that it decodes (cleanup.ts proveCheckpoint)
 * and the proof stage's proveFile; each read the object again, which on a large table is the
 * run's largest GET, three times over.
 *
 * Keyed by key and size as the listing saw them, and the ETag where the caller's listing has
 * one: a checkpoint written again (a racing writer, a repair) has a new ETag and is read afresh; a
 * GET that answers with another ETag or size than the one asked for is used once and not kept. Held by the store object, so a run's bytes go with
 * it; at most MAX_BYTES kept per store (a bigger checkpoint is read each time, as before).
 */
import type { ObjectStore } from "../../store/object-store.ts";

/** The listing's identity of the file (ETag and size); without one, nothing is kept. */
export interface LogFileIdentity {
  etag?: string;
  size?: number;
}

const MAX_BYTES = 256 * 1024 * 1024;

interface StoreBytes {
  /** By key and size; insertion order is age: the oldest go first. */
  bodies: Map<string, { body: Promise<Uint8Array>; size: number; etag: string | null }>;
  bytes: number;
}

const byStore = new WeakMap<ObjectStore, StoreBytes>();

function forget(held: StoreBytes, id: string, body: Promise<Uint8Array>): void {
  const entry = held.bodies.get(id);
  if (!entry || entry.body !== body) return;
  held.bodies.delete(id);
  held.bytes -= entry.size;
}

export function checkpointFileBytes(store: ObjectStore, key: string, identity: LogFileIdentity = {}): Promise<Uint8Array> {
  const etag = identity.etag || null;
  const { size } = identity;
  if (size === undefined || size > MAX_BYTES) return store.get(key).then((object) => object.body);
  let held = byStore.get(store);
  if (!held) {
    held = { bodies: new Map(), bytes: 0 };
    byStore.set(store, held);
  }
  const id = `${key}\u0000${size}`;
  const hit = held.bodies.get(id);
  // Some listings carry no ETag (keys and sizes only): then the key and size say which object it is.
  if (hit && (etag === null || hit.etag === null || hit.etag === etag)) return hit.body;
  if (hit) forget(held, id, hit.body);
  const kept = held;
  const body: Promise<Uint8Array> = store.get(key).then((object) => {
    // Another version of the object than the one asked for: this caller's alone.
    if ((etag !== null && object.etag !== etag) || object.body.byteLength !== size) forget(kept, id, body);
    else {
      const entry = kept.bodies.get(id);
      if (entry?.body === body) entry.etag = object.etag || null;
    }
    return object.body;
  });
  body.catch(() => forget(kept, id, body));
  held.bodies.set(id, { body, size, etag });
  held.bytes += size;
  for (const [other, entry] of held.bodies) {
    if (held.bytes <= MAX_BYTES || other === id) break;
    forget(held, other, entry.body);
  }
  return body;
}
