/**
 * openTable: request budgets (cold, stale, warm), and the fallback to the manifest for every
 * kind of head that cannot be trusted, always with the newest state and a warning.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { lanceFormat } from "../../lib/formats/lance/lance-format.ts";
import { NotATableError } from "../../lib/formats/errors.ts";
import type { TableSnapshot } from "../../lib/formats/table-format.ts";
import { jsonCodec } from "../../lib/head/codecs/json.ts";
import { encodeHead } from "../../lib/head/container.ts";
import { contentToModel } from "../../lib/head/content.ts";
import { HEAD_HEADER_BYTES } from "../../lib/head/header.ts";
import { openTable } from "../../lib/head/loader.ts";
import type { HeadWarning } from "../../lib/head/loader.ts";
import { HEAD_KEY, readStoredHead } from "../../lib/head/stored-head.ts";
import { writeTableHead } from "../../lib/head/write-table-head.ts";
import { LocalStore } from "../../lib/store/local-store.ts";
import type { ObjectStore } from "../../lib/store/object-store.ts";
import { buildLanceDataset, makeTempDir, removeDir } from "../support/lance-datasets.ts";
import type { LanceDataset } from "../support/lance-datasets.ts";

const NO_REQUESTS = { get: 0, head: 0, list: 0, put: 0, delete: 0 };

let dir: string;
let dataset: LanceDataset;
let store: ObjectStore;

beforeAll(async () => {
  dir = await makeTempDir("lw-head-loader-");
  dataset = await buildLanceDataset({ dbUri: dir });
});
afterAll(async () => {
  dataset?.close();
  await removeDir(dir);
});
beforeEach(() => {
  store = new LocalStore(dataset.tableUri);
});

async function latestFromManifest(): Promise<TableSnapshot> {
  const fresh = new LocalStore(dataset.tableUri);
  return lanceFormat.readSnapshot(fresh, (await lanceFormat.latestVersionFile(fresh))!);
}

function sameState(actual: TableSnapshot, expected: TableSnapshot): void {
  expect(actual.record).toEqual(expected.record);
  expect(actual.liveFiles).toEqual(expected.liveFiles);
  expect(actual.referencedFiles).toEqual(expected.referencedFiles);
  expect(actual.schema).toEqual(expected.schema);
  expect(Buffer.from(actual.raw).equals(Buffer.from(expected.raw))).toBe(true);
}

describe("cold load", () => {
  it("with a current head is one GET plus one LIST, and reads no manifest", async () => {
    await writeTableHead(store, { checkpointVersion: null });
    store.stats.reset();
    const table = await openTable(store);
    expect(store.stats.snapshot()).toEqual({ ...NO_REQUESTS, get: 1, list: 1 });
    const state = table.current()!;
    expect(state).toMatchObject({ source: "head", warning: null, codec: "arrow", version: dataset.written.at(-1)!.version });
    sameState(state.snapshot, await latestFromManifest());
    expect(state.recentVersions?.records.length).toBe(dataset.written.length);
    expect(state.footers.length).toBeGreaterThan(0);
  });

  it("with a stale head reads the manifest and still returns the newest state", async () => {
    const latest = dataset.written.at(-1)!.version;
    const staleDir = await makeTempDir("lw-head-stale-");
    try {
      // A copy of the table whose head lags one version behind.
      const copy = await buildLanceDataset({
        dbUri: staleDir,
        steps: [
          { op: "create", rows: 5 },
          { op: "append", rows: 5 },
        ],
      });
      const copyStore = new LocalStore(copy.tableUri);
      await writeTableHead(copyStore, { version: 1, checkpointVersion: null });
      copyStore.stats.reset();
      const warnings: HeadWarning[] = [];
      const table = await openTable(copyStore, { onWarning: (w) => warnings.push(w) });
      const state = table.current()!;
      expect(state).toMatchObject({ source: "manifest", version: 2, warning: { reason: "head-stale" } });
      expect(state.warning?.message).toContain("_lakewarden/head: head holds version 1, the latest is 2");
      expect(warnings).toEqual([state.warning]);
      // The head GET, the manifest GET, the LIST.
      expect(copyStore.stats.snapshot()).toEqual({ ...NO_REQUESTS, get: 2, list: 1 });
      expect(state.snapshot.record.total_rows).toBe(10);
      expect(state.recentVersions).toBeNull();
      // Footers of the stale head are reused only for files still live.
      const live = new Set(state.snapshot.liveFiles.flatMap((f) => f.paths));
      for (const footer of state.footers) expect(live.has(footer.path)).toBe(true);
      copy.close();
    } finally {
      await removeDir(staleDir);
    }
    expect(latest).toBeGreaterThan(2);
  });

  it("without a head reads the manifest and says so", async () => {
    const noHeadDir = await makeTempDir("lw-head-none-");
    try {
      const copy = await buildLanceDataset({ dbUri: noHeadDir, steps: [{ op: "create", rows: 3 }] });
      const table = await openTable(copy.tableUri);
      expect(table.current()).toMatchObject({ source: "manifest", version: 1, warning: { reason: "head-missing" }, codec: null });
      copy.close();
    } finally {
      await removeDir(noHeadDir);
    }
  });

  it("of something that is no table is a typed error naming it", async () => {
    const empty = await makeTempDir("lw-head-empty-");
    try {
      await expect(openTable(empty)).rejects.toThrow(NotATableError);
      await expect(openTable(empty)).rejects.toThrow(/not a table: no version files under _versions\/ \(lance\)/);
    } finally {
      await removeDir(empty);
    }
  });
});

describe("warm load", () => {
  let growDir: string;
  let grow: LanceDataset;
  beforeAll(async () => {
    growDir = await makeTempDir("lw-head-warm-");
    grow = await buildLanceDataset({ dbUri: growDir, steps: [{ op: "create", rows: 4 }] });
  });
  afterAll(async () => {
    grow?.close();
    await removeDir(growDir);
  });

  it("reuses the state within the interval (0 requests), checks once after it (1 LIST), reloads when newer", async () => {
    const growStore = new LocalStore(grow.tableUri);
    await writeTableHead(growStore, { checkpointVersion: null });
    let clock = 1_000_000;
    const table = await openTable(growStore, { now: () => clock, versionCheckInterval: 1000 });
    const first = table.current()!;
    expect(first).toMatchObject({ source: "head", version: 1 });

    growStore.stats.reset();
    clock += 999;
    expect(await table.latest()).toBe(first);
    expect(growStore.stats.snapshot()).toEqual(NO_REQUESTS);

    clock += 1;
    const checked = await table.latest();
    expect(growStore.stats.snapshot()).toEqual({ ...NO_REQUESTS, list: 1 });
    expect(checked.version).toBe(1);
    expect(checked.checkedAt).toBe(clock);

    // Within the interval of that check: nothing again, even though a version lands now.
    await grow.apply([{ op: "append", rows: 2 }]);
    growStore.stats.reset();
    clock += 500;
    expect((await table.latest()).version).toBe(1);
    expect(growStore.stats.snapshot()).toEqual(NO_REQUESTS);

    // After it: the latest is another version → the rest of a cold load (the LIST is not
    // repeated); nobody wrote the head, so it comes from the manifest.
    clock += 500;
    const reloaded = await table.latest();
    expect(reloaded).toMatchObject({ version: 2, source: "manifest", warning: { reason: "head-stale" } });
    expect(growStore.stats.snapshot()).toEqual({ ...NO_REQUESTS, get: 2, list: 1 });

    // Once the head is written, the next check that finds a newer version uses it.
    await grow.apply([{ op: "append", rows: 2 }]);
    await writeTableHead(growStore, { checkpointVersion: null });
    growStore.stats.reset();
    clock += 1000;
    expect(await table.latest()).toMatchObject({ version: 3, source: "head" });
    expect(growStore.stats.snapshot()).toEqual({ ...NO_REQUESTS, get: 1, list: 1 });
  });

  it("with interval 0 checks on every call, and concurrent calls share one check", async () => {
    const growStore = new LocalStore(grow.tableUri);
    const table = await openTable(growStore, { versionCheckInterval: 0 });
    growStore.stats.reset();
    await table.latest();
    await table.latest();
    expect(growStore.stats.snapshot()).toEqual({ ...NO_REQUESTS, list: 2 });
    growStore.stats.reset();
    await Promise.all([table.latest(), table.latest(), table.latest()]);
    expect(growStore.stats.snapshot()).toEqual({ ...NO_REQUESTS, list: 1 });
  });
});

describe("corrupt and foreign heads fall back to the manifest with a warning", () => {
  async function validHeadBytes(): Promise<Uint8Array> {
    await store.deleteMany([HEAD_KEY]);
    await writeTableHead(store, { checkpointVersion: null });
    return (await store.get(HEAD_KEY)).body;
  }

  async function expectFallback(bytes: Uint8Array, problem: RegExp): Promise<void> {
    await store.deleteMany([HEAD_KEY]);
    await store.put(HEAD_KEY, bytes);
    const table = await openTable(store);
    const state = table.current()!;
    expect(state.source).toBe("manifest");
    expect(state.warning?.reason).toBe("head-unreadable");
    expect(state.warning?.message).toContain(store.uriOf(HEAD_KEY));
    expect(state.warning?.message).toMatch(problem);
    expect(state.warning?.message).not.toContain("\n");
    sameState(state.snapshot, await latestFromManifest());
  }

  it("wrong magic (a foreign object)", async () => {
    await expectFallback(new TextEncoder().encode("PAR1 some parquet file that landed at the head key, long enough"), /not a lakewarden head/);
  });

  it("an empty object", async () => {
    await expectFallback(new Uint8Array(0), /shorter than its header/);
  });

  it("an unknown codec", async () => {
    const bytes = (await validHeadBytes()).slice();
    const name = new TextEncoder().encode("zarr");
    bytes[37] = name.length;
    bytes.fill(0, 38, HEAD_HEADER_BYTES);
    bytes.set(name, 38);
    await expectFallback(bytes, /codec "zarr" is not known/);
  });

  it("a newer header version", async () => {
    const bytes = (await validHeadBytes()).slice();
    bytes[4] = 3;
    await expectFallback(bytes, /header version 3 is not supported/);
  });

  it("a truncated body", async () => {
    const bytes = await validHeadBytes();
    await expectFallback(bytes.subarray(0, bytes.length - 100), /truncated/);
    await expectFallback(bytes.subarray(0, 40), /shorter than its 64-byte header/);
  });

  it("a flipped bit in the body", async () => {
    const bytes = (await validHeadBytes()).slice();
    bytes[HEAD_HEADER_BYTES + 10]! ^= 1;
    await expectFallback(bytes, /checksum mismatch/);
  });

  it("a header that matches the latest version over a body that is not a head (checksum right)", async () => {
    const latest = await latestFromManifest();
    const garbage = { properties: {}, tables: [] };
    const { bytes } = encodeHead(garbage, { tableVersion: latest.record.version, codec: jsonCodec, compression: "none" });
    await expectFallback(bytes, /lacks property/);
  });

  it("a head whose header and body disagree on the version", async () => {
    await validHeadBytes();
    const stored = await readStoredHead(store);
    if (stored.state !== "readable") throw new Error("setup: no readable head");
    const older = { ...stored.content, tableVersion: stored.content.tableVersion - 1 };
    const model = contentToModel({ ...older, snapshot: { ...older.snapshot, record: { ...older.snapshot.record, version: older.tableVersion } } });
    const { bytes } = encodeHead(model, { tableVersion: stored.content.tableVersion, codec: jsonCodec, compression: "gzip" });
    await expectFallback(bytes, /header says version \d+, (its summary|body) says/);
  });

  it("a head of another format", async () => {
    await validHeadBytes();
    const stored = await readStoredHead(store);
    if (stored.state !== "readable") throw new Error("setup: no readable head");
    // A format name no registry knows: a head naming a registered format is trusted to pick the reader.
    const { bytes } = encodeHead(contentToModel({ ...stored.content, format: "orc" }), {
      tableVersion: stored.content.tableVersion,
      codec: jsonCodec,
      compression: "gzip",
    });
    await expectFallback(bytes, /describes a orc table/);
  });
});
