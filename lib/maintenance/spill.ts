/**
 * Lists that hold one page in memory: what a cleanup run keeps per file (the listing, the
 * plan, what it deleted) is written out a page at a time, so its memory follows the page, not
 * the table. A million-file table's run reads its listing back a page at a time each time a
 * stage walks it.
 *
 * Full pages are encoded (each list says how: columns, with repeated texts once a page) and
 * kept in a spill file on local disk when the run has a SpillArea (the cleanup pipeline opens
 * one in the temp folder: a Lambda's /tmp), else as encoded bytes in memory (several times
 * smaller than the objects; `lakewarden storage` and callers without an area). The lists are
 * synchronous iterables, as the plain arrays they replace: stages walk them in loops that never
 * await, and a page is one synchronous read of a few megabytes.
 */
import { closeSync, mkdtempSync, openSync, readSync, readdirSync, rmSync, statSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { performance } from "node:perf_hooks";
import { join } from "node:path";

/** Items a page holds (LAKEWARDEN_SPILL_PAGE_ITEMS overrides it: the tests use tiny pages so every run pages). */
export const DEFAULT_PAGE_ITEMS = 16_384;
const SPILL_DIR_PREFIX = "lakewarden-spill-";
/** A spill folder older than this was left by a process that died (a Lambda killed at its timeout). */
const STALE_SPILL_MS = 24 * 3_600_000;

/** Items a file of a long list on the store holds (intent parts, progress segments): four pages. */
export function partItemsFromEnvironment(): number {
  return 4 * pageItemsFromEnvironment();
}

export function pageItemsFromEnvironment(): number {
  const raw = process.env.LAKEWARDEN_SPILL_PAGE_ITEMS;
  if (raw === undefined || raw === "") return DEFAULT_PAGE_ITEMS;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`LAKEWARDEN_SPILL_PAGE_ITEMS: expected a positive integer, got ${JSON.stringify(raw)}`);
  return value;
}

/** A run's spill folder: one file per list, removed with the folder when the run ends. */
export class SpillArea {
  readonly pageItems: number;
  private readonly dir: string;
  private readonly fds: number[] = [];
  private next = 0;
  private disposed = false;

  private constructor(dir: string, pageItems: number) {
    this.dir = dir;
    this.pageItems = pageItems;
  }

  static open(options: { parent?: string; pageItems?: number } = {}): SpillArea {
    const parent = options.parent ?? tmpdir();
    removeStaleSpills(parent);
    let dir: string;
    try {
      dir = mkdtempSync(join(parent, `${SPILL_DIR_PREFIX}${ownerTag()}-`));
    } catch (error) {
      throw new Error(`cleanup keeps pages of its listing in the temp folder ${parent}, which it cannot write (${(error as Error).message}): set TMPDIR to a writable folder`);
    }
    return new SpillArea(dir, options.pageItems ?? pageItemsFromEnvironment());
  }

  /** A new append-only file in the area. */
  file(): SpillFile {
    if (this.disposed) throw new Error("spill area used after the run ended");
    const fd = openSync(join(this.dir, `${this.next++}.spill`), "w+");
    this.fds.push(fd);
    return new SpillFile(fd);
  }

  /** Closes and removes every file; lists of this area must not be read after. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    for (const fd of this.fds) closeSync(fd);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Pages appended to one file, read back by offset. */
export class SpillFile {
  private end = 0;
  private readonly fd: number;

  constructor(fd: number) {
    this.fd = fd;
  }

  append(bytes: Uint8Array): { offset: number; length: number } {
    const offset = this.end;
    let written = 0;
    while (written < bytes.length) written += writeSync(this.fd, bytes, written, bytes.length - written, offset + written);
    this.end += bytes.length;
    return { offset, length: bytes.length };
  }

  read(offset: number, length: number): Uint8Array {
    const bytes = new Uint8Array(length);
    let read = 0;
    while (read < length) {
      const got = readSync(this.fd, bytes, read, length - read, offset + read);
      if (got === 0) throw new Error(`spill file ended at ${offset + read} of ${offset + length}`);
      read += got;
    }
    return bytes;
  }
}

/** How a list writes a page of its items, and reads one back. */
export interface PageCodec<T> {
  encode(items: readonly T[]): Uint8Array;
  decode(bytes: Uint8Array): T[];
}

/** A full page: encoded in memory, or where it lies in the spill file. */
type StoredPage = { bytes: Uint8Array } | { offset: number; length: number };

/** An append-only list of which only the last page is held as items. */
export class SpillList<T> implements Iterable<T> {
  private readonly pages: StoredPage[] = [];
  private tail: T[] = [];
  private stored = 0;
  private file: SpillFile | null = null;
  private readonly pageItems: number;
  private readonly codec: PageCodec<T>;
  private readonly area: SpillArea | null;

  constructor(codec: PageCodec<T>, area: SpillArea | null, pageItems?: number) {
    this.codec = codec;
    this.area = area;
    this.pageItems = pageItems ?? area?.pageItems ?? pageItemsFromEnvironment();
  }

  get length(): number {
    return this.stored + this.tail.length;
  }

  push(item: T): void {
    this.tail.push(item);
    if (this.tail.length >= this.pageItems) this.flush();
  }

  *[Symbol.iterator](): Iterator<T> {
    // The items there are when the walk starts: pages are never rewritten, and the tail (at
    // most a page) is copied now, before a push during the walk can flush it.
    const pages = this.pages.length;
    const tail = this.tail.slice();
    for (let i = 0; i < pages; i++) yield* this.codec.decode(this.bytesOf(this.pages[i]!));
    yield* tail;
  }

  /** The items `keep` accepts, as a new list in the same area. */
  filter(keep: (item: T) => boolean): SpillList<T> {
    const out = new SpillList(this.codec, this.area, this.pageItems);
    for (const item of this) if (keep(item)) out.push(item);
    return out;
  }

  private flush(): void {
    const bytes = this.codec.encode(this.tail);
    if (this.area) {
      this.file ??= this.area.file();
      this.pages.push(this.file.append(bytes));
    } else this.pages.push({ bytes });
    this.stored += this.tail.length;
    this.tail = [];
  }

  private bytesOf(page: StoredPage): Uint8Array {
    return "bytes" in page ? page.bytes : this.file!.read(page.offset, page.length);
  }
}

/** `items` in arrays of `size` (the last one shorter), read as they are taken. */
export function* inChunks<T>(items: Iterable<T>, size: number): Iterable<T[]> {
  let chunk: T[] = [];
  for (const item of items) {
    chunk.push(item);
    if (chunk.length === size) {
      yield chunk;
      chunk = [];
    }
  }
  if (chunk.length > 0) yield chunk;
}

/** JSON of `value`, as bytes. */
export function encodeJson(value: unknown): Uint8Array {
  return Buffer.from(JSON.stringify(value));
}

export function decodeJson<T>(bytes: Uint8Array): T {
  return JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8")) as T;
}

/** Repeated texts of a page, each stored once: index by text, texts by index. */
export class TextTable {
  readonly texts: string[] = [];
  private readonly index = new Map<string, number>();

  of(text: string): number {
    let at = this.index.get(text);
    if (at === undefined) {
      at = this.texts.length;
      this.texts.push(text);
      this.index.set(text, at);
    }
    return at;
  }
}

/** "<pid>-<process start in ms>": the pid alone is reused (a Lambda's runtime gets the same one each start). */
function ownerTag(): string {
  return `${process.pid}-${Math.round(performance.timeOrigin)}`;
}

/** True when the process that made this folder is gone (or is unknown and the folder a day old). */
function isStale(name: string, ageMs: number): boolean {
  const match = /^(\d+)-(\d+)-/.exec(name.slice(SPILL_DIR_PREFIX.length));
  if (!match) return ageMs > STALE_SPILL_MS;
  const [pid, started] = [Number(match[1]), match[2]];
  if (pid === process.pid) return started !== String(Math.round(performance.timeOrigin));
  try {
    process.kill(pid, 0);
    return ageMs > STALE_SPILL_MS;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
}

/**
 * Spill folders of processes that are gone: a run killed mid-way (a Lambda at its timeout keeps
 * /tmp for the next invocation) leaves its folder behind.
 */
function removeStaleSpills(parent: string): void {
  let names: string[];
  try {
    names = readdirSync(parent).filter((name) => name.startsWith(SPILL_DIR_PREFIX));
  } catch {
    return;
  }
  const now = Date.now();
  for (const name of names) {
    const path = join(parent, name);
    try {
      if (isStale(name, now - statSync(path).mtimeMs)) rmSync(path, { recursive: true, force: true });
    } catch {
      // another process removed it, or it is not ours to remove
    }
  }
}
