/**
 * Reader pins: `_lakewarden/pins/{id}.json`, one small object per pin. A pin names a version
 * (its ordering number and the format's id) and an absolute expiry; cleanup keeps the pinned
 * version, and every file it references, until then. Pins are plain objects in the store, so
 * they work across processes and machines; an expired or malformed pin is ignored (and
 * reported), never an error: a reader that died cannot keep history forever.
 */
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { PINS_PREFIX, pinKey } from "../model/layout.ts";
import { NotFoundError } from "../store/errors.ts";
import type { ObjectStore } from "../store/object-store.ts";
import { objectExists } from "../store/object-exists.ts";

export { PINS_PREFIX } from "../model/layout.ts";

export interface PinRecord {
  id: string;
  /** The pinned version's ordering number (VersionRecord.version). */
  version: number;
  /** The format's id of that version (VersionRecord.version_id). */
  version_id: string;
  created_at: string;
  expires_at: string;
  note: string | null;
  /** Who wrote it, for people reading pins. */
  host: string | null;
  pid: number | null;
}

export interface PinsRead {
  /** Pins that hold: well-formed and not yet expired, ascending by version. */
  active: PinRecord[];
  /** Well-formed pins whose expiry has passed (ignored by cleanup). */
  expired: PinRecord[];
  /** One line per pin ignored: expired or malformed. */
  problems: string[];
}

export interface CreatePinInput {
  version: number;
  versionId?: string;
  ttlMs: number;
  note?: string | null;
  now?: Date;
}

function assertTtl(ttlMs: number): void {
  if (!Number.isFinite(ttlMs) || ttlMs <= 0) throw new RangeError(`a pin's time to live must be more than 0 ms, got ${ttlMs}`);
}

/** Writes a new pin (create-only) and returns it. */
export async function createPin(store: ObjectStore, input: CreatePinInput): Promise<PinRecord> {
  assertTtl(input.ttlMs);
  if (!Number.isSafeInteger(input.version) || input.version < 0) throw new RangeError(`a pinned version must be a version number, got ${input.version}`);
  const now = input.now ?? new Date();
  const record: PinRecord = {
    id: randomUUID(),
    version: input.version,
    version_id: input.versionId ?? String(input.version),
    created_at: now.toISOString(),
    expires_at: new Date(now.getTime() + input.ttlMs).toISOString(),
    note: input.note ?? null,
    host: process.env.AWS_LAMBDA_FUNCTION_NAME ? null : hostname(),
    pid: process.pid,
  };
  await store.put(pinKey(record.id), encode(record), { ifNoneMatch: "*", contentType: "application/json" });
  return record;
}

/** Moves a pin's expiry to `now + ttlMs`. NotFoundError when the pin is gone (released or cleaned away). */
export async function renewPin(store: ObjectStore, id: string, ttlMs: number, now: Date = new Date()): Promise<PinRecord> {
  assertTtl(ttlMs);
  const got = await store.get(pinKey(id));
  const record = parsePin(got.body, id);
  if (typeof record === "string") throw new NotFoundError(`${store.uriOf(pinKey(id))}: ${record}`, { uri: store.uriOf(pinKey(id)) });
  const renewed: PinRecord = { ...record, expires_at: new Date(now.getTime() + ttlMs).toISOString() };
  await store.put(pinKey(id), encode(renewed), { ifMatch: got.etag, contentType: "application/json" });
  return renewed;
}

/** Deletes a pin; false when there was none by that id. */
export async function releasePin(store: ObjectStore, id: string): Promise<boolean> {
  assertPinId(id);
  if (!(await objectExists(store, pinKey(id)))) return false;
  const result = await store.deleteMany([pinKey(id)]);
  if (result.failed.length > 0) throw new Error(`${store.uriOf(pinKey(id))}: not deleted: ${result.failed[0]!.message}`);
  return true;
}

/** Every pin under `_lakewarden/pins/`, sorted into those that hold and those ignored (with why). */
export async function readPins(store: ObjectStore, now: Date = new Date()): Promise<PinsRead> {
  const active: PinRecord[] = [];
  const expired: PinRecord[] = [];
  const problems: string[] = [];
  const keys: string[] = [];
  for await (const object of store.list(PINS_PREFIX)) keys.push(object.key);
  await Promise.all(
    keys.map(async (key) => {
      const id = key.slice(PINS_PREFIX.length).replace(/\.json$/, "");
      let body: Uint8Array;
      try {
        body = (await store.get(key)).body;
      } catch (error) {
        if (error instanceof NotFoundError) return; // released meanwhile
        throw error;
      }
      const parsed = key.endsWith(".json") ? parsePin(body, id) : "not a pin file (no .json)";
      if (typeof parsed === "string") {
        problems.push(`pin ${store.uriOf(key)} ignored: ${parsed}`);
        return;
      }
      if (Date.parse(parsed.expires_at) <= now.getTime()) {
        expired.push(parsed);
        problems.push(`pin ${parsed.id} on version ${parsed.version} ignored: expired at ${parsed.expires_at}`);
        return;
      }
      active.push(parsed);
    }),
  );
  const byVersion = (a: PinRecord, b: PinRecord) => a.version - b.version || a.expires_at.localeCompare(b.expires_at) || a.id.localeCompare(b.id);
  problems.sort();
  return { active: active.sort(byVersion), expired: expired.sort(byVersion), problems };
}

/** The pin's record, or why it is malformed. */
export function parsePin(body: Uint8Array, id: string): PinRecord | string {
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder().decode(body));
  } catch {
    return "malformed: not JSON";
  }
  if (typeof value !== "object" || value === null) return "malformed: not a JSON object";
  const v = value as Record<string, unknown>;
  if (!Number.isSafeInteger(v.version) || (v.version as number) < 0) return "malformed: no version number";
  if (typeof v.expires_at !== "string" || Number.isNaN(Date.parse(v.expires_at))) return "malformed: no valid expires_at";
  return {
    id,
    version: v.version as number,
    version_id: typeof v.version_id === "string" ? v.version_id : String(v.version),
    created_at: typeof v.created_at === "string" ? v.created_at : "",
    expires_at: new Date(Date.parse(v.expires_at)).toISOString(),
    note: typeof v.note === "string" ? v.note : null,
    host: typeof v.host === "string" ? v.host : null,
    pid: typeof v.pid === "number" ? v.pid : null,
  };
}

/** A pin id is a single path segment: never a key outside `_lakewarden/pins/`. */
export function assertPinId(id: string): void {
  if (!/^[A-Za-z0-9._-]+$/.test(id) || id === "." || id === "..") throw new RangeError(`not a pin id: ${JSON.stringify(id)}`);
}

/** Why a pinned version is kept, as reports say it. */
export function describePin(pin: Pick<PinRecord, "id" | "expires_at" | "note">): string {
  return `pin ${pin.id} until ${pin.expires_at}${pin.note ? ` (${JSON.stringify(pin.note)})` : ""}`;
}

function encode(record: PinRecord): Uint8Array {
  return new TextEncoder().encode(`${JSON.stringify(record, null, 2)}\n`);
}
