/**
 * A per-key lock file for LocalStore's compare-and-swap, safe across processes on one host
 * (and on shared filesystems where O_EXCL is atomic).
 *
 * The lock guards only a stat, a compare and a rename, so it is held for milliseconds. A lock
 * whose owner died (its pid is gone on this host) or that is older than `staleMs` is presumed
 * abandoned and broken. Breaking renames the lock aside first and checks it is still the one
 * judged stale, so two processes recovering at once cannot both remove a fresh lock.
 */
import { randomUUID } from "node:crypto";
import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from "node:fs";
import { link, mkdir, rename, stat, unlink } from "node:fs/promises";
import { hostname } from "node:os";
import { dirname } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { ConflictError } from "./errors.ts";

export interface LockTiming {
  /** A lock older than this is presumed abandoned by a crashed writer. */
  staleMs: number;
  /** Give up (ConflictError) after waiting this long for a live lock. */
  timeoutMs: number;
}

interface LockOwner {
  pid: number;
  host: string;
  token: string;
}

const HOST = hostname();

/** Runs `work` while holding the lock file at `lockPath`. `uri` names the object in errors. */
export async function withLockFile<T>(lockPath: string, uri: string, timing: LockTiming, work: () => Promise<T>): Promise<T> {
  const token = await acquire(lockPath, uri, timing);
  try {
    return await work();
  } finally {
    await release(lockPath, token);
  }
}

async function acquire(lockPath: string, uri: string, timing: LockTiming): Promise<string> {
  const owner: LockOwner = { pid: process.pid, host: HOST, token: randomUUID() };
  const deadline = Date.now() + timing.timeoutMs;
  for (let attempt = 0; ; attempt++) {
    try {
      // Synchronous: a lock file is a create, ~100 bytes and a close, microseconds each, where
      // three thread-pool round trips cost more than the work (and more still on a busy
      // machine); every conditional put on a local store takes and drops one.
      const fd = openSync(lockPath, "wx");
      try {
        writeSync(fd, JSON.stringify(owner));
      } finally {
        closeSync(fd);
      }
      return owner.token;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ENOENT") {
        // The folder was pruned by a concurrent delete; recreate it and try again.
        await mkdir(dirname(lockPath), { recursive: true });
        continue;
      }
      if (code !== "EEXIST") throw err;
    }
    const holder = await readOwner(lockPath);
    if (holder === "gone") continue;
    if (await isStale(lockPath, holder, timing.staleMs)) {
      await breakLock(lockPath, holder);
      continue;
    }
    if (Date.now() > deadline) {
      throw new ConflictError(`${uri}: still locked by another writer after ${timing.timeoutMs} ms (lock file ${lockPath})`, { uri });
    }
    await sleep(Math.min(25, 1 + attempt) * (0.5 + Math.random()));
  }
}

async function release(lockPath: string, token: string): Promise<void> {
  const holder = await readOwner(lockPath);
  // Never remove a lock someone else holds (ours may have been broken as stale meanwhile).
  if (holder !== "gone" && holder?.token === token) {
    try {
      unlinkSync(lockPath);
    } catch (err) {
      ignoreMissing(err as NodeJS.ErrnoException);
    }
  }
}

/** The lock's owner, undefined while the owner is still writing it, "gone" if the lock vanished. */
async function readOwner(lockPath: string): Promise<LockOwner | undefined | "gone"> {
  let text: string;
  try {
    // Synchronous, as the lock file is written: a few bytes.
    text = readFileSync(lockPath, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return "gone";
    throw err;
  }
  try {
    const parsed = JSON.parse(text) as Partial<LockOwner>;
    if (typeof parsed.pid === "number" && typeof parsed.host === "string" && typeof parsed.token === "string") {
      return { pid: parsed.pid, host: parsed.host, token: parsed.token };
    }
  } catch {
    // Half-written or foreign content: judged by age alone.
  }
  return undefined;
}

async function isStale(lockPath: string, holder: LockOwner | undefined, staleMs: number): Promise<boolean> {
  if (holder && holder.host === HOST && holder.pid !== process.pid && !processExists(holder.pid)) return true;
  try {
    const info = await stat(lockPath);
    return Date.now() - info.mtimeMs > staleMs;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw err;
  }
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

async function breakLock(lockPath: string, judged: LockOwner | undefined): Promise<void> {
  const aside = `${lockPath}.stale.${randomUUID()}`;
  try {
    await rename(lockPath, aside);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
    throw err;
  }
  const moved = await readOwner(aside);
  const sameLock = moved !== "gone" && moved?.token === judged?.token;
  if (!sameLock) {
    // A live lock was taken between our check and the rename: put it back unless someone else
    // already holds the name again.
    await link(aside, lockPath).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== "EEXIST") throw err;
    });
  }
  await unlink(aside).catch(ignoreMissing);
}

function ignoreMissing(err: NodeJS.ErrnoException): void {
  if (err.code !== "ENOENT") throw err;
}
