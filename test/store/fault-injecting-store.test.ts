import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { AccessDeniedError, ConflictError, InvalidLocationError, NotFoundError, StoreUnavailableError } from "../../lib/store/errors.ts";
import { FaultInjectingStore } from "../support/fault-injecting-store.ts";
import { LocalStore } from "../../lib/store/local-store.ts";

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (body: Uint8Array) => new TextDecoder().decode(body);
const NONE = { get: 0, head: 0, list: 0, put: 0, delete: 0 };

let dir: string;
let inner: LocalStore;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "lakewarden-faults-"));
  inner = new LocalStore(join(dir, "root"));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("FaultInjectingStore", () => {
  test("fails the k-th mutating request with the chosen error; the object is untouched", async () => {
    const store = new FaultInjectingStore(inner, {
      failMutations: [{ at: 2, error: (uri) => new AccessDeniedError(`${uri}: injected denial`, { uri }) }],
    });
    await store.put("a", bytes("1")); // mutation 1
    await expect(store.put("a", bytes("2"))).rejects.toSatisfy((err) => err instanceof AccessDeniedError && err.uri === inner.uriOf("a")); // mutation 2
    expect(text((await store.get("a")).body)).toBe("1");
    await store.put("a", bytes("3")); // mutation 3
    expect(text((await store.get("a")).body)).toBe("3");
    expect(store.mutationCount).toBe(3);
    // The failed request was made, so it counts once; nothing is counted twice.
    expect(store.stats.snapshot()).toEqual({ ...NONE, put: 3, get: 2 });
    expect(store.stats).toBe(inner.stats);
  });

  test("the default injected failure is StoreUnavailableError", async () => {
    const store = new FaultInjectingStore(inner, { failMutations: [{ at: 1 }] });
    await expect(store.put("a", bytes("1"))).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(inner.head("a")).rejects.toBeInstanceOf(NotFoundError);
  });

  test("delete batches are mutating requests: a failed batch reports its keys and deletes none of them", async () => {
    const keys = Array.from({ length: 1500 }, (_, i) => `k/${String(i).padStart(4, "0")}`);
    for (const key of keys) await inner.put(key, bytes("x"));
    const store = new FaultInjectingStore(inner, { failMutations: [{ at: 2 }] });
    inner.stats.reset();
    const result = await store.deleteMany(keys);
    expect(result.deleted).toHaveLength(1000);
    expect(result.failed.map((f) => f.key)).toEqual(keys.slice(1000));
    expect(result.failed[0]?.message).toContain("injected failure of mutating request #2");
    expect(store.stats.snapshot()).toEqual({ ...NONE, delete: 2 });
    const left: string[] = [];
    for await (const info of inner.list("k/")) left.push(info.key);
    expect(left).toEqual(keys.slice(1000));
  });

  test("an invalid key in deleteMany is refused before any batch runs", async () => {
    await inner.put("keep", bytes("x"));
    const store = new FaultInjectingStore(inner);
    const keys = [...Array.from({ length: 1000 }, () => "keep"), "../escape"];
    await expect(store.deleteMany(keys)).rejects.toBeInstanceOf(InvalidLocationError);
    expect((await inner.head("keep")).size).toBe(1);
  });

  test("answers 409 ConflictError on the chosen puts, by number or by predicate", async () => {
    const store = new FaultInjectingStore(inner, { conflictOnPuts: [2] });
    await store.put("h", bytes("1"));
    await expect(store.put("h", bytes("2"))).rejects.toBeInstanceOf(ConflictError);
    await store.put("h", bytes("3"));
    expect(text((await inner.get("h")).body)).toBe("3");
    store.plan = { conflictOnPuts: (key) => key === "lease" };
    await expect(store.put("lease", bytes("x"), { ifNoneMatch: "*" })).rejects.toBeInstanceOf(ConflictError);
    await store.put("other", bytes("x"));
    expect(store.putCount).toBe(5);
    expect(inner.stats.snapshot()).toEqual({ ...NONE, put: 5, get: 1 });
  });

  test("scoped stores share the numbering and the plan", async () => {
    const store = new FaultInjectingStore(inner, { failMutations: [{ at: 2 }] });
    await store.put("x", bytes("1"));
    await expect(store.scope("sub").put("y", bytes("2"))).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(store.mutationCount).toBe(2);
  });

  test("latency delays each request before it reaches the inner store", async () => {
    const store = new FaultInjectingStore(inner, { latencyMs: { put: 300 } });
    const pending = store.put("slow", bytes("x"));
    // One event-loop turn later the write cannot have happened: it waits out its latency first.
    await new Promise((resolve) => setImmediate(resolve));
    await expect(inner.head("slow")).rejects.toBeInstanceOf(NotFoundError);
    await pending;
    expect((await inner.head("slow")).size).toBe(1);
    expect(inner.stats.snapshot()).toEqual({ ...NONE, head: 2, put: 1 });
  });
});
