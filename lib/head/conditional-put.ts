/**
 * The head's write rule: replace a stored head only with `If-Match` on the ETag just read and
 * only with a newer table version (or the same version in another codec); create it with
 * `If-None-Match: *`. A lost race (412), a conflicting request (409) or a head deleted
 * meanwhile (404 on If-Match) means: read the first bytes again and decide again. Since every
 * replace is conditional on the bytes it judged, racing writers can never move the head back.
 */
import type { ObjectStore } from "../store/object-store.ts";
import { ConflictError, NotFoundError, PreconditionFailedError } from "../store/errors.ts";
import { HeadWriteContentionError } from "./errors.ts";
import { HEAD_KEY, probeStoredHead } from "./stored-head.ts";
import type { StoredHeadProbe } from "./stored-head.ts";

export type HeadWriteAction =
  | "created"
  | "replaced"
  /** The stored head already holds this version (in this codec): nothing to do. */
  | "skipped-same-version"
  /** The stored head holds a newer version: writing would move it back. */
  | "skipped-newer-present";

export interface HeadWriteResult {
  action: HeadWriteAction;
  /** The version this writer offered. */
  version: number;
  /** The version the stored head held when the writer decided (null: none, or unreadable). */
  storedVersion: number | null;
  /** ETag of the head written (created/replaced) or found (skipped). */
  etag: string | null;
  /** Conditional PUTs tried, including the successful one. */
  attempts: number;
  /** Attempts lost to 412 / 409 / 404. */
  lostRaces: number;
  /** Bytes written (0 when skipped). */
  bytes: number;
}

export interface ConditionalWriteOptions {
  /** Give up (HeadWriteContentionError) after this many lost attempts (default 25). */
  maxAttempts?: number;
  /** Backoff after a lost attempt: full jitter on min(maxMs, baseMs·2^n) (default 10 ms, 500 ms). */
  backoff?: { baseMs: number; maxMs: number };
  random?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

export interface HeadToWrite {
  bytes: Uint8Array;
  version: number;
  codec: string;
  /**
   * Replace a head of the same version when its ETag is this one: the caller read it whole and
   * found it describes another version file (a recreated table). Any other same-version head is kept.
   */
  replaceSameVersionEtag?: string;
}

const DEFAULT_MAX_ATTEMPTS = 25;
const DEFAULT_BACKOFF = { baseMs: 10, maxMs: 500 };

/**
 * Writes `head` under the rule above. `known` is what the caller already read of the stored
 * head (saves the first probe); undefined means "probe first".
 */
export async function putHeadConditionally(store: ObjectStore, head: HeadToWrite, options: ConditionalWriteOptions = {}, known?: StoredHeadProbe | null): Promise<HeadWriteResult> {
  const maxAttempts = options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  const backoff = options.backoff ?? DEFAULT_BACKOFF;
  const random = options.random ?? Math.random;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  let stored = known === undefined ? await probeStoredHead(store) : known;
  let lostRaces = 0;
  let lastError: unknown;
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    const skip = skipReason(stored, head);
    const result = { version: head.version, storedVersion: stored?.tableVersion ?? null, lostRaces, attempts: attempt - 1 };
    if (skip) return { ...result, action: skip, etag: stored?.etag ?? null, bytes: 0 };
    try {
      const put = await store.put(HEAD_KEY, head.bytes, stored ? { ifMatch: stored.etag } : { ifNoneMatch: "*" });
      return { ...result, attempts: attempt, action: stored ? "replaced" : "created", etag: put.etag, bytes: head.bytes.length };
    } catch (error) {
      if (!(error instanceof PreconditionFailedError || error instanceof ConflictError || error instanceof NotFoundError)) throw error;
      lastError = error;
      lostRaces++;
    }
    await sleep(random() * Math.min(backoff.maxMs, backoff.baseMs * 2 ** (attempt - 1)));
    stored = await probeStoredHead(store);
  }
  throw new HeadWriteContentionError(store.uriOf(HEAD_KEY), maxAttempts, { cause: lastError });
}

function skipReason(stored: StoredHeadProbe | null, head: HeadToWrite): HeadWriteAction | null {
  // No head, or something that is not a head (foreign, truncated, garbage): replace it.
  if (stored === null || stored.tableVersion === null) return null;
  if (stored.tableVersion > head.version) return "skipped-newer-present";
  if (stored.tableVersion < head.version) return null;
  // Same version: rewrite only a head known to be wrong, or to change the codec (when we can read which one it has).
  if (head.replaceSameVersionEtag !== undefined && head.replaceSameVersionEtag === stored.etag) return null;
  return stored.header === null || stored.header.codec === head.codec ? "skipped-same-version" : null;
}
