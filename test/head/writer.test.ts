/** The head writer's decisions, one at a time, with the requests each costs. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { putHeadConditionally } from "../../lib/head/conditional-put.ts";
import { openTable } from "../../lib/head/loader.ts";
import { HEAD_HEADER_BYTES } from "../../lib/head/header.ts";
import { HEAD_KEY, probeStoredHead, readStoredHead } from "../../lib/head/stored-head.ts";
import { writeTableHead } from "../../lib/head/write-table-head.ts";
import { LocalStore } from "../../lib/store/local-store.ts";
import type { ObjectStore } from "../../lib/store/object-store.ts";
import { buildLanceDataset, makeTempDir, removeDir } from "../support/lance-datasets.ts";
import type { LanceDataset } from "../support/lance-datasets.ts";

let dir: string;
let dataset: LanceDataset;
let store: ObjectStore;

beforeAll(async () => {
  dir = await makeTempDir("lw-head-writer-");
  dataset = await buildLanceDataset({
    dbUri: dir,
    steps: [
      { op: "create", rows: 4 },
      { op: "append", rows: 4 },
      { op: "append", rows: 4 },
    ],
  });
});
afterAll(async () => {
  dataset?.close();
  await removeDir(dir);
});
beforeEach(async () => {
  store = new LocalStore(dataset.tableUri);
  await store.deleteMany([HEAD_KEY]);
  store.stats.reset();
});

const storedVersion = async () => (await probeStoredHead(store))?.tableVersion;

describe("writeTableHead", () => {
  it("creates a missing head with If-None-Match and replaces an older one with If-Match", async () => {
    expect(await writeTableHead(store, { version: 2 })).toMatchObject({ action: "created", version: 2, storedVersion: null, attempts: 1 });
    const replaced = await writeTableHead(store, {});
    expect(replaced).toMatchObject({ action: "replaced", version: 3, storedVersion: 2, attempts: 1, lostRaces: 0 });
    expect(replaced.etag).toBe((await store.head(HEAD_KEY)).etag);
    expect(await storedVersion()).toBe(3);
  });

  it("leaves a newer head alone without reading any manifest", async () => {
    await writeTableHead(store, {});
    const etag = (await store.head(HEAD_KEY)).etag;
    store.stats.reset();
    const result = await writeTableHead(store, { version: 1 });
    expect(result).toMatchObject({ action: "skipped-newer-present", version: 1, storedVersion: 3, bytes: 0, built: null });
    // GET of the head, HEAD of version 1's file, LIST of the checkpoints; no manifest GET, no PUT.
    expect(store.stats.snapshot()).toMatchObject({ get: 1, put: 0 });
    expect((await store.head(HEAD_KEY)).etag).toBe(etag);
  });

  it("replaces something at the head key that is not a head, and says what it was", async () => {
    await store.put(HEAD_KEY, new TextEncoder().encode('{"not":"a head"}'));
    const result = await writeTableHead(store, {});
    expect(result.action).toBe("replaced");
    expect(result.storedVersion).toBeNull();
    expect(result.previousHeadProblem).toMatch(/_lakewarden\/head: not a lakewarden head/);
    expect((await readStoredHead(store)).state).toBe("readable");
  });

  it("replaces an empty object at the head key", async () => {
    await store.put(HEAD_KEY, new Uint8Array(0));
    expect(await writeTableHead(store, {})).toMatchObject({ action: "replaced", storedVersion: null });
    expect(await storedVersion()).toBe(3);
  });

  it("repairs a corrupt head of the same version instead of keeping it until the next commit", async () => {
    await writeTableHead(store, {});
    const bytes = (await store.get(HEAD_KEY)).body.slice();
    bytes[HEAD_HEADER_BYTES + 10]! ^= 1;
    await store.put(HEAD_KEY, bytes);
    const result = await writeTableHead(store, {});
    expect(result).toMatchObject({ action: "replaced", version: 3, storedVersion: 3 });
    expect(result.previousHeadProblem).toMatch(/checksum mismatch/);
    expect((await readStoredHead(store)).state).toBe("readable");
  });

  it("keeps a same-version head it cannot read because it is newer (unknown codec), not corrupt", async () => {
    await writeTableHead(store, {});
    const bytes = (await store.get(HEAD_KEY)).body.slice();
    const name = new TextEncoder().encode("zarr");
    bytes[37] = name.length;
    bytes.fill(0, 38, HEAD_HEADER_BYTES);
    bytes.set(name, 38);
    await store.put(HEAD_KEY, bytes);
    const etag = (await store.head(HEAD_KEY)).etag;
    expect((await writeTableHead(store, {})).action).toBe("skipped-same-version");
    expect((await store.head(HEAD_KEY)).etag).toBe(etag);
  });

  it("rewrites the same version only to change its codec", async () => {
    await writeTableHead(store, {});
    expect((await writeTableHead(store, { codec: "arrow" })).action).toBe("skipped-same-version");
    expect((await writeTableHead(store, { codec: "json" })).action).toBe("replaced");
    expect((await probeStoredHead(store))?.header?.codec).toBe("json");
  });
});

describe("putHeadConditionally", () => {
  /** A real head of the real table for `version` (written, read back, then removed). */
  const bytesFor = async (version: number) => {
    await store.deleteMany([HEAD_KEY]);
    await writeTableHead(store, { version });
    const bytes = (await store.get(HEAD_KEY)).body;
    await store.deleteMany([HEAD_KEY]);
    return { bytes, version, codec: "arrow" };
  };

  it("recreates the head when it was deleted between read and write (404 on If-Match)", async () => {
    const head = await bytesFor(2);
    const stale = { etag: '"gone"', size: 100, tableVersion: 1, header: null };
    const result = await putHeadConditionally(store, head, { sleep: async () => {} }, stale);
    expect(result).toMatchObject({ action: "created", lostRaces: 1, attempts: 2 });
    expect(await storedVersion()).toBe(2);
  });

  it("rereads after a lost If-Match (412) and then decides on what is there", async () => {
    const newer = await bytesFor(3);
    const older = await bytesFor(2);
    await store.put(HEAD_KEY, newer.bytes);
    // The writer believes an old head is there; the conditional put loses; the reread sees version 3.
    const believed = { etag: '"old"', size: 100, tableVersion: 1, header: null };
    const result = await putHeadConditionally(store, older, { sleep: async () => {} }, believed);
    expect(result).toMatchObject({ action: "skipped-newer-present", storedVersion: 3, lostRaces: 1 });
    expect(await storedVersion()).toBe(3);
  });

  it("loses If-None-Match to a head created meanwhile (412) and skips when that one is newer", async () => {
    const newer = await bytesFor(3);
    const older = await bytesFor(1);
    await store.put(HEAD_KEY, newer.bytes);
    const result = await putHeadConditionally(store, older, { sleep: async () => {} }, null);
    expect(result).toMatchObject({ action: "skipped-newer-present", storedVersion: 3, lostRaces: 1 });
  });
});

describe("a head left over from a table recreated at the same place", () => {
  it("is not trusted by readers (same version number, other manifest) and is replaced by the writer", async () => {
    const otherDir = await makeTempDir("lw-head-recreated-");
    try {
      // Two tables with the same version numbers; table B gets table A's head, as if B had
      // been deleted and recreated while its head object stayed behind.
      const a = await buildLanceDataset({ dbUri: otherDir, tableName: "a", steps: [{ op: "create", rows: 3 }] });
      const b = await buildLanceDataset({ dbUri: otherDir, tableName: "b", steps: [{ op: "create", rows: 7 }] });
      const storeA = new LocalStore(a.tableUri);
      const storeB = new LocalStore(b.tableUri);
      await writeTableHead(storeA, {});
      await storeB.put(HEAD_KEY, (await storeA.get(HEAD_KEY)).body);

      const state = (await openTable(storeB)).current()!;
      expect(state).toMatchObject({ version: 1, source: "manifest", warning: { reason: "head-mismatch" } });
      expect(state.warning?.message).toMatch(/head describes version 1 as .* but the stored one is/);
      expect(state.snapshot.record.total_rows).toBe(7);

      expect(await writeTableHead(storeB, {})).toMatchObject({ action: "replaced", version: 1, storedVersion: 1 });
      const fixed = (await openTable(storeB)).current()!;
      expect(fixed).toMatchObject({ source: "head", warning: null });
      expect(fixed.snapshot.record.total_rows).toBe(7);
      a.close();
      b.close();
    } finally {
      await removeDir(otherDir);
    }
  });
});
