/** LocalStore behaviour beyond the shared conformance suite: files on disk, locks, processes. */
import { execFile, spawn } from "node:child_process";
import { chmod, mkdir, mkdtemp, readdir, rm, stat, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { ConflictError, InvalidLocationError, NotFoundError } from "../../lib/store/errors.ts";
import { LOCAL_RESERVED_MARKER, LocalStore } from "../../lib/store/local-store.ts";
import type { ListedKey, ObjectInfo } from "../../lib/store/object-store.ts";

const run = promisify(execFile);
const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
const bytes = (text: string) => new TextEncoder().encode(text);
const text = (body: Uint8Array) => new TextDecoder().decode(body);

let dir: string;
let root: string;
let store: LocalStore;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "lakewarden-local-"));
  root = join(dir, "root");
  store = new LocalStore(root);
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function keys(prefix = ""): Promise<string[]> {
  const found: string[] = [];
  for await (const info of store.list(prefix)) found.push(info.key);
  return found;
}

async function mkdirp(path: string): Promise<string> {
  await mkdir(path, { recursive: true });
  return path;
}

/** A pid that certainly belongs to no running process: one of a child that has exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ["-e", ""]);
  await new Promise((resolve) => child.on("exit", resolve));
  if (child.pid === undefined) throw new Error("could not spawn a child");
  return child.pid;
}

describe("LocalStore on disk", () => {
  test("the store root is a file: URI and keys map to files under it", async () => {
    expect(store.uri).toMatch(/^file:\/\/\/.+\/root$/);
    expect(fileURLToPath(store.uri)).toBe(root);
    await store.put("a/b.txt", bytes("on disk"));
    expect((await stat(join(root, "a", "b.txt"))).size).toBe(7);
  });

  test("bodies on both sides of the synchronous write limit (1 MiB) are written whole, byte for byte, create-only and replaced", async () => {
    for (const size of [0, 1, (1 << 20) - 1, 1 << 20, (1 << 20) + 1, 3 * (1 << 20) + 7]) {
      const body = new Uint8Array(size);
      for (let i = 0; i < size; i++) body[i] = (i * 31 + size) & 0xff;
      const created = await store.put(`sizes/${size}`, body, { ifNoneMatch: "*" });
      expect(Buffer.compare((await store.get(`sizes/${size}`)).body, body)).toBe(0);
      const again = body.map((b) => b ^ 0xff);
      const replaced = await store.put(`sizes/${size}`, again, { ifMatch: created.etag });
      expect(replaced.etag).not.toBe(created.etag);
      expect(Buffer.compare((await store.get(`sizes/${size}`)).body, again)).toBe(0);
    }
    // No temp or lock file left beside them.
    expect((await readdir(join(root, "sizes"))).filter((name) => name.includes(LOCAL_RESERVED_MARKER))).toEqual([]);
  });

  test("small objects are read synchronously, yet a loop of gets still lets a timer fire", async () => {
    await store.put("small", bytes("tiny"));
    let fired = false;
    setTimeout(() => (fired = true), 5);
    let gets = 0;
    // Without a turn of the event loop per get, this loop never sees the timer and never ends.
    while (!fired) {
      expect(text((await store.get("small")).body)).toBe("tiny");
      gets++;
    }
    expect(gets).toBeGreaterThan(0);
  });

  test("a loop of gets of a missing key lets a timer fire too (a reader polling for a head not written yet)", async () => {
    let fired = false;
    setTimeout(() => (fired = true), 5);
    let misses = 0;
    // Bounded, so a store that fails without turning the event loop fails here instead of hanging.
    while (!fired && misses < 200_000) {
      await expect(store.get("not-yet")).rejects.toBeInstanceOf(NotFoundError);
      misses++;
    }
    expect(fired).toBe(true);
  });

  test("objects over the synchronous read limit (1 MiB) read whole and by range like small ones", async () => {
    const large = new Uint8Array((1 << 20) + 3).map((_, i) => i % 251);
    await store.put("large", large);
    expect((await store.get("large")).body).toEqual(large);
    // A range under the limit is read synchronously even from a large object; one over it is not.
    expect((await store.get("large", { suffixLength: 7 })).body).toEqual(large.subarray(-7));
    expect((await store.get("large", { offset: 5, length: (1 << 20) + 1 })).body).toEqual(large.subarray(5, (1 << 20) + 6));
  });

  test("a store whose root does not exist yet lists nothing and creates the root on first put", async () => {
    expect(await keys()).toEqual([]);
    expect(await store.listPrefixes("")).toEqual([]);
    await expect(store.get("x")).rejects.toBeInstanceOf(NotFoundError);
    await store.put("x", bytes("1"));
    expect(await keys()).toEqual(["x"]);
  });

  test("every write changes the ETag, even with identical bytes", async () => {
    const etags = new Set<string>();
    for (let i = 0; i < 20; i++) etags.add((await store.put("same", bytes("identical"))).etag);
    expect(etags.size).toBe(20);
    const head = await store.head("same");
    expect(etags.has(head.etag)).toBe(true);
    expect(Math.abs(head.lastModified.getTime() - Date.now())).toBeLessThan(60_000);
  });

  test("every write changes the ETag even when the clock stands still between writes", async () => {
    // Writes within one millisecond are stamped a microsecond apart, which a double of seconds
    // does not always hold; the replaced file's inode comes back to the next write, so a stamp
    // that does not move repeats an earlier ETag.
    const now = vi.spyOn(Date, "now").mockReturnValue(Date.UTC(2026, 10, 30, 12, 0, 0, 123));
    try {
      const etags = new Set<string>();
      for (let i = 0; i < 50; i++) etags.add((await store.put("still", bytes("identical"))).etag);
      expect(etags.size).toBe(50);
    } finally {
      now.mockRestore();
    }
  });

  test("readers never see a torn file while a writer replaces it", async () => {
    const size = 256 * 1024;
    const fill = (c: number) => new Uint8Array(size).fill(c);
    await store.put("big", fill(0));
    let writing = true;
    const writer = (async () => {
      for (let round = 1; round <= 30; round++) await store.put("big", fill(round));
      writing = false;
    })();
    let reads = 0;
    while (writing) {
      const { body } = await store.get("big");
      expect(body.length).toBe(size);
      const first = body[0];
      expect(body.every((b) => b === first)).toBe(true);
      reads++;
    }
    await writer;
    expect(reads).toBeGreaterThan(0);
    expect((await store.get("big")).body[0]).toBe(30);
  });

  test("temp and lock files are invisible to list, listPrefixes and get", async () => {
    await store.put("t/real", bytes("x"));
    await mkdir(join(root, "t", "only-junk"), { recursive: true });
    await writeFile(join(root, "t", `.real${LOCAL_RESERVED_MARKER}tmp.1234`), "half-written");
    await writeFile(join(root, "t", `.real${LOCAL_RESERVED_MARKER}lock`), "{}");
    await writeFile(join(root, "t", "only-junk", `.gone${LOCAL_RESERVED_MARKER}tmp.99`), "junk");
    expect(await keys()).toEqual(["t/real"]);
    expect(await store.listPrefixes("t/")).toEqual([]);
    await expect(store.get(`t/.real${LOCAL_RESERVED_MARKER}lock`)).rejects.toBeInstanceOf(InvalidLocationError);
    await expect(store.put(`t/x${LOCAL_RESERVED_MARKER}y`, bytes("x"))).rejects.toBeInstanceOf(InvalidLocationError);
  });

  test("writes leave no temp or lock files behind, also when a condition fails", async () => {
    const v1 = await store.put("k", bytes("1"));
    await store.put("k", bytes("2"), { ifMatch: v1.etag });
    await expect(store.put("k", bytes("3"), { ifMatch: v1.etag })).rejects.toThrow();
    await expect(store.put("k", bytes("4"), { ifNoneMatch: "*" })).rejects.toThrow();
    await store.put("fresh", bytes("5"), { ifNoneMatch: "*" });
    expect((await readdir(root)).sort()).toEqual(["fresh", "k"]);
  });

  test("deleteMany removes folders it leaves empty, up to but never including the root", async () => {
    await store.put("a/b/c/one", bytes("1"));
    await store.put("a/b/two", bytes("2"));
    await store.put("a/keep", bytes("3"));
    await store.deleteMany(["a/b/c/one", "a/b/two"]);
    expect(await readdir(join(root, "a"))).toEqual(["keep"]);
    await store.deleteMany(["a/keep"]);
    expect(await readdir(root)).toEqual([]);
    expect((await stat(root)).isDirectory()).toBe(true);
    // A scoped store never removes its own root either.
    const scoped = store.scope("s");
    await scoped.put("x/y", bytes("1"));
    await scoped.deleteMany(["x/y"]);
    expect(await readdir(root)).toEqual(["s"]);
  });

  test("deleteMany prunes many folders at several depths: emptied ones go, bottom-up, those still holding a file stay", async () => {
    // A partitioned table's shape: many partition folders, some emptied by the delete, some not.
    const gone: string[] = [];
    for (let p = 0; p < 40; p++) {
      await store.put(`data/p=${p}/q=${p % 3}/old.parquet`, bytes("1"));
      gone.push(`data/p=${p}/q=${p % 3}/old.parquet`);
      if (p % 4 === 0) await store.put(`data/p=${p}/kept.parquet`, bytes("2"));
      if (p % 5 === 0) await store.put(`data/p=${p}/q=${p % 3}/r/deeper.parquet`, bytes("3"));
    }
    await store.deleteMany(gone);
    const expected = [];
    for (let p = 0; p < 40; p++) {
      if (p % 4 === 0) expected.push(`data/p=${p}/kept.parquet`);
      if (p % 5 === 0) expected.push(`data/p=${p}/q=${p % 3}/r/deeper.parquet`);
    }
    expect(await keys()).toEqual(expected.sort());
    const partitions = (await readdir(join(root, "data"))).sort();
    expect(partitions).toEqual([...new Set(expected.map((key) => key.split("/")[1]!))].sort());
    await store.deleteMany(expected);
    expect(await readdir(root)).toEqual([]);
  });

  test("deleting a folder's name reports a failure and removes nothing", async () => {
    await store.put("dir/child", bytes("1"));
    const result = await store.deleteMany(["dir"]);
    expect(result.deleted).toEqual([]);
    expect(result.failed).toEqual([{ key: "dir", message: expect.stringContaining("is a folder") }]);
    expect(await keys()).toEqual(["dir/child"]);
  });

  test("keys that a file system cannot hold next to each other are refused clearly", async () => {
    await store.put("file", bytes("1"));
    await expect(store.put("file/child", bytes("2"))).rejects.toSatisfy((err) => err instanceof InvalidLocationError && err.message.includes("under an object"));
    await store.put("folder/child", bytes("1"));
    await expect(store.put("folder", bytes("2"))).rejects.toBeInstanceOf(InvalidLocationError);
    await expect(store.put("folder", bytes("2"), { ifNoneMatch: "*" })).rejects.toBeInstanceOf(InvalidLocationError);
    expect(await keys()).toEqual(["file", "folder/child"]);
  });

  test("an unreadable object is AccessDeniedError naming its URI", async () => {
    await store.put("secret", bytes("x"));
    await chmod(dir, 0o700);
    await chmod(join(root, "secret"), 0o000);
    // Root ignores file modes, so the probe drops to an unprivileged user when run as root.
    const { stdout } = await run(process.execPath, [fixture("local-access-probe.ts"), root, "secret"]);
    const outcome = JSON.parse(stdout) as { error: string; message: string };
    expect(outcome.error).toBe("AccessDeniedError");
    expect(outcome.message).toContain(store.uriOf("secret"));
  });

  test("a delete the file system refuses is reported per key, and the other keys are still deleted", async () => {
    await store.put("locked/a", bytes("1"));
    await store.put("free/b", bytes("2"));
    // The probe runs unprivileged: it may walk every folder, write only in "free".
    await chmod(dir, 0o755);
    await chmod(root, 0o755);
    await chmod(join(root, "locked"), 0o555);
    await chmod(join(root, "free"), 0o777);
    const { stdout } = await run(process.execPath, [fixture("local-access-probe.ts"), root, "--delete", "locked/a", "free/b", "gone/c"]);
    const result = JSON.parse(stdout) as { deleted: string[]; failed: { key: string; message: string }[] };
    expect(result.deleted.sort()).toEqual(["free/b", "gone/c"]);
    expect(result.failed).toEqual([{ key: "locked/a", message: expect.stringContaining(store.uriOf("locked/a")) }]);
    expect(result.failed[0]?.message).toContain("EACCES");
    expect(await keys()).toEqual(["locked/a"]);
  });
});

describe("LocalStore.listKeys: list without a stat per file", () => {
  async function both(prefix: string, options: Parameters<LocalStore["list"]>[1] = {}) {
    store.stats.reset();
    const listed: ObjectInfo[] = [];
    for await (const info of store.list(prefix, options)) listed.push(info);
    const listRequests = store.stats.snapshot();
    store.stats.reset();
    const entries: ListedKey[] = [];
    for await (const entry of store.listKeys(prefix, options)) entries.push(entry);
    return { listed, listRequests, entries, keysRequests: store.stats.snapshot() };
  }

  test("the same keys, order, pages and metadata as list, for every option", async () => {
    for (let i = 0; i < 1_203; i++) await writeFile(join(await mkdirp(join(root, "v")), `${String(i).padStart(5, "0")}.m`), "x".repeat(i % 7));
    await store.put("v/sub/deep", bytes("d"));
    await store.put("w", bytes("w"));
    for (const [prefix, options] of [
      ["", {}],
      ["v/", { delimiter: "/" }],
      ["v/", { startAfter: "v/00998.m" }],
      ["v/0", { maxKeys: 5 }],
      ["v/", { delimiter: "." }],
    ] as const) {
      const { listed, listRequests, entries, keysRequests } = await both(prefix, options);
      expect(entries.map((e) => e.key)).toEqual(listed.map((o) => o.key));
      expect(keysRequests).toEqual(listRequests);
      expect(entries.map((e) => e.info())).toEqual(listed);
    }
    expect((await both("", {})).keysRequests.list).toBe(2);
  });

  test("withoutEtags: the same keys, sizes, times and pages as list, each ETag left empty", async () => {
    for (let i = 0; i < 1_203; i++) await writeFile(join(await mkdirp(join(root, "v")), `${String(i).padStart(5, "0")}.m`), "x".repeat(i % 7));
    await store.put("v/sub/deep", bytes("d"));
    for (const [prefix, options] of [
      ["", {}],
      ["v/", { delimiter: "/" }],
      ["v/", { startAfter: "v/00998.m", maxKeys: 3 }],
    ] as const) {
      const { listed, listRequests } = await both(prefix, options);
      const { listed: untagged, listRequests: untaggedRequests } = await both(prefix, { ...options, withoutEtags: true });
      expect(untagged).toEqual(listed.map((object) => ({ ...object, etag: "" })));
      expect(untaggedRequests).toEqual(listRequests);
      expect(listed.every((object) => object.etag.length > 2)).toBe(true);
    }
  });

  test("a tree of many small folders (a partitioned table) lets other work run while it is listed", async () => {
    // 50 × 50 folders of one file: every folder holds fewer entries than a directory chunk, so the turns are counted across folders.
    for (let a = 0; a < 50; a++) for (let b = 0; b < 50; b++) await writeFile(join(await mkdirp(join(root, `a=${a}`, `b=${b}`)), "f.parquet"), "x");
    let timerRan = false;
    let listedBeforeTimer = 0;
    const timer = setTimeout(() => {
      timerRan = true;
    }, 0);
    try {
      for await (const _ of store.listKeys("")) if (!timerRan) listedBeforeTimer++;
    } finally {
      clearTimeout(timer);
    }
    expect(timerRan).toBe(true);
    expect(listedBeforeTimer).toBeLessThan(2_500);
  });

  test("info() of a file removed since the listing is null; list would not have listed it", async () => {
    await store.put("t/a", bytes("a"));
    await store.put("t/b", bytes("b"));
    const entries: ListedKey[] = [];
    for await (const entry of store.listKeys("t/")) entries.push(entry);
    await store.deleteMany(["t/a"]);
    expect(entries.map((e) => e.key)).toEqual(["t/a", "t/b"]);
    expect(entries[0]!.info()).toBeNull();
    expect(entries[1]!.info()).toEqual(await store.head("t/b"));
  });
});

describe("LocalStore compare-and-swap across processes", () => {
  test("two processes incrementing one counter with If-Match lose no update", async () => {
    await store.put("counter", bytes("0"));
    const perProcess = 15;
    const workers = await Promise.all([1, 2].map(() => run(process.execPath, [fixture("local-cas-worker.ts"), root, "counter", String(perProcess)])));
    for (const { stdout } of workers) expect(JSON.parse(stdout)).toHaveProperty("retries");
    expect(text((await store.get("counter")).body)).toBe(String(2 * perProcess));
    expect(await readdir(root)).toEqual(["counter"]);
  });

  test("a lock left by a process that died is broken", async () => {
    const v1 = await store.put("k", bytes("1"));
    const lock = join(root, `.k${LOCAL_RESERVED_MARKER}lock`);
    await writeFile(lock, JSON.stringify({ pid: await deadPid(), host: (await import("node:os")).hostname(), token: "dead" }));
    const v2 = await store.put("k", bytes("2"), { ifMatch: v1.etag });
    expect((await store.head("k")).etag).toBe(v2.etag);
    expect(await readdir(root)).toEqual(["k"]);
  });

  test("a lock older than the stale limit is broken, whoever holds it", async () => {
    await store.put("k", bytes("1"));
    const lock = join(root, `.k${LOCAL_RESERVED_MARKER}lock`);
    await writeFile(lock, JSON.stringify({ pid: process.ppid, host: "another-host", token: "old" }));
    const longAgo = new Date(Date.now() - 120_000);
    await utimes(lock, longAgo, longAgo);
    await store.put("k", bytes("2"));
    expect(text((await store.get("k")).body)).toBe("2");
  });

  test("a live lock makes a writer wait, then fail with ConflictError naming the object", async () => {
    const impatient = new LocalStore(root, { lockTimeoutMs: 200 });
    await impatient.put("k", bytes("1"));
    const lock = join(root, `.k${LOCAL_RESERVED_MARKER}lock`);
    await writeFile(lock, JSON.stringify({ pid: process.ppid, host: (await import("node:os")).hostname(), token: "alive" }));
    await expect(impatient.put("k", bytes("2"))).rejects.toSatisfy((err) => err instanceof ConflictError && err.uri === impatient.uriOf("k"));
    expect(text((await impatient.get("k")).body)).toBe("1");
    // The lock is someone else's: it stays.
    expect((await stat(lock)).isFile()).toBe(true);
  });
});
