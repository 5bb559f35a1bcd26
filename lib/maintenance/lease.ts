/**
 * The per-table cleanup lease, `_lakewarden/lease`: one cleaner per table at a time.
 *
 * Every write is conditional, so exactly one contender wins each step:
 *   acquire  = create with If-None-Match: *; if it exists and has expired or was released,
 *              take it over with If-Match on the ETag just read;
 *   renew    = replace with If-Match on our own ETag (412 → someone took it: we stop);
 *   release  = replace with If-Match, marking it released (never a blind delete).
 * Expiry is judged by the reader's clock against the holder's `expires_at`: keep durations
 * well above any clock skew between hosts (the default, 15 minutes, is a Lambda's whole life).
 *
 * A lease is also taken over before it expires when its holder is provably dead: the lease
 * records the holder's hostname and pid, and a contender on the same hostname finds no such
 * process (a cleanup killed by SIGKILL, OOM or a reboot). A holder on another host, or one
 * that recorded no host (Lambda, where sandboxes are not one machine), is only waited out.
 * `inspectLease` says which case a stored lease is; `breakLease` releases one by hand.
 */
import { hostname } from "node:os";
import { randomUUID } from "node:crypto";
import type { ObjectStore } from "../store/object-store.ts";
import { ConflictError, NotFoundError, PreconditionFailedError } from "../store/errors.ts";
import { LeaseHeldError, LeaseLostError } from "./errors.ts";

export { LEASE_KEY } from "../model/layout.ts";
import { LEASE_KEY } from "../model/layout.ts";
export const DEFAULT_LEASE_DURATION_MS = 15 * 60_000;

export interface LeaseRecord {
  run_id: string;
  owner: string;
  purpose: string;
  /** The holder's hostname, when a process on the same host can tell whether it still runs (null on Lambda). */
  host: string | null;
  /** The holder's process id on `host`. */
  pid: number | null;
  acquired_at: string;
  expires_at: string;
  released_at: string | null;
}

export interface LeaseOptions {
  /** How long the lease lasts without renewal (default 15 minutes). */
  durationMs?: number;
  /** Identifies this run in the lease and in others' error messages (default: a random UUID). */
  runId?: string;
  /** Who holds it, for people reading the lease (default host:pid). */
  owner?: string;
  purpose?: string;
  now?: () => Date;
}

export class Lease {
  readonly store: ObjectStore;
  readonly record: LeaseRecord;
  /** The holder we took an expired or released lease over from, if any. */
  readonly tookOverFrom: LeaseRecord | null;
  /** Why the lease could be taken over from `tookOverFrom`: "released", "expired" or "holder dead" (null when there was none). */
  readonly tookOverBecause: LeaseState | null;
  private etag: string;
  private expiresAtMillis: number;
  private released = false;
  /** The renewal in flight: parallel delete batches renew at once, and a second If-Match on the same ETag would lose to the first. */
  private renewing: Promise<void> | null = null;
  private readonly durationMs: number;
  private readonly now: () => Date;

  private constructor(
    store: ObjectStore,
    record: LeaseRecord,
    etag: string,
    tookOverFrom: LeaseRecord | null,
    tookOverBecause: LeaseState | null,
    durationMs: number,
    now: () => Date,
  ) {
    this.store = store;
    this.record = record;
    this.etag = etag;
    this.tookOverFrom = tookOverFrom;
    this.tookOverBecause = tookOverBecause;
    this.durationMs = durationMs;
    this.now = now;
    this.expiresAtMillis = Date.parse(record.expires_at);
  }

  /** Takes the table's lease or throws LeaseHeldError naming who holds it and until when. */
  static async acquire(store: ObjectStore, options: LeaseOptions = {}): Promise<Lease> {
    const now = options.now ?? (() => new Date());
    const durationMs = options.durationMs ?? DEFAULT_LEASE_DURATION_MS;
    const runId = options.runId ?? randomUUID();
    const owner = options.owner ?? `${hostname()}:${process.pid}`;
    const purpose = options.purpose ?? "cleanup";
    const uri = store.uriOf(LEASE_KEY);
    const fresh = (): LeaseRecord => {
      const at = now();
      return {
        run_id: runId,
        owner,
        purpose,
        host: THIS_HOST,
        pid: process.pid,
        acquired_at: at.toISOString(),
        expires_at: new Date(at.getTime() + durationMs).toISOString(),
        released_at: null,
      };
    };

    for (let attempt = 0; attempt < 3; attempt++) {
      const record = fresh();
      try {
        const { etag } = await store.put(LEASE_KEY, encode(record), { ifNoneMatch: "*", contentType: "application/json" });
        return new Lease(store, record, etag, null, null, durationMs, now);
      } catch (error) {
        if (error instanceof ConflictError) continue;
        if (!(error instanceof PreconditionFailedError)) throw error;
      }
      let current: { record: LeaseRecord | null; etag: string };
      try {
        current = await readLease(store);
      } catch (error) {
        if (error instanceof NotFoundError) continue;
        throw error;
      }
      const state = current.record ? leaseState(current.record, now().getTime()) : null;
      if (current.record && state === "held") {
        throw new LeaseHeldError(`${uri}: ${describeHolder(current.record)}; this run stops without touching the table`, { uri });
      }
      const takeover = fresh();
      try {
        const { etag } = await store.put(LEASE_KEY, encode(takeover), { ifMatch: current.etag, contentType: "application/json" });
        return new Lease(store, takeover, etag, current.record, state, durationMs, now);
      } catch (error) {
        if (error instanceof PreconditionFailedError || error instanceof ConflictError || error instanceof NotFoundError) {
          throw new LeaseHeldError(`${uri}: another cleaner took over the expired lease at the same moment; this run stops without touching the table`, { uri, cause: error });
        }
        throw error;
      }
    }
    throw new LeaseHeldError(`${uri}: the lease kept changing while this run tried to take it; try again`, { uri });
  }

  get expiresAt(): Date {
    return new Date(this.expiresAtMillis);
  }

  /** Throws LeaseLostError if, by our clock, the lease has run out (another cleaner may hold it now). */
  assertHeld(): void {
    if (this.released || this.now().getTime() >= this.expiresAtMillis) {
      throw new LeaseLostError(`${this.store.uriOf(LEASE_KEY)}: this run's lease expired at ${this.expiresAt.toISOString()}; stopping before deleting more`, {
        uri: this.store.uriOf(LEASE_KEY),
      });
    }
  }

  /** Extends the lease by its full duration (If-Match on our ETag); concurrent calls share one write. */
  renew(): Promise<void> {
    this.renewing ??= this.writeRenewal().finally(() => {
      this.renewing = null;
    });
    return this.renewing;
  }

  private async writeRenewal(): Promise<void> {
    this.assertHeld();
    const uri = this.store.uriOf(LEASE_KEY);
    const expires = new Date(this.now().getTime() + this.durationMs);
    const record: LeaseRecord = { ...this.record, expires_at: expires.toISOString() };
    try {
      const { etag } = await this.store.put(LEASE_KEY, encode(record), { ifMatch: this.etag, contentType: "application/json" });
      this.etag = etag;
      this.expiresAtMillis = expires.getTime();
    } catch (error) {
      if (error instanceof PreconditionFailedError || error instanceof NotFoundError) {
        throw new LeaseLostError(`${uri}: this run's lease was taken over or removed; stopping before deleting more`, { uri, cause: error });
      }
      throw error;
    }
  }

  /** Renews when less than half the duration remains; cheap to call between steps. */
  async renewIfDue(): Promise<void> {
    if (this.expiresAtMillis - this.now().getTime() < this.durationMs / 2) await this.renew();
    else this.assertHeld();
  }

  /**
   * Marks the lease released (If-Match on our ETag). Returns false, without throwing, when it
   * could not: it was taken over, or the write failed; it then simply expires.
   */
  async release(): Promise<boolean> {
    if (this.released) return true;
    // A renewal still in flight would change the ETag this release is conditional on.
    await this.renewing?.catch(() => undefined);
    const at = this.now().toISOString();
    const record: LeaseRecord = { ...this.record, expires_at: at, released_at: at };
    try {
      await this.store.put(LEASE_KEY, encode(record), { ifMatch: this.etag, contentType: "application/json" });
      this.released = true;
      return true;
    } catch {
      return false;
    }
  }
}

/** The stored lease, if any: null record when its body is unreadable (then anyone may take it over). */
export async function readLease(store: ObjectStore): Promise<{ record: LeaseRecord | null; etag: string }> {
  const { body, etag } = await store.get(LEASE_KEY);
  return { record: decode(body), etag };
}

/**
 * What a stored lease means now: "released" (its run finished), "expired" (its run stopped
 * renewing), "holder dead" (same host, no such process: killed), or "held" (a live run, or one
 * this host cannot judge). Only "held" keeps a contender out.
 */
export type LeaseState = "released" | "expired" | "holder dead" | "held";

export function leaseState(record: LeaseRecord, nowMillis: number): LeaseState {
  if (record.released_at !== null) return "released";
  if (Date.parse(record.expires_at) <= nowMillis) return "expired";
  if (holderIsDead(record)) return "holder dead";
  return "held";
}

/** True only when the holder ran on this host and its process is gone. */
function holderIsDead(record: LeaseRecord): boolean {
  if (THIS_HOST === null || record.host !== THIS_HOST || record.pid === null) return false;
  if (record.pid === process.pid) return false;
  try {
    process.kill(record.pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
}

/**
 * This host's name as leases record it. Null on AWS Lambda: a sandbox's hostname and pid say
 * nothing about a process in another sandbox, so Lambda holders are only ever waited out.
 */
const THIS_HOST: string | null = process.env.AWS_LAMBDA_FUNCTION_NAME ? null : hostname();

function describeHolder(record: LeaseRecord): string {
  return `another ${record.purpose} holds this table's lease (run ${record.run_id} on ${record.owner}, ` + `since ${record.acquired_at}, until ${record.expires_at})`;
}

/** The warning a run gives when it took over a lease its holder never released. */
export function describeTakeover(from: LeaseRecord, because: LeaseState | null): string {
  if (because === "holder dead") {
    return `took over the lease of run ${from.run_id} (${from.owner}) before it expired: its process ${from.pid} no longer exists on this host; that run stopped without releasing it`;
  }
  return `took over the expired lease of run ${from.run_id} (${from.owner}): that run stopped without releasing it`;
}

export interface LeaseInspection {
  /** The stored lease, null when there is none (or its body is unreadable: `unreadable` says which). */
  record: LeaseRecord | null;
  state: LeaseState | "none" | "unreadable";
  /** One sentence for people: who holds it and what happens next. */
  description: string;
  etag: string | null;
}

/** Reads the table's lease and says what it means now (`lakewarden lease show`). */
export async function inspectLease(store: ObjectStore, now: Date = new Date()): Promise<LeaseInspection> {
  let stored: { record: LeaseRecord | null; etag: string };
  try {
    stored = await readLease(store);
  } catch (error) {
    if (error instanceof NotFoundError) return { record: null, state: "none", description: "no lease: no cleanup has run here yet", etag: null };
    throw error;
  }
  const { record, etag } = stored;
  if (!record) return { record: null, state: "unreadable", description: "the lease is unreadable: the next cleanup takes it over", etag };
  const state = leaseState(record, now.getTime());
  const who = `run ${record.run_id} (${record.purpose}) on ${record.owner}`;
  const description: Record<LeaseState, string> = {
    released: `free: ${who} released it at ${record.released_at}`,
    expired: `free: ${who} stopped renewing it; it expired at ${record.expires_at}`,
    "holder dead": `free: ${who} held it until ${record.expires_at}, but process ${record.pid} no longer exists on this host (${record.host}); the next cleanup takes it over`,
    held:
      record.host !== null && record.host === THIS_HOST
        ? `held by ${who}, process ${record.pid} on this host, still running; until ${record.expires_at} unless renewed`
        : `held by ${who} on host ${record.host ?? "(not recorded: Lambda)"}, which this host cannot check; until ${record.expires_at} unless renewed`,
  };
  return { record, state, description: description[state], etag };
}

export interface BreakResult {
  /** What the lease was before: "none" means there was nothing to break. */
  before: LeaseInspection;
  /** True when this call marked it released. */
  broken: boolean;
}

/**
 * Marks the table's lease released (a conditional replace on the ETag just read, never a blind
 * delete), so the next cleanup starts at once. A lease still held by a live or unjudgeable
 * holder is refused with LeaseHeldError unless `force`: that holder then loses its lease at its
 * next renewal and stops before deleting more.
 */
export async function breakLease(store: ObjectStore, options: { force?: boolean; now?: Date } = {}): Promise<BreakResult> {
  const now = options.now ?? new Date();
  const before = await inspectLease(store, now);
  const uri = store.uriOf(LEASE_KEY);
  if (before.state === "none" || before.state === "released") return { before, broken: false };
  if (before.state === "held" && !options.force) {
    throw new LeaseHeldError(`${uri}: ${before.description}; not broken (use --force if that run is really gone: it stops at its next renewal)`, { uri });
  }
  const at = now.toISOString();
  const record: LeaseRecord = before.record
    ? { ...before.record, expires_at: at, released_at: at }
    : { run_id: "unknown", owner: "unknown", purpose: "cleanup", host: null, pid: null, acquired_at: at, expires_at: at, released_at: at };
  try {
    await store.put(LEASE_KEY, encode({ ...record, broken_by: `${hostname()}:${process.pid}` } as LeaseRecord), { ifMatch: before.etag!, contentType: "application/json" });
  } catch (error) {
    if (error instanceof PreconditionFailedError || error instanceof ConflictError || error instanceof NotFoundError) {
      throw new LeaseHeldError(`${uri}: the lease changed while it was being broken (a cleanup took or renewed it); look again with lease show`, { uri, cause: error });
    }
    throw error;
  }
  return { before, broken: true };
}

function encode(record: LeaseRecord): Uint8Array {
  return new TextEncoder().encode(`${JSON.stringify(record, null, 2)}\n`);
}

function decode(body: Uint8Array): LeaseRecord | null {
  try {
    const value = JSON.parse(new TextDecoder().decode(body)) as Partial<LeaseRecord>;
    if (typeof value.run_id !== "string" || typeof value.expires_at !== "string" || Number.isNaN(Date.parse(value.expires_at))) return null;
    return {
      run_id: value.run_id,
      owner: String(value.owner ?? "unknown"),
      purpose: String(value.purpose ?? "cleanup"),
      acquired_at: String(value.acquired_at ?? ""),
      expires_at: value.expires_at,
      released_at: typeof value.released_at === "string" ? value.released_at : null,
      host: typeof value.host === "string" ? value.host : null,
      pid: typeof value.pid === "number" && Number.isSafeInteger(value.pid) ? value.pid : null,
    };
  } catch {
    return null;
  }
}
