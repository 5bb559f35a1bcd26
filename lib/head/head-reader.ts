/**
 * Reading a stored head the way a loader needs it: one ranged GET of the first
 * LOAD_PREFIX_BYTES (the whole head when it is smaller; the timeline reads only the first
 * HEAD_PREFIX_BYTES), then
 *
 * - a sectioned head (header version 2): the properties section says which version file it
 *   describes; `isCurrent` decides with that alone, so a stale or foreign head costs no
 *   decompression. When the head is larger than the prefix, the rest of its bytes come in one
 *   more ranged GET made while `isCurrent` decides (a stale head's rest is transferred and
 *   dropped); every section checksum of a current head is verified, and the content is decoded
 *   section by section as it is used (sectioned-content.ts);
 * - a version 1 head (or anything else): the rest in one more ranged GET, decoded whole as before.
 */
import type { ObjectStore } from "../store/object-store.ts";
import { InvalidRangeError, NotFoundError } from "../store/errors.ts";
import { CorruptHeadError, UnsupportedHeadError } from "./errors.ts";
import { decodeHeader } from "./header.ts";
import type { HeadHeader } from "./header.ts";
import type { HeadCodecRegistry } from "./registry.ts";
import { HEAD_PREFIX_BYTES, LOAD_PREFIX_BYTES, PROPERTIES_SECTION, SECTIONED_HEADER_VERSION, SectionedHead } from "./sectioned.ts";
import { headIdentity, headRecentRecords, sectionedContent } from "./sectioned-content.ts";
import type { HeadIdentity } from "./sectioned-content.ts";
import { HEAD_KEY, interpretStoredHead } from "./stored-head.ts";
import type { StoredHead, StoredHeadProbe } from "./stored-head.ts";
import type { RecentVersions } from "./content.ts";
import type { VersionFile } from "../formats/table-format.ts";

interface HeadObject {
  etag: string;
  size: number;
  body: Uint8Array;
}

/** The first bytes of the head; null when there is none. An empty object reads as zero bytes. */
async function getPrefix(store: ObjectStore, bytes: number): Promise<HeadObject | null> {
  try {
    return await store.get(HEAD_KEY, { offset: 0, length: bytes });
  } catch (error) {
    if (error instanceof NotFoundError) return null;
    if (!(error instanceof InvalidRangeError)) throw error;
    const info = await store.head(HEAD_KEY);
    return { etag: info.etag, size: info.size, body: new Uint8Array(0) };
  }
}

/**
 * `object` completed up to `length` bytes (at most its size) with one ranged GET. The object
 * must not change in between (same ETag): a head replaced meanwhile is read again whole.
 */
async function completeTo(store: ObjectStore, object: HeadObject, length: number): Promise<HeadObject> {
  const want = Math.min(length, object.size);
  if (object.body.length >= want) return object;
  const rest = await store.get(HEAD_KEY, { offset: object.body.length, length: want - object.body.length });
  if (rest.etag !== object.etag) {
    // Replaced between the two reads: the newer head, whole.
    return await store.get(HEAD_KEY);
  }
  const body = new Uint8Array(object.body.length + rest.body.length);
  body.set(object.body, 0);
  body.set(rest.body, object.body.length);
  return { etag: object.etag, size: object.size, body };
}

function probeOf(object: HeadObject, header: HeadHeader): StoredHeadProbe {
  return { etag: object.etag, size: object.size, tableVersion: header.tableVersion, header };
}

function parseHeader(body: Uint8Array, uri: string): HeadHeader | null {
  try {
    return decodeHeader(body, uri);
  } catch {
    return null;
  }
}

/**
 * A sectioned head of which the properties (and, when `also` names them, those sections) are
 * held; null when the object is not a sectioned head (caller reads it whole).
 */
async function openSectioned(store: ObjectStore, object: HeadObject, uri: string, registry: HeadCodecRegistry, also: readonly string[] = []) {
  const header = parseHeader(object.body, uri);
  if (header?.headerVersion !== SECTIONED_HEADER_VERSION) return null;
  let current = object;
  if (current.body.length < header.headerLength) current = await completeTo(store, current, current.size);
  const currentHeader = current === object ? header : parseHeader(current.body, uri);
  if (currentHeader?.headerVersion !== SECTIONED_HEADER_VERSION) return { object: current, head: null };
  let head = SectionedHead.open(current.body, uri, registry, currentHeader);
  if (!head.holds([PROPERTIES_SECTION, ...also])) {
    current = await completeTo(store, current, current.size);
    if (current.etag !== object.etag) return { object: current, head: null };
    head = SectionedHead.open(current.body, uri, registry, currentHeader);
  }
  return { object: current, head };
}

export type LoadedHead =
  | StoredHead
  | { state: "failed"; problem: string }
  /** A sectioned head that does not describe the version file asked for: only its properties were decoded. */
  | { state: "not-current"; probe: StoredHeadProbe; identity: HeadIdentity };

/**
 * The head as a loader uses it: `isCurrent` is asked with the head's identity (from its
 * properties) before anything else of a sectioned head is read or decompressed.
 */
export async function loadStoredHead(
  store: ObjectStore,
  registry: HeadCodecRegistry,
  isCurrent: (identity: HeadIdentity) => Promise<boolean>,
  prefixBytes: number = LOAD_PREFIX_BYTES,
): Promise<LoadedHead> {
  const uri = store.uriOf(HEAD_KEY);
  const object = await getPrefix(store, prefixBytes);
  if (!object) return { state: "missing" };
  let opened;
  try {
    opened = await openSectioned(store, object, uri, registry);
  } catch (error) {
    return unreadable(object, uri, error);
  }
  if (!opened || !opened.head) {
    const whole = await completeTo(store, opened?.object ?? object, Number.MAX_SAFE_INTEGER);
    return interpretStoredHead(whole, uri, registry);
  }
  let { head } = opened;
  const probe = probeOf(opened.object, head.header);
  try {
    const identity = headIdentity(head);
    // The rest is fetched while `isCurrent` decides (often a LIST): a round trip saved for a
    // current head; a stale one wastes those bytes in transfer, never in decompression.
    const rest = head.bytes.length < head.totalLength ? completeTo(store, opened.object, head.totalLength) : null;
    rest?.catch(() => undefined);
    if (!(await isCurrent(identity))) return { state: "not-current", probe, identity };
    if (rest) {
      const whole = await rest;
      if (whole.etag !== opened.object.etag) return interpretStoredHead(whole, uri, registry);
      head = head.withRest(whole.body.subarray(head.bytes.length));
    }
    if (head.bytes.length !== head.totalLength) throw new CorruptHeadError(uri, `head truncated: ${head.bytes.length} bytes, its header promises ${head.totalLength}`);
    head.verifyChecksums();
    return { state: "readable", probe, content: sectionedContent(head), bytes: head.bytes.length };
  } catch (error) {
    return { state: "unreadable", probe, problem: error instanceof Error ? error.message : String(error), error };
  }
}

function unreadable(object: HeadObject, uri: string, error: unknown): StoredHead {
  const header = parseHeader(object.body, uri);
  const probe: StoredHeadProbe = { etag: object.etag, size: object.size, tableVersion: header?.tableVersion ?? null, header };
  return { state: "unreadable", probe, problem: error instanceof Error ? error.message : String(error), error };
}

export interface HeadTimeline {
  format: string;
  tableVersion: number;
  /** The version file the head was written for. */
  versionFile: VersionFile;
  recentVersions: RecentVersions;
}

/**
 * The versions since the checkpoint, as cheaply as the head allows: a sectioned head's
 * prefix usually holds them (one ranged GET, two sections decoded); a version 1 head is
 * read whole. null when there is no readable head.
 */
export async function readHeadTimeline(store: ObjectStore, registry: HeadCodecRegistry): Promise<HeadTimeline | null> {
  const uri = store.uriOf(HEAD_KEY);
  const object = await getPrefix(store, HEAD_PREFIX_BYTES);
  if (!object) return null;
  try {
    const opened = await openSectioned(store, object, uri, registry, ["recent_versions"]);
    if (opened?.head) {
      const identity = headIdentity(opened.head);
      return { format: identity.format, tableVersion: identity.tableVersion, versionFile: identity.versionFile, recentVersions: headRecentRecords(opened.head) };
    }
    const whole = await completeTo(store, opened?.object ?? object, Number.MAX_SAFE_INTEGER);
    const stored = interpretStoredHead(whole, uri, registry);
    if (stored.state !== "readable") return null;
    const { content } = stored;
    return { format: content.format, tableVersion: content.tableVersion, versionFile: content.snapshot.versionFile, recentVersions: content.recentVersions };
  } catch (error) {
    if (error instanceof CorruptHeadError || error instanceof UnsupportedHeadError) return null;
    throw error;
  }
}
