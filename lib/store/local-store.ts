/**
 * ObjectStore on a local directory, with the same conditional semantics as S3.
 *
 * - Every write goes to a temp file that is fsynced, then renamed (or hard-linked, for
 *   create-only) onto the key: readers see the old bytes or the new bytes, never a torn file.
 * - Create-only (`ifNoneMatch: "*"`) is `link(temp, key)`, which fails atomically if the key exists.
 * - Other writes hold a per-key lock (in-process mutex + lock file for other processes) around
 *   "stat, compare ETag, rename", so compare-and-swap has exactly one winner.
 * - The ETag is derived from inode, mtime (ns) and size. Writes under the lock set the new
 *   file's mtime strictly after the current one's, so every write yields a new ETag.
 * - Temp and lock files sit next to their key with a reserved marker in their name and are
 *   invisible to get, head and list; keys containing the marker are rejected.
 */
import { randomUUID } from "node:crypto";
import type { BigIntStats, Dirent } from "node:fs";
import {
  closeSync,
  fstatSync,
  fsync,
  futimesSync,
  linkSync,
  lstatSync,
  mkdirSync,
  opendirSync,
  openSync,
  readSync,
  renameSync,
  rmdir as removeDirectory,
  statSync,
  unlink as unlinkFile,
  unlinkSync,
  write,
  writeSync,
} from "node:fs";
import { lstat, open, readdir, stat } from "node:fs/promises";
import type { FileHandle } from "node:fs/promises";
import { promisify } from "node:util";
import { basename, dirname, join, resolve, sep } from "node:path";
import { pathToFileURL } from "node:url";
import { checkRange, resolveRange } from "./byte-range.ts";
import { AccessDeniedError, InvalidLocationError, NotFoundError, PreconditionFailedError, StoreError } from "./errors.ts";
import { KeyedMutex } from "./key-mutex.ts";
import { checkKey, checkPrefix, checkSubpath, compareKeys } from "./keys.ts";
import { withLockFile } from "./local-lock.ts";
import type { LockTiming } from "./local-lock.ts";
import { RequestStats } from "./object-store.ts";
import type { ByteRange, DeleteFailure, DeleteResult, GetResult, ListedKey, ListOptions, ObjectInfo, ObjectStore, PutOptions, PutResult } from "./object-store.ts";

/** Marks our temp and lock files; any file name containing it is not an object. */
export const LOCAL_RESERVED_MARKER = ".~lw";
const PAGE_SIZE = 1000;
const DELETE_BATCH = 1000;
const DELETE_CONCURRENCY = 32;

export interface LocalStoreOptions {
  /** Counters to share (scope() passes its own). */
  stats?: RequestStats;
  /** A per-key lock file older than this is presumed left by a crashed writer (default 10 s). */
  staleLockMs?: number;
  /** Waiting longer than this for another writer's lock fails with ConflictError (default 30 s). */
  lockTimeoutMs?: number;
}

/** One mutex per process: every LocalStore (and scope) on the same file shares it. */
const processMutex = new KeyedMutex();

export class LocalStore implements ObjectStore {
  /** Absolute path of the root directory (it need not exist yet). */
  readonly root: string;
  readonly uri: string;
  readonly stats: RequestStats;
  private readonly lockTiming: LockTiming;

  constructor(root: string, options: LocalStoreOptions = {}) {
    this.root = resolve(root);
    this.uri = pathToFileURL(this.root).href.replace(/\/$/, "");
    this.stats = options.stats ?? new RequestStats();
    this.lockTiming = { staleMs: options.staleLockMs ?? 10_000, timeoutMs: options.lockTimeoutMs ?? 30_000 };
  }

  uriOf(key: string): string {
    return `${this.uri}/${key}`;
  }

  scope(subpath: string): LocalStore {
    const clean = checkSubpath(subpath, this.uri);
    this.checkNotReserved(clean);
    return new LocalStore(join(this.root, ...clean.split("/")), {
      stats: this.stats,
      staleLockMs: this.lockTiming.staleMs,
      lockTimeoutMs: this.lockTiming.timeoutMs,
    });
  }

  async get(key: string, range?: ByteRange): Promise<GetResult> {
    const path = this.pathOf(key);
    const uri = this.uriOf(key);
    if (range) checkRange(range, uri);
    this.stats.record("get");
    // A synchronous read settles without the event loop turning; callers that poll with gets
    // (waiting for a timer, a lease, another writer) must still let timers and I/O run. The turn
    // comes first, so a get that fails (a head not written yet) turns it too: a reader polling a
    // missing key otherwise spins on microtasks and starves the writers it waits for.
    await new Promise<void>((resolve) => setImmediate(resolve));
    const small = getSmall(key, path, uri, range);
    if (small) return small;
    let handle: FileHandle;
    try {
      handle = await open(path, "r");
    } catch (err) {
      throw fsError(err, uri);
    }
    try {
      const info = await handle.stat({ bigint: true });
      if (!info.isFile()) throw notFound(uri);
      const size = Number(info.size);
      const { start, end } = range ? resolveRange(range, size, uri) : { start: 0, end: size };
      const body = new Uint8Array(end - start);
      let filled = 0;
      while (filled < body.length) {
        const { bytesRead } = await handle.read(body, filled, body.length - filled, start + filled);
        if (bytesRead === 0) break;
        filled += bytesRead;
      }
      return { ...objectInfo(key, info), body: filled === body.length ? body : body.subarray(0, filled) };
    } catch (err) {
      throw err instanceof StoreError ? err : fsError(err, uri);
    } finally {
      await handle.close();
    }
  }

  async head(key: string): Promise<ObjectInfo> {
    const path = this.pathOf(key);
    const uri = this.uriOf(key);
    this.stats.record("head");
    let info: BigIntStats;
    try {
      info = await stat(path, { bigint: true });
    } catch (err) {
      throw fsError(err, uri);
    }
    if (!info.isFile()) throw notFound(uri);
    return objectInfo(key, info);
  }

  async put(key: string, body: Uint8Array, options: PutOptions = {}): Promise<PutResult> {
    const path = this.pathOf(key);
    const uri = this.uriOf(key);
    this.stats.record("put");
    const tempPath = join(dirname(path), `.${basename(path)}${LOCAL_RESERVED_MARKER}tmp.${randomUUID()}`);
    // Create-only onto a key that exists fails without writing (and syncing) a temp file first;
    // the link below stays the atomic check.
    if (options.ifNoneMatch === "*") refuseIfExists(path, uri);
    // Every step but the fsync is a synchronous call of microseconds on a small file (a lease,
    // a receipt, a checkpoint): a thread-pool round trip each cost more than the call, and far
    // more on a busy machine. The fsync, which can take milliseconds, and the write of a large
    // body stay off the main thread.
    const fd = createTempFile(tempPath, uri);
    let fdOpen = true;
    const close = (): void => {
      if (fdOpen) {
        fdOpen = false;
        closeSync(fd);
      }
    };
    let placed = false;
    try {
      if (body.length <= SYNC_IO_MAX_BYTES) writeAllSync(fd, body);
      else await writeAll(fd, body);
      await fsyncFile(fd);
      if (options.ifNoneMatch === "*") {
        const etag = stampAndEtag(fd, undefined);
        close();
        try {
          linkSync(tempPath, path);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw fsError(err, uri);
          if (await isDirectory(path)) throw folderInTheWay(uri, err);
          throw new PreconditionFailedError(`${uri}: already exists (If-None-Match: *)`, { uri });
        }
        return { etag };
      }
      return await this.underKeyLock(path, uri, async () => {
        const current = statIfFile(path, uri);
        if (options.ifMatch !== undefined) {
          if (!current) throw new NotFoundError(`${uri}: not found (If-Match ${options.ifMatch})`, { uri });
          const currentEtag = etagOf(current);
          if (currentEtag !== options.ifMatch) {
            throw new PreconditionFailedError(`${uri}: ETag is ${currentEtag}, not ${options.ifMatch} (If-Match): another writer changed it`, { uri });
          }
        }
        const etag = stampAndEtag(fd, current);
        close();
        try {
          renameSync(tempPath, path);
        } catch (err) {
          const code = (err as NodeJS.ErrnoException).code;
          if (code === "EISDIR" || code === "ENOTEMPTY" || code === "EEXIST") throw folderInTheWay(uri, err);
          throw fsError(err, uri);
        }
        placed = true;
        return { etag };
      });
    } finally {
      try {
        close();
      } catch {
        // already closed by the failure being reported
      }
      // After a link the temp name is a second name of the object; after a rename it is gone.
      if (!placed) {
        try {
          unlinkSync(tempPath);
        } catch {
          // never created, or already gone
        }
      }
    }
  }

  async *list(prefix: string, options: ListOptions = {}): AsyncIterable<ObjectInfo> {
    checkPrefix(prefix, this.uri);
    // maxKeys counts the objects yielded: one gone between its directory entry and its stat is not one.
    const maxKeys = options.maxKeys ?? Number.POSITIVE_INFINITY;
    if (maxKeys <= 0) return;
    let yielded = 0;
    let sinceTurn = 0;
    const listing = this.keyListing(prefix, options);
    for await (const items of listing.runs) {
      for (const item of items) {
        const key = listing.take(item);
        if (key === null) continue;
        const info = this.statObject(key);
        if (!info) continue;
        // An ETag from the stat is three hexadecimal numbers and a string per object: in a cold
        // process ~4,500 instructions, a fifth of the listing's cost per file after the stat.
        yield options.withoutEtags ? { key, size: Number(info.size), etag: "", lastModified: lastModifiedOf(info) } : objectInfo(key, info);
        if (++yielded >= maxKeys) return;
        // Synchronous stats (below): let other work run between pages.
        if (++sinceTurn === PAGE_SIZE) {
          sinceTurn = 0;
          await new Promise((resolve) => setImmediate(resolve));
        }
      }
    }
    listing.finish();
  }

  /** `list` without a stat per file: the directory entry already says it is a file; `info()` stats it when asked. */
  async *listKeys(prefix: string, options: ListOptions = {}): AsyncIterable<ListedKey> {
    checkPrefix(prefix, this.uri);
    const maxKeys = options.maxKeys ?? Number.POSITIVE_INFINITY;
    if (maxKeys <= 0) return;
    let yielded = 0;
    const listing = this.keyListing(prefix, options);
    for await (const items of listing.runs) {
      for (const item of items) {
        const key = listing.take(item);
        if (key === null) continue;
        yield {
          key,
          info: () => {
            const info = this.statObject(key);
            return info ? objectInfo(key, info) : null;
          },
        };
        if (++yielded >= maxKeys) return;
      }
    }
    listing.finish();
  }

  /**
   * The walk of a listing in key order, a folder's run of entries at a time, and `take`, which
   * counts each entry taken into S3's pages (a common prefix, the keys rolled up at the
   * delimiter, is one entry) and says which entries are keys to yield. A folder whose path below
   * the prefix holds the delimiter rolls up whole, so it is not read (`_transactions/` in Lance's
   * listing of `_refs/` and `_versions/`). Runs, not single entries: every level of async
   * generators a key passes through costs it a promise and a resumption (a cleanup lists
   * thousands of keys, and one level, the caller's, is enough). Pages are counted as entries are
   * taken, not as runs are read, so a listing stopped at maxKeys counts the pages it reached.
   */
  private keyListing(prefix: string, options: ListOptions): { runs: AsyncIterable<WalkItem[]>; take(item: WalkItem): string | null; finish(): void } {
    const delimiter = options.delimiter;
    const commonPrefixOf = (key: string): string | null => {
      if (!delimiter) return null;
      const at = key.indexOf(delimiter, prefix.length);
      return at < 0 ? null : key.slice(0, at + delimiter.length);
    };
    const slash = prefix.lastIndexOf("/");
    const walker = new KeyWalker(this.root, options.startAfter, (folderKey) => commonPrefixOf(folderKey) !== null);
    const pages = new PageCounter(this.stats);
    let lastCommonPrefix: string | null = null;
    return {
      runs: walker.walk(prefix.slice(0, slash + 1), prefix.slice(slash + 1)),
      take(item) {
        const common = commonPrefixOf(item.key);
        if (common !== null) {
          // Keys of one common prefix are adjacent in key order.
          if (common !== lastCommonPrefix) pages.item();
          lastCommonPrefix = common;
          return null;
        }
        pages.item();
        return item.kind === "object" ? item.key : null;
      },
      finish: () => pages.finish(),
    };
  }

  /**
   * The file's stat, or null when it is gone (deleted while listing) or not a file.
   * Synchronous on purpose: a listing stats every object, and a stat of a cached inode takes
   * ~2 µs, where the thread-pool round trip of an async one costs 5 to 10 times that on the
   * main thread (512 version files: 1.1 ms in sync stats, 2.7 to 6.6 ms in parallel async
   * ones, 8 to 25 ms one async stat after another, on this project's 2-core machine).
   */
  private statObject(key: string): BigIntStats | null {
    let info: BigIntStats | undefined;
    try {
      info = statSync(filePathOf(this.root, key), { bigint: true, throwIfNoEntry: false });
    } catch (err) {
      throw fsError(err, this.uriOf(key));
    }
    return info?.isFile() ? info : null;
  }

  async listPrefixes(prefix: string): Promise<string[]> {
    checkPrefix(prefix, this.uri);
    const slash = prefix.lastIndexOf("/");
    const walker = new KeyWalker(this.root, undefined, () => true);
    const pages = new PageCounter(this.stats);
    const prefixes: string[] = [];
    for await (const items of walker.walk(prefix.slice(0, slash + 1), prefix.slice(slash + 1))) {
      for (const item of items) {
        // S3 only reports a common prefix that has an object under it.
        if (item.kind === "prefix" && !(await holdsObject(join(this.root, ...item.key.split("/").filter(Boolean))))) continue;
        pages.item();
        if (item.kind === "prefix") prefixes.push(item.key);
      }
    }
    pages.finish();
    return prefixes;
  }

  async deleteMany(keys: readonly string[]): Promise<DeleteResult> {
    // Validate everything before deleting anything.
    const paths = keys.map((key) => this.pathOf(key));
    const deleted: string[] = [];
    const failed: DeleteFailure[] = [];
    const parents = new Set<string>();
    for (let start = 0; start < keys.length; start += DELETE_BATCH) {
      this.stats.record("delete");
      const end = Math.min(start + DELETE_BATCH, keys.length);
      // Async unlinks on libuv's pool, not unlinkSync on the main thread: measured on the cleanup
      // benchmark's table (ext4), synchronous unlinks took ~2 ms each against ~0.1 ms on the pool,
      // and made the whole cleanup 3 to 4 times slower (bench/results/README.md, run 18).
      const errors = await inPool(paths.slice(start, end), DELETE_CONCURRENCY, unlinkFile);
      for (let i = start; i < end; i++) {
        const key = keys[i]!;
        const path = paths[i]!;
        const err = errors[i - start];
        if (!err) {
          deleted.push(key);
          parents.add(parentOf(path));
          continue;
        }
        const code = err.code;
        if (code === "ENOENT" || code === "ENOTDIR") deleted.push(key);
        else if (code === "EISDIR" || (code === "EPERM" && (await isDirectory(path)))) {
          failed.push({ key, message: `${this.uriOf(key)}: is a folder, not an object` });
        } else failed.push({ key, message: `${this.uriOf(key)}: ${err.message}` });
      }
    }
    await this.pruneEmptyFolders(parents);
    return { deleted, failed };
  }

  /** Absolute path of a key, after checking it cannot leave the root. */
  private pathOf(key: string): string {
    checkKey(key, this.uri);
    this.checkNotReserved(key);
    const path = filePathOf(this.root, key);
    if (!path.startsWith(this.root + sep)) {
      throw new InvalidLocationError(`${this.uri}: key "${key}" resolves outside the store root`, { uri: this.uriOf(key) });
    }
    return path;
  }

  private checkNotReserved(key: string): void {
    if (key.includes(LOCAL_RESERVED_MARKER)) {
      throw new InvalidLocationError(`${this.uri}: key "${key}" contains "${LOCAL_RESERVED_MARKER}", reserved for the local store's temp and lock files`, { uri: this.uriOf(key) });
    }
  }

  private underKeyLock<T>(path: string, uri: string, work: () => Promise<T>): Promise<T> {
    const lockPath = join(dirname(path), `.${basename(path)}${LOCAL_RESERVED_MARKER}lock`);
    return processMutex.run(path, () => withLockFile(lockPath, uri, this.lockTiming, work));
  }

  /**
   * Removes folders left empty by a delete, bottom-up, never the root itself or anything above it.
   * Depth by depth, deepest first, a depth's folders all at once: a partitioned table's delete
   * tries a folder per partition, most of them still holding files, and a thousand failing rmdirs
   * one after another cost a tenth of a second. A folder is tried only after every deeper one, so
   * a parent emptied by its children going is removed too.
   */
  private async pruneEmptyFolders(folders: Set<string>): Promise<void> {
    const byDepth = new Map<number, Set<string>>();
    const tried = new Set<string>();
    const enqueue = (folder: string): void => {
      if (!folder.startsWith(this.root + sep) || tried.has(folder)) return;
      const depth = folder.split(sep).length;
      let level = byDepth.get(depth);
      if (!level) byDepth.set(depth, (level = new Set()));
      level.add(folder);
    };
    for (const folder of folders) enqueue(folder);
    while (byDepth.size > 0) {
      const deepest = Math.max(...byDepth.keys());
      const level = [...byDepth.get(deepest)!];
      byDepth.delete(deepest);
      for (const folder of level) tried.add(folder);
      // Not empty, already gone, or not ours to remove: the folder stays, and so do its parents.
      const errors = await inPool(level, DELETE_CONCURRENCY, removeDirectory);
      for (let i = 0; i < level.length; i++) if (!errors[i]) enqueue(parentOf(level[i]!));
    }
  }
}

/**
 * The file of a key that checkKey accepted (or that a listing built from directory entries):
 * no empty, "." or ".." segment, not absolute. On POSIX that is the root, "/", and the key as
 * it is, which is what path.join would return; join normalises every segment, and a cleanup
 * passes a key through here for every file it lists and every file it deletes.
 */
function filePathOf(root: string, key: string): string {
  if (sep !== "/") return join(root, ...key.split("/"));
  return root === "/" ? `/${key}` : `${root}/${key}`;
}

/**
 * The folder of a path filePathOf made (no trailing separator), as dirname gives it: one
 * lastIndexOf, where dirname walks the path character by character (once per deleted file).
 */
function parentOf(path: string): string {
  const at = path.lastIndexOf(sep);
  return at > 0 ? path.slice(0, at) : dirname(path);
}

type WalkItem = { kind: "object" | "prefix"; key: string };

/** Entries a walk hands over per await (KeyWalker.walk). */
const WALK_RUN_MAX = 1000;

/**
 * Walks the tree in S3 key order. A folder's entries are sorted as the keys they stand for:
 * a file by its name, a folder by its name plus "/" (so "a.b" < "a/x", since '.' < '/').
 * Subtrees wholly at or before `startAfter` are skipped without being read.
 */
class KeyWalker {
  private readonly root: string;
  private readonly startAfter: string | undefined;
  /** Whether a folder (its key, ending in "/") is listed as one prefix instead of walked. */
  private readonly rollsUp: (folderKey: string) => boolean;
  /** Entries read since the last turn of the event loop. */
  private sinceTurn = 0;

  constructor(root: string, startAfter: string | undefined, rollsUp: (folderKey: string) => boolean) {
    this.root = root;
    this.startAfter = startAfter;
    this.rollsUp = rollsUp;
  }

  /**
   * The walk's items in key order: runs of a folder's entries, each run up to the next subfolder
   * walked and at most WALK_RUN_MAX long (a folder of 300,000 files as one run held every key and
   * item of it at once: +25 to 50 MB of heap at 512 versions of 100,000 fragments).
   */
  async *walk(folderKey: string, namePrefix: string): AsyncGenerator<WalkItem[]> {
    const entries = await this.entries(folderKey, namePrefix);
    let run: WalkItem[] = [];
    for (const entry of entries) {
      // A folder's entry is its name plus "/", as the keys under it sort.
      const isFolder = entry.endsWith("/");
      const key = folderKey + entry;
      if (!isFolder) {
        if (this.startAfter === undefined || compareKeys(key, this.startAfter) > 0) run.push({ kind: "object", key });
        if (run.length === WALK_RUN_MAX) {
          yield run;
          run = [];
        }
        continue;
      }
      const after = this.startAfter;
      if (after !== undefined && !after.startsWith(key) && compareKeys(key, after) < 0) continue;
      if (this.rollsUp(key)) {
        if (after === undefined || compareKeys(key, after) > 0) run.push({ kind: "prefix", key });
        continue;
      }
      if (run.length > 0) yield run;
      run = [];
      yield* this.walk(key, "");
    }
    if (run.length > 0) yield run;
  }

  /**
   * The folder's files and folders (a folder as its name plus "/"), in key order. One string
   * per entry: a folder can hold a million files, and the walk holds its entries while it
   * lists them. Read in chunks (opendir), not as one array of Dirent objects; each chunk
   * synchronously from the buffer opendir fills (an async iteration costs a promise per entry:
   * 0.84 against 0.51 ms for a folder of 513 version files), with a turn of the event loop
   * every DIRECTORY_CHUNK entries, counted across folders. Opened synchronously too: a
   * partitioned table is a folder per partition, and an open on libuv's pool cost its round
   * trip per folder (10,000 folders of 10 files: 1.0 s of CPU against 0.29 s).
   */
  private async entries(folderKey: string, namePrefix: string): Promise<string[]> {
    const folder = join(this.root, ...folderKey.split("/").filter(Boolean));
    const entries: string[] = [];
    // Names with UTF-16 units from U+D800 up are where JavaScript's order and S3's differ.
    let needsKeyOrder = false;
    try {
      const dir = opendirSync(folder, { bufferSize: DIRECTORY_CHUNK });
      try {
        for (let dirent = dir.readSync(); dirent !== null; dirent = dir.readSync()) {
          if (++this.sinceTurn === DIRECTORY_CHUNK) {
            this.sinceTurn = 0;
            await new Promise((resolve) => setImmediate(resolve));
          }
          if (!dirent.name.startsWith(namePrefix) || dirent.name.includes(LOCAL_RESERVED_MARKER)) continue;
          let isFolder = dirent.isDirectory();
          let isFile = dirent.isFile();
          if (dirent.isSymbolicLink()) {
            // A link to a file is an object; links to folders are not followed (they may leave the root).
            const target = await stat(join(folder, dirent.name)).catch(() => undefined);
            isFile = target?.isFile() ?? false;
            isFolder = false;
          }
          if (!isFolder && !isFile) continue;
          if (!needsKeyOrder && BEYOND_JS_ORDER.test(dirent.name)) needsKeyOrder = true;
          entries.push(isFolder ? `${dirent.name}/` : dirent.name);
        }
      } finally {
        dir.closeSync();
      }
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || code === "ENOTDIR") return [];
      throw fsError(err, pathToFileURL(folder).href);
    }
    // The default sort compares UTF-16 units, which is S3's order for every other name.
    return needsKeyOrder ? entries.sort(compareKeys) : entries.sort();
  }
}

const DIRECTORY_CHUNK = 1024;
const BEYOND_JS_ORDER = /[\ud800-\uffff]/;

/** Counts list requests as S3 would: one per page of up to 1,000 entries, at least one. */
class PageCounter {
  private readonly stats: RequestStats;
  private inPage = 0;
  private pages = 0;

  constructor(stats: RequestStats) {
    this.stats = stats;
  }

  item(): void {
    if (this.pages === 0 || this.inPage === PAGE_SIZE) {
      this.stats.record("list");
      this.pages++;
      this.inPage = 0;
    }
    this.inPage++;
  }

  finish(): void {
    if (this.pages === 0) {
      this.stats.record("list");
      this.pages++;
    }
  }
}

/**
 * Objects up to this size are read synchronously. A cleanup reads hundreds of small manifests;
 * each async read is four thread-pool round trips (open, fstat, read, close), which on this
 * project's 2-core machine cost more than the reads themselves (331 manifests in a CPU profile
 * of a cleanup: 37 ms of gets async, 15 ms synchronous). A synchronous read of a cached file
 * this size takes tens of µs, so the event loop is never held for long; larger objects keep
 * the async path.
 */
const SYNC_GET_MAX_BYTES = 1 << 20;

/** A whole or ranged GET of a small object, synchronously; undefined when it is larger. */
function getSmall(key: string, path: string, uri: string, range: ByteRange | undefined): GetResult | undefined {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (err) {
    throw fsError(err, uri);
  }
  try {
    const info = fstatSync(fd, { bigint: true });
    if (!info.isFile()) throw notFound(uri);
    const size = Number(info.size);
    const { start, end } = range ? resolveRange(range, size, uri) : { start: 0, end: size };
    if (end - start > SYNC_GET_MAX_BYTES) return undefined;
    const body = new Uint8Array(end - start);
    let filled = 0;
    while (filled < body.length) {
      const bytesRead = readSync(fd, body, filled, body.length - filled, start + filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return { ...objectInfo(key, info), body: filled === body.length ? body : body.subarray(0, filled) };
  } catch (err) {
    throw err instanceof StoreError ? err : fsError(err, uri);
  } finally {
    closeSync(fd);
  }
}

async function holdsObject(folder: string): Promise<boolean> {
  let dirents: Dirent[];
  try {
    dirents = await readdir(folder, { withFileTypes: true });
  } catch {
    return false;
  }
  for (const dirent of dirents) {
    if (dirent.name.includes(LOCAL_RESERVED_MARKER)) continue;
    if (dirent.isFile()) return true;
    if (dirent.isSymbolicLink() && (await stat(join(folder, dirent.name)).catch(() => undefined))?.isFile()) return true;
    if (dirent.isDirectory() && (await holdsObject(join(folder, dirent.name)))) return true;
  }
  return false;
}

function statIfFile(path: string, uri: string): BigIntStats | undefined {
  try {
    const info = statSync(path, { bigint: true });
    return info.isFile() ? info : undefined;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    throw fsError(err, uri);
  }
}

/** Create-only onto a key that exists: refused before a temp file is written. */
function refuseIfExists(path: string, uri: string): void {
  let info: ReturnType<typeof lstatSync>;
  try {
    info = lstatSync(path, { throwIfNoEntry: false });
  } catch {
    return; // the temp file's creation reports why the key cannot be written
  }
  if (info === undefined) return;
  if (info.isDirectory()) throw folderInTheWay(uri, undefined);
  throw new PreconditionFailedError(`${uri}: already exists (If-None-Match: *)`, { uri });
}

/** Bodies up to this size are written synchronously (as gets read them, SYNC_GET_MAX_BYTES). */
const SYNC_IO_MAX_BYTES = 1 << 20;

const fsyncFile = promisify(fsync);
const writeFile = promisify(write);

function writeAllSync(fd: number, body: Uint8Array): void {
  for (let written = 0; written < body.length; ) written += writeSync(fd, body, written, body.length - written);
}

async function writeAll(fd: number, body: Uint8Array): Promise<void> {
  for (let written = 0; written < body.length; ) written += (await writeFile(fd, body, written, body.length - written)).bytesWritten;
}

/** The temp file, created exclusively; its folder is made only when missing. */
function createTempFile(tempPath: string, uri: string): number {
  for (let attempt = 0; ; attempt++) {
    try {
      return openSync(tempPath, "wx");
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // The folder is missing (a first key there, or a concurrent deleteMany pruned it).
      if (code === "ENOENT" && attempt < 10) {
        try {
          mkdirSync(dirname(tempPath), { recursive: true });
          continue;
        } catch (mkdirErr) {
          // biome-ignore lint/suspicious/noCatchAssign: the mkdir failure, not the open's ENOENT, is the one to report
          err = mkdirErr;
        }
      }
      const failed = (err as NodeJS.ErrnoException).code;
      if (failed === "ENOTDIR" || failed === "EEXIST") {
        throw new InvalidLocationError(`${uri}: a parent of this key is an object, and a local store cannot put keys under an object`, {
          uri,
          cause: err,
        });
      }
      throw fsError(err, uri);
    }
  }
}

/**
 * Gives the new file an mtime strictly after `replacing`'s, so its ETag differs from every earlier
 * one: the new file can get the inode the replaced one just freed, with the same size, so the mtime
 * alone must tell them apart. futimes takes seconds as a double, which holds a microsecond step
 * only sometimes (16 digits), so the stamp is read back and stepped by a millisecond until it is later.
 */
function stampAndEtag(fd: number, replacing: BigIntStats | undefined): string {
  let micros = Date.now() * 1000;
  if (replacing) micros = Math.max(micros, Number(replacing.mtimeNs / 1000n) + 1);
  for (let attempt = 0; ; attempt++) {
    const seconds = micros / 1e6;
    futimesSync(fd, seconds, seconds);
    const info = fstatSync(fd, { bigint: true });
    if (!replacing || info.mtimeNs > replacing.mtimeNs || attempt === 8) return etagOf(info);
    micros += 1000;
  }
}

/**
 * Runs a callback-style file operation (unlink, rmdir) on every path on libuv's pool,
 * `concurrency` at a time: one promise for the whole batch, where fs/promises makes a promise
 * and a continuation per file (a cleanup deletes thousands, and on the main thread those cost
 * more than the requests). Each path's error, or null, in the order of `paths`.
 */
function inPool(
  paths: readonly string[],
  concurrency: number,
  operation: (path: string, done: (error: NodeJS.ErrnoException | null) => void) => void,
): Promise<(NodeJS.ErrnoException | null)[]> {
  return new Promise((resolve) => {
    const errors = new Array<NodeJS.ErrnoException | null>(paths.length).fill(null);
    if (paths.length === 0) return resolve(errors);
    let next = 0;
    let done = 0;
    const runNext = (): void => {
      const index = next++;
      operation(paths[index]!, (error) => {
        errors[index] = error;
        if (++done === paths.length) resolve(errors);
        else if (next < paths.length) runNext();
      });
    };
    for (let i = 0; i < Math.min(concurrency, paths.length); i++) runNext();
  });
}

async function isDirectory(path: string): Promise<boolean> {
  return (await lstat(path).catch(() => undefined))?.isDirectory() ?? false;
}

function etagOf(info: BigIntStats): string {
  return `"${info.ino.toString(16)}-${info.mtimeNs.toString(16)}-${info.size.toString(16)}"`;
}

function objectInfo(key: string, info: BigIntStats): ObjectInfo {
  return { key, size: Number(info.size), etag: etagOf(info), lastModified: lastModifiedOf(info) };
}

function lastModifiedOf(info: BigIntStats): Date {
  return new Date(Number(info.mtimeNs / 1_000_000n));
}

/** S3 can hold both "a" and "a/b"; a directory cannot, so that key shape is refused on disk. */
function folderInTheWay(uri: string, cause: unknown): InvalidLocationError {
  return new InvalidLocationError(`${uri}: a folder of the same name holds other keys; a local store cannot also hold an object there`, {
    uri,
    cause,
  });
}

function notFound(uri: string): NotFoundError {
  return new NotFoundError(`${uri}: not found`, { uri });
}

function fsError(err: unknown, uri: string): StoreError {
  if (err instanceof StoreError) return err;
  const code = (err as NodeJS.ErrnoException).code;
  if (code === "ENOENT" || code === "ENOTDIR" || code === "EISDIR") return new NotFoundError(`${uri}: not found`, { uri, cause: err });
  if (code === "EACCES" || code === "EPERM") return new AccessDeniedError(`${uri}: permission denied`, { uri, cause: err });
  return new StoreError(`${uri}: ${(err as Error).message}`, { uri, cause: err });
}
