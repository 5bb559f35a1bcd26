/**
 * One behavioural contract for every ObjectStore: run it against each implementation
 * (see *.conformance.test.ts). The expectations are S3's documented behaviour.
 */
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { ConflictError, InvalidLocationError, InvalidRangeError, NotFoundError, PreconditionFailedError } from "../../lib/store/errors.ts";
import type { ObjectStore, RequestCounts } from "../../lib/store/object-store.ts";

export interface ConformanceTarget {
  /** A store rooted at a fresh, empty location with fresh counters. */
  store: ObjectStore;
  /** Removes whatever the test left behind. */
  cleanup?: () => Promise<void>;
}

export interface ConformanceOptions {
  /**
   * Whether a losing concurrent conditional writer may get 409 ConflictError instead of 412.
   * Real S3 may answer either; what never bends is that exactly one writer wins.
   */
  losersMayConflict?: boolean;
  /**
   * Whether to run the tests that write 1,001+ keys (paging, delimiter roll-up, batched deletes).
   * moto's server takes about 10 ms a put, so there they cost ~30 s; fauxqs and local disk run them.
   */
  manyKeys?: boolean;
  /** Skip the whole suite, showing this reason in the test name. */
  skipReason?: string;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const bytes = (text: string): Uint8Array => encoder.encode(text);
const text = (body: Uint8Array): string => decoder.decode(body);
const NONE: RequestCounts = { get: 0, head: 0, list: 0, put: 0, delete: 0 };

/** Keys whose S3 order a directory walk gets wrong unless it is careful ('-' < '.' < '/' < '0'). */
const TRICKY_KEYS_IN_ORDER = ["a-b", "a.b", "a/b", "a/c/d", "a0", "ab", "b"];
/** The same plus case, '!', '_', '~' and non-ASCII (U+FB00 sorts before U+1F600 in UTF-8, not in UTF-16). */
const BYTE_ORDER_KEYS_IN_ORDER = ["A", "a!", "a-b", "a.b", "a/b", "a/c/d", "a0", "a_b", "ab", "a~", "b", "é", "\uFB00", "😀"];

const ESCAPING_KEYS = ["../x", "a/../../x", "/etc/passwd", "a//b", "a\\b", "", "a/./b", "a/"];

export function describeObjectStoreConformance(name: string, makeStore: () => Promise<ConformanceTarget>, options: ConformanceOptions = {}): void {
  const suite = options.skipReason ? describe.skip : describe;
  const title = options.skipReason ? `${name} (skipped: ${options.skipReason})` : name;
  const manyKeysTest = options.manyKeys === false ? test.skip : test;
  const isLoss = (reason: unknown): boolean => reason instanceof PreconditionFailedError || (options.losersMayConflict === true && reason instanceof ConflictError);

  suite(`ObjectStore conformance: ${title}`, () => {
    let target: ConformanceTarget;
    let store: ObjectStore;

    beforeEach(async () => {
      target = await makeStore();
      store = target.store;
    });

    afterEach(async () => {
      await target?.cleanup?.();
    });

    const keysOf = async (prefix: string, listOptions?: Parameters<ObjectStore["list"]>[1]): Promise<string[]> => {
      const keys: string[] = [];
      for await (const info of store.list(prefix, listOptions)) keys.push(info.key);
      return keys;
    };

    const putMany = async (keys: readonly string[], concurrency = 16): Promise<void> => {
      let next = 0;
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (next < keys.length) {
            const key = keys[next++] as string;
            await store.put(key, bytes(key));
          }
        }),
      );
    };

    describe("get, head, put", () => {
      test("put returns the ETag that get and head report", async () => {
        const put = await store.put("dir/obj.bin", bytes("hello, store"), { contentType: "application/octet-stream" });
        expect(put.etag).toMatch(/^".+"$/);
        const got = await store.get("dir/obj.bin");
        expect(text(got.body)).toBe("hello, store");
        expect(got).toMatchObject({ key: "dir/obj.bin", size: 12, etag: put.etag });
        expect(Number.isNaN(got.lastModified.getTime())).toBe(false);
        const head = await store.head("dir/obj.bin");
        expect(head).toMatchObject({ key: "dir/obj.bin", size: 12, etag: put.etag });
      });

      test("an empty object round-trips", async () => {
        await store.put("empty", new Uint8Array(0));
        const got = await store.get("empty");
        expect(got.size).toBe(0);
        expect(got.body.length).toBe(0);
      });

      test("a plain put replaces the object and changes the ETag", async () => {
        const first = await store.put("k", bytes("one"));
        const second = await store.put("k", bytes("two!"));
        expect(second.etag).not.toBe(first.etag);
        expect(text((await store.get("k")).body)).toBe("two!");
        expect((await store.head("k")).etag).toBe(second.etag);
      });

      test("get and head of a missing key throw NotFoundError naming the object", async () => {
        const missing = store.uriOf("no/such/key");
        await expect(store.get("no/such/key")).rejects.toSatisfy((err) => err instanceof NotFoundError && err.uri === missing && err.message.includes(missing));
        await expect(store.head("no/such/key")).rejects.toBeInstanceOf(NotFoundError);
        // A "folder" (a prefix of other keys) is not an object either.
        await store.put("folder/child", bytes("x"));
        await expect(store.get("folder")).rejects.toBeInstanceOf(NotFoundError);
        await expect(store.head("folder")).rejects.toBeInstanceOf(NotFoundError);
      });
    });

    describe("keys that need escaping", () => {
      // Each in a URL path, a query (prefix, start-after), a listing's XML and a DeleteObjects body.
      const ODD_KEYS = ["odd/a b", "odd/a+b", "odd/a%20b", "odd/a%b", "odd/a&b<c>'d\"", "odd/a=b?c#d", "odd/é ü", "odd/日本/表", "odd/😀", "odd/a~b!*(x)"];

      test("keys with spaces, +, %, XML and URL specials and non-ASCII round-trip through put, get, head, list and deleteMany", async () => {
        for (const key of ODD_KEYS) {
          const put = await store.put(key, bytes(key));
          expect(text((await store.get(key)).body), key).toBe(key);
          expect((await store.head(key)).etag, key).toBe(put.etag);
        }
        const listed = await keysOf("odd/");
        expect([...listed].sort()).toEqual([...ODD_KEYS].sort());
        expect(await keysOf("odd/a b")).toEqual(["odd/a b"]);
        expect(await keysOf("odd/a+")).toEqual(["odd/a+b"]);
        expect(await keysOf("odd/a%")).toEqual(expect.arrayContaining(["odd/a%20b", "odd/a%b"]));
        expect(await store.listPrefixes("odd/")).toEqual(["odd/日本/"]);
        const result = await store.deleteMany(ODD_KEYS);
        expect(result.failed).toEqual([]);
        expect(await keysOf("odd/")).toEqual([]);
      });
    });

    describe("ranged reads", () => {
      const body = bytes("0123456789abcdefghij");

      test("offset + length reads a slice; size stays the whole object's", async () => {
        await store.put("r", body);
        const got = await store.get("r", { offset: 5, length: 4 });
        expect(text(got.body)).toBe("5678");
        expect(got.size).toBe(20);
      });

      test("a range running past the end is clamped", async () => {
        await store.put("r", body);
        const got = await store.get("r", { offset: 15, length: 100 });
        expect(text(got.body)).toBe("fghij");
        expect(got.size).toBe(20);
      });

      test("a suffix reads the last N bytes, clamped to the object", async () => {
        await store.put("r", body);
        expect(text((await store.get("r", { suffixLength: 3 })).body)).toBe("hij");
        const whole = await store.get("r", { suffixLength: 1000 });
        expect(text(whole.body)).toBe("0123456789abcdefghij");
        expect(whole.size).toBe(20);
      });

      test("a range starting past the end is InvalidRangeError (S3 416)", async () => {
        await store.put("r", body);
        await expect(store.get("r", { offset: 20, length: 1 })).rejects.toBeInstanceOf(InvalidRangeError);
      });

      test("a malformed range is refused before any request", async () => {
        await store.put("r", body);
        store.stats.reset();
        await expect(store.get("r", { offset: -1, length: 2 })).rejects.toBeInstanceOf(InvalidRangeError);
        await expect(store.get("r", { offset: 0, length: 0 })).rejects.toBeInstanceOf(InvalidRangeError);
        await expect(store.get("r", { suffixLength: 0 })).rejects.toBeInstanceOf(InvalidRangeError);
        expect(store.stats.snapshot()).toEqual(NONE);
      });

      test("a ranged read of a missing key is NotFoundError", async () => {
        await expect(store.get("nope", { suffixLength: 4 })).rejects.toBeInstanceOf(NotFoundError);
      });
    });

    describe("conditional puts", () => defineConditionalPutTests(() => store, isLoss, test));

    describe("listing", () => {
      const keys = BYTE_ORDER_KEYS_IN_ORDER;
      const under = (list: readonly string[]): string[] => list.map((k) => `t/${k}`);

      test("returns keys in S3 byte order with their size and ETag", async () => {
        // Written in reverse so that creation order cannot pass for key order.
        for (const key of [...under(keys)].reverse()) await store.put(key, bytes(key));
        await store.put("u/outside", bytes("x"));
        const infos = [];
        for await (const info of store.list("t/")) infos.push(info);
        expect(infos.map((i) => i.key)).toEqual(under(keys));
        const sample = infos.find((i) => i.key === "t/a.b");
        expect(sample).toMatchObject({ size: 5, etag: (await store.head("t/a.b")).etag });
      });

      test("a prefix need not end at a folder boundary", async () => {
        await putMany(under(TRICKY_KEYS_IN_ORDER));
        expect(await keysOf("t/a")).toEqual(under(TRICKY_KEYS_IN_ORDER.filter((k) => k.startsWith("a"))));
        expect(await keysOf("t/a.")).toEqual(["t/a.b"]);
        expect(await keysOf("t/a/c")).toEqual(["t/a/c/d"]);
        expect(await keysOf("t/zzz")).toEqual([]);
        expect(await keysOf("nothing/here/")).toEqual([]);
      });

      test("the empty prefix lists the whole store", async () => {
        await putMany(["x/1", "y", "x.txt"]);
        expect(await keysOf("")).toEqual(["x.txt", "x/1", "y"]);
      });

      test("startAfter skips keys up to and including it, inside and across folders", async () => {
        await putMany(under(TRICKY_KEYS_IN_ORDER));
        const keysAfter = (key: string) => under(TRICKY_KEYS_IN_ORDER).filter((k) => k > key);
        expect(await keysOf("t/", { startAfter: "t/a.b" })).toEqual(keysAfter("t/a.b"));
        expect(await keysOf("t/", { startAfter: "t/a/" })).toEqual(keysAfter("t/a/"));
        expect(await keysOf("t/", { startAfter: "t/a/b" })).toEqual(keysAfter("t/a/b"));
        expect(await keysOf("t/", { startAfter: "t/a/c" })).toEqual(["t/a/c/d", ...keysAfter("t/a/c/d")]);
        expect(await keysOf("t/", { startAfter: "t/a/c/d" })).toEqual(keysAfter("t/a/c/d"));
        expect(await keysOf("t/", { startAfter: "s" })).toEqual(under(TRICKY_KEYS_IN_ORDER));
        expect(await keysOf("t/", { startAfter: "u" })).toEqual([]);
      });

      test("maxKeys stops after that many keys, also combined with startAfter", async () => {
        await putMany(under(TRICKY_KEYS_IN_ORDER));
        expect(await keysOf("t/", { maxKeys: 3 })).toEqual(under(TRICKY_KEYS_IN_ORDER).slice(0, 3));
        expect(await keysOf("t/", { maxKeys: 2, startAfter: "t/a.b" })).toEqual(["t/a/b", "t/a/c/d"]);
        expect(await keysOf("t/", { maxKeys: 1 })).toEqual(["t/a-b"]);
      });

      test('delimiter "/" lists only the objects directly under the prefix; listPrefixes names the folders', async () => {
        await putMany([...under(TRICKY_KEYS_IN_ORDER), "t/deep/er/still", "top"]);
        expect(await keysOf("t/", { delimiter: "/" })).toEqual(under(["a-b", "a.b", "a0", "ab", "b"]));
        expect(await store.listPrefixes("t/")).toEqual(["t/a/", "t/deep/"]);
        expect(await store.listPrefixes("t/a/")).toEqual(["t/a/c/"]);
        expect(await store.listPrefixes("t/d")).toEqual(["t/deep/"]);
        expect(await store.listPrefixes("")).toEqual(["t/"]);
        expect(await store.listPrefixes("t/a/c/")).toEqual([]);
        expect(await keysOf("", { delimiter: "/" })).toEqual(["top"]);
      });

      manyKeysTest("another delimiter rolls keys up at its first occurrence after the prefix: each common prefix is one entry of a page", async () => {
        // Lance's one listing of _refs/ and _versions/: _transactions/ (here 1,001 keys) is one entry.
        const transactions = Array.from({ length: 1001 }, (_, i) => `t/_transactions/${i}-x.txn`);
        await putMany([...transactions, "t/_deletions/1.arrow", "t/_lakewarden/head", "t/_refs/tags/v1.json", "t/_versions/1.manifest", "t/data/a.lance"]);
        store.stats.reset();
        expect(await keysOf("t/_", { startAfter: "t/_refs", delimiter: "transactions/" })).toEqual(["t/_refs/tags/v1.json", "t/_versions/1.manifest"]);
        expect(store.stats.snapshot()).toEqual({ ...NONE, list: 1 });
        expect(await keysOf("t/_", { delimiter: ".txn" })).toEqual(["t/_deletions/1.arrow", "t/_lakewarden/head", "t/_refs/tags/v1.json", "t/_versions/1.manifest"]);
      });

      test("paging with a small maxKeys and startAfter visits every key once, in byte order", async () => {
        // Keys whose locale order ("_" and lower case first) differs from S3's byte order.
        await putMany(under(BYTE_ORDER_KEYS_IN_ORDER));
        const visited: string[] = [];
        for (let page = await keysOf("t/", { maxKeys: 2 }); page.length > 0; page = await keysOf("t/", { maxKeys: 2, startAfter: visited.at(-1) })) {
          visited.push(...page);
        }
        expect(visited).toEqual(under(BYTE_ORDER_KEYS_IN_ORDER));
      });

      manyKeysTest("a listing of more than 1,000 keys that sort differently by locale skips none across the page boundary", async () => {
        // A thousand "_" keys fill the first page; the digits sort before "_" in bytes but after it by locale.
        const underscores = Array.from({ length: 1000 }, (_, i) => `o/_${String(i).padStart(5, "0")}`);
        const digits = ["o/0", "o/1", "o/9"];
        await putMany([...underscores, ...digits]);
        expect(await keysOf("o/")).toEqual([...digits, ...underscores]);
        expect(await keysOf("o/", { startAfter: "o/1" })).toEqual(["o/9", ...underscores]);
      });

      manyKeysTest("a page whose last entries are folders after its last object does not list them twice", async () => {
        const objects = Array.from({ length: 999 }, (_, i) => `p/a${String(i).padStart(4, "0")}`);
        await putMany([...objects, "p/b/1", "p/b/2", "p/c"]);
        expect(await store.listPrefixes("p/")).toEqual(["p/b/"]);
        expect(await keysOf("p/", { delimiter: "/" })).toEqual([...objects, "p/c"]);
      });

      manyKeysTest("listing pages through more than 1,000 keys, one list request per 1,000", async () => {
        const many = Array.from({ length: 1001 }, (_, i) => `many/${String(i).padStart(5, "0")}`);
        await putMany(many);
        store.stats.reset();
        expect(await keysOf("many/")).toEqual(many);
        expect(store.stats.snapshot()).toEqual({ ...NONE, list: 2 });
        store.stats.reset();
        expect(await keysOf("many/", { maxKeys: 1000 })).toEqual(many.slice(0, 1000));
        expect(store.stats.snapshot()).toEqual({ ...NONE, list: 1 });
        store.stats.reset();
        expect(await keysOf("many/", { startAfter: "many/00990" })).toEqual(many.slice(991));
        expect(store.stats.snapshot()).toEqual({ ...NONE, list: 1 });
      });
    });

    describe("deleteMany", () => {
      test("deletes keys, reports missing keys as deleted, and leaves other keys alone", async () => {
        await putMany(["d/1", "d/2", "d/sub/3", "keep/1"]);
        const result = await store.deleteMany(["d/1", "d/sub/3", "d/missing"]);
        expect([...result.deleted].sort()).toEqual(["d/1", "d/missing", "d/sub/3"]);
        expect(result.failed).toEqual([]);
        expect(await keysOf("")).toEqual(["d/2", "keep/1"]);
        expect(await store.listPrefixes("d/")).toEqual([]);
      });

      manyKeysTest("more than 1,000 keys cost ceil(n / 1,000) delete requests", async () => {
        const existing = Array.from({ length: 1001 }, (_, i) => `bulk/${String(i).padStart(5, "0")}`);
        const absent = Array.from({ length: 1499 }, (_, i) => `bulk/absent-${i}`);
        await putMany(existing);
        store.stats.reset();
        const result = await store.deleteMany([...existing, ...absent]);
        expect(store.stats.snapshot()).toEqual({ ...NONE, delete: 3 });
        expect(result.failed).toEqual([]);
        expect(result.deleted).toHaveLength(2500);
        expect(await keysOf("bulk/")).toEqual([]);
      });

      test("no keys, no request", async () => {
        expect(await store.deleteMany([])).toEqual({ deleted: [], failed: [] });
        expect(store.stats.snapshot()).toEqual(NONE);
      });
    });

    describe("request counts", () => {
      test("every operation counts exactly its requests by kind", async () => {
        expect(store.stats.snapshot()).toEqual(NONE);
        const v1 = await store.put("c/a", bytes("a")); // put 1
        await store.put("c/b", bytes("b"), { ifNoneMatch: "*" }); // put 2
        await expect(store.put("c/b", bytes("b"), { ifNoneMatch: "*" })).rejects.toThrow(); // put 3 (failed)
        await store.put("c/a", bytes("a2"), { ifMatch: v1.etag }); // put 4
        await expect(store.put("c/a", bytes("a3"), { ifMatch: v1.etag })).rejects.toThrow(); // put 5 (failed)
        await store.get("c/a"); // get 1
        await store.get("c/a", { suffixLength: 1 }); // get 2: a ranged read is a get
        await expect(store.get("c/none")).rejects.toThrow(); // get 3 (failed)
        await store.head("c/b"); // head 1
        await keysOf("c/"); // list 1
        await store.listPrefixes(""); // list 2
        await store.deleteMany(["c/a", "c/b"]); // delete 1
        expect(store.stats.snapshot()).toEqual({ get: 3, head: 1, list: 2, put: 5, delete: 1 });
        expect(store.stats.total()).toBe(12);
      });

      test("scoped stores share the counters and see the parent's keys", async () => {
        const child = store.scope("sub/dir");
        expect(child.uri).toBe(store.uriOf("sub/dir"));
        expect(child.uriOf("k")).toBe(store.uriOf("sub/dir/k"));
        await child.put("k", bytes("scoped"));
        expect(text((await store.get("sub/dir/k")).body)).toBe("scoped");
        expect(await keysOf("sub/")).toEqual(["sub/dir/k"]);
        expect(store.stats.snapshot()).toEqual({ ...NONE, put: 1, get: 1, list: 1 });
        expect(child.stats.snapshot()).toEqual(store.stats.snapshot());
        expect(store.scope("sub/").uri).toBe(store.uriOf("sub"));
      });
    });

    describe("keys cannot escape the store root", () => {
      test.each(ESCAPING_KEYS)("key %j is refused by every operation, before any request", async (key) => {
        await expect(store.get(key)).rejects.toBeInstanceOf(InvalidLocationError);
        await expect(store.head(key)).rejects.toBeInstanceOf(InvalidLocationError);
        await expect(store.put(key, bytes("x"))).rejects.toBeInstanceOf(InvalidLocationError);
        await expect(store.put(key, bytes("x"), { ifNoneMatch: "*" })).rejects.toBeInstanceOf(InvalidLocationError);
        await expect(store.deleteMany(["fine", key])).rejects.toBeInstanceOf(InvalidLocationError);
        expect(store.stats.snapshot()).toEqual(NONE);
      });

      test("escaping prefixes and scopes are refused", async () => {
        for (const prefix of ["../", "/abs/", "a//", "a/../", "..", "a\\b/"]) {
          await expect(keysOf(prefix)).rejects.toBeInstanceOf(InvalidLocationError);
          await expect(store.listPrefixes(prefix)).rejects.toBeInstanceOf(InvalidLocationError);
        }
        for (const subpath of ["..", "../sibling", "/abs", "a//b", "", "a/.."]) {
          expect(() => store.scope(subpath)).toThrow(InvalidLocationError);
        }
        expect(store.stats.snapshot()).toEqual(NONE);
      });

      test("a rejected deleteMany deletes nothing", async () => {
        await store.put("safe", bytes("x"));
        await expect(store.deleteMany(["safe", "../x"])).rejects.toBeInstanceOf(InvalidLocationError);
        expect(text((await store.get("safe")).body)).toBe("x");
      });
    });
  });
}

/**
 * Only the conditional-put tests, on their own. With `expectFailure` each is declared `test.fails`:
 * against a store that ignores If-Match / If-None-Match every one of them must fail, which shows
 * that they pass elsewhere because the server enforced the condition.
 */
export function describeConditionalPutConformance(
  name: string,
  makeStore: () => Promise<ConformanceTarget>,
  options: Pick<ConformanceOptions, "losersMayConflict"> & { expectFailure?: boolean } = {},
): void {
  const isLoss = (reason: unknown): boolean => reason instanceof PreconditionFailedError || (options.losersMayConflict === true && reason instanceof ConflictError);
  describe(`ObjectStore conditional puts: ${name}`, () => {
    let target: ConformanceTarget | undefined;
    beforeEach(async () => {
      target = await makeStore();
    });
    afterEach(async () => {
      await target?.cleanup?.();
    });
    defineConditionalPutTests(() => target!.store, isLoss, options.expectFailure ? test.fails : test);
  });
}

function defineConditionalPutTests(current: () => ObjectStore, isLoss: (reason: unknown) => boolean, it: typeof test.fails): void {
  let store: ObjectStore;
  beforeEach(() => {
    store = current();
  });

  it("create-only succeeds once, then fails with PreconditionFailedError and keeps the first body", async () => {
    const created = await store.put("lease", bytes("first"), { ifNoneMatch: "*" });
    await expect(store.put("lease", bytes("second"), { ifNoneMatch: "*" })).rejects.toSatisfy((err) => err instanceof PreconditionFailedError && err.uri === store.uriOf("lease"));
    const got = await store.get("lease");
    expect(text(got.body)).toBe("first");
    expect(got.etag).toBe(created.etag);
  });

  it("If-Match replaces only the version it names", async () => {
    const v1 = await store.put("head", bytes("v1"));
    const v2 = await store.put("head", bytes("v2"), { ifMatch: v1.etag });
    expect(v2.etag).not.toBe(v1.etag);
    await expect(store.put("head", bytes("stale"), { ifMatch: v1.etag })).rejects.toBeInstanceOf(PreconditionFailedError);
    const got = await store.get("head");
    expect(text(got.body)).toBe("v2");
    expect(got.etag).toBe(v2.etag);
    const v3 = await store.put("head", bytes("v3"), { ifMatch: v2.etag });
    expect((await store.head("head")).etag).toBe(v3.etag);
  });

  it("If-Match on a missing key is NotFoundError (S3 404) and creates nothing", async () => {
    await expect(store.put("ghost", bytes("x"), { ifMatch: '"0123456789abcdef"' })).rejects.toSatisfy((err) => err instanceof NotFoundError && err.uri === store.uriOf("ghost"));
    await expect(store.head("ghost")).rejects.toBeInstanceOf(NotFoundError);
  });

  it("N concurrent If-Match writers from the same ETag: exactly one wins", async () => {
    const base = await store.put("cas", bytes("base"));
    const writers = 8;
    const outcomes = await Promise.allSettled(Array.from({ length: writers }, (_, i) => store.put("cas", bytes(`writer-${i}`), { ifMatch: base.etag })));
    const winners = outcomes.flatMap((o, i) => (o.status === "fulfilled" ? [{ i, etag: o.value.etag }] : []));
    expect(winners).toHaveLength(1);
    for (const o of outcomes) {
      if (o.status === "rejected") expect(isLoss(o.reason), String(o.reason)).toBe(true);
    }
    const got = await store.get("cas");
    expect(text(got.body)).toBe(`writer-${winners[0]?.i}`);
    expect(got.etag).toBe(winners[0]?.etag);
  });

  it("N concurrent create-only writers: exactly one wins", async () => {
    const outcomes = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => store.put("once", bytes(`creator-${i}`), { ifNoneMatch: "*" })));
    const winners = outcomes.flatMap((o, i) => (o.status === "fulfilled" ? [i] : []));
    expect(winners).toHaveLength(1);
    for (const o of outcomes) {
      if (o.status === "rejected") expect(isLoss(o.reason), String(o.reason)).toBe(true);
    }
    expect(text((await store.get("once")).body)).toBe(`creator-${winners[0]}`);
  });
}
