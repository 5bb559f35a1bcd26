/**
 * The sectioned head (header version 2) on real LanceDB tables: its layout (small sections
 * first, zstd where the runtime has it, each path stored once), its request budget (one
 * ranged GET of the 64 KiB prefix serves the timeline; a loader's first read is 4 MiB, a head
 * larger than that costs one more GET, asked for while its currency is decided), a stale head rejected from its properties alone (its other sections are never
 * decompressed), corrupt sections, and version 1 heads written by the version 1 writer
 * still loading.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lanceFormat } from "../../lib/formats/lance/lance-format.ts";
import type { TableSnapshot } from "../../lib/formats/table-format.ts";
import { ZSTD_AVAILABLE } from "../../lib/head/compression.ts";
import { decodeHead } from "../../lib/head/container.ts";
import { decodeHeader } from "../../lib/head/header.ts";
import { loadStoredHead, readHeadTimeline } from "../../lib/head/head-reader.ts";
import { loadTableState, openTable } from "../../lib/head/loader.ts";
import { headCodecs } from "../../lib/head/registry.ts";
import { HEAD_PREFIX_BYTES, LOAD_PREFIX_BYTES, MIN_COMPRESSED_SECTION_BYTES, SECTION_ORDER, SectionedHead } from "../../lib/head/sectioned.ts";
import { liveFileColumnsFrom, liveFileColumnsOf } from "../../lib/head/sectioned-content.ts";
import { HEAD_KEY, readStoredHead } from "../../lib/head/stored-head.ts";
import { writeTableHead } from "../../lib/head/write-table-head.ts";
import { LocalStore } from "../../lib/store/local-store.ts";
import { buildLanceDataset, makeTempDir, removeDir, STANDARD_HISTORY } from "../support/lance-datasets.ts";
import type { LanceDataset } from "../support/lance-datasets.ts";

const NO_REQUESTS = { get: 0, head: 0, list: 0, put: 0, delete: 0 };

let dir: string;
/** STANDARD_HISTORY up to its index: a deletion file, an index, tags; a small head. */
let small: LanceDataset;
/** Incompressible schema metadata in every manifest: a head larger than the 64 KiB prefix. */
let large: LanceDataset;

beforeAll(async () => {
  dir = await makeTempDir("lw-head-sectioned-");
  small = await buildLanceDataset({ dbUri: `${dir}/small`, steps: STANDARD_HISTORY.slice(0, 7) });
  large = await buildLanceDataset({
    dbUri: `${dir}/large`,
    steps: [
      { op: "create", rows: 10 },
      { op: "append", rows: 5 },
      { op: "delete", where: "id = 3" },
    ],
    schemaMetadata: { blob: randomBytes(150 * 1024).toString("base64") },
  });
}, 120_000);
afterAll(async () => {
  small?.close();
  large?.close();
  await removeDir(dir);
});

async function manifestSnapshot(store: LocalStore): Promise<TableSnapshot> {
  return lanceFormat.readSnapshot(store, (await lanceFormat.latestVersionFile(store))!);
}

function expectSameSnapshot(actual: TableSnapshot, expected: TableSnapshot): void {
  expect(actual.record).toEqual(expected.record);
  expect(actual.liveFiles).toEqual(expected.liveFiles);
  expect(actual.referencedFiles).toEqual(expected.referencedFiles);
  expect(actual.schema).toEqual(expected.schema);
  expect(actual.config).toEqual(expected.config);
  expect(actual.versionFile).toEqual(expected.versionFile);
  expect(Buffer.from(actual.raw).equals(Buffer.from(expected.raw))).toBe(true);
}

async function storedHeadBytes(store: LocalStore): Promise<Uint8Array> {
  return (await store.get(HEAD_KEY)).body;
}

describe("layout", () => {
  it("header version 2, sections small first, zstd, each live path stored once", async () => {
    const store = new LocalStore(small.tableUri);
    await store.deleteMany([HEAD_KEY]);
    await writeTableHead(store, { checkpointVersion: null });
    const bytes = await storedHeadBytes(store);
    const header = decodeHeader(bytes, "head");
    expect(header.headerVersion).toBe(2);
    expect(header.compression).toBe(ZSTD_AVAILABLE ? "zstd" : "gzip");
    const head = SectionedHead.open(bytes, "head", headCodecs);
    const names = head.entries.map((e) => e.name);
    expect(names).toEqual(SECTION_ORDER.filter((name) => names.includes(name)));
    expect(names.slice(0, 3)).toEqual(["@properties", "summary", "recent_versions"]);
    expect(names.at(-1)).toBe("footers");
    // Compressed with the head's compression, except sections too small to gain from it.
    for (const entry of head.entries) expect(entry.compression).toBe(entry.rawLength < MIN_COMPRESSED_SECTION_BYTES ? "none" : header.compression);

    // referenced_files names live paths by reference: its stored path column spells out only the others.
    const stored = headCodecs.get("arrow")!.decode(head.raw("referenced_files")).tables[0]!;
    const spelled = stored.columns.find((c) => c.name === "path")!.values.filter((v) => v !== null) as string[];
    const snapshot = await manifestSnapshot(store);
    const livePaths = new Set(snapshot.liveFiles.flatMap((f) => [...f.paths, ...(f.deletionFile ? [f.deletionFile] : [])]));
    expect(snapshot.liveFiles.some((f) => f.deletionFile)).toBe(true);
    expect(spelled.length).toBeGreaterThan(0);
    for (const path of spelled) expect(livePaths.has(path)).toBe(false);
    expect(spelled.length).toBe(snapshot.referencedFiles.filter((f) => !livePaths.has(f.path)).length);

    // The whole object still decodes to the same state (decodeHead reads both header versions).
    const { model } = decodeHead(bytes, "head");
    expect(model.tables.find((t) => t.name === "referenced_files")!.columns.map((c) => c.name)).toEqual(["path", "kind", "size"]);
    const state = await loadTableState(store);
    expect(state.source).toBe("head");
    expectSameSnapshot(state.snapshot, snapshot);
    // The columnar view of the live files, straight from the section, equals the objects.
    expect(liveFileColumnsOf(head)).toEqual(liveFileColumnsFrom(snapshot.liveFiles));
    expect(state.liveFileColumns()).toEqual(liveFileColumnsFrom(snapshot.liveFiles));
    expect(state.liveFileColumns().count).toBe(snapshot.liveFiles.length);
  });
});

describe("request budget", () => {
  it("a small head: one GET (the prefix holds it all) and one LIST", async () => {
    const store = new LocalStore(small.tableUri);
    await writeTableHead(store, { checkpointVersion: null });
    expect((await storedHeadBytes(store)).length).toBeLessThan(HEAD_PREFIX_BYTES);
    store.stats.reset();
    const state = await loadTableState(store);
    expect(state.source).toBe("head");
    expect(store.stats.snapshot()).toEqual({ ...NO_REQUESTS, get: 1, list: 1 });
  });

  it("a head larger than the timeline's prefix: the timeline from one ranged GET; a cold load one GET (two past the loader's first read) and one LIST", async () => {
    const store = new LocalStore(large.tableUri);
    await store.deleteMany([HEAD_KEY]);
    await writeTableHead(store, { checkpointVersion: null });
    const bytes = await storedHeadBytes(store);
    expect(bytes.length).toBeGreaterThan(HEAD_PREFIX_BYTES);
    const head = SectionedHead.open(bytes.subarray(0, HEAD_PREFIX_BYTES), "head", headCodecs);
    expect(head.holds(["@properties", "summary", "recent_versions", "config", "schema", "live_files"])).toBe(true);
    expect(head.holds(["raw_metadata"])).toBe(false);

    store.stats.reset();
    const timeline = await readHeadTimeline(store, headCodecs);
    expect(store.stats.snapshot()).toEqual({ ...NO_REQUESTS, get: 1 });
    expect(timeline?.recentVersions.records.map((r) => r.version)).toEqual(large.written.map((w) => w.version));

    // The loader's first read (4 MiB) holds this head: one GET and the LIST.
    expect(bytes.length).toBeLessThan(LOAD_PREFIX_BYTES);
    store.stats.reset();
    const state = await loadTableState(store);
    expect(state.source).toBe("head");
    expect(store.stats.snapshot()).toEqual({ ...NO_REQUESTS, get: 1, list: 1 });
    expectSameSnapshot(state.snapshot, await manifestSnapshot(store));

    // A head larger than the first read: the rest in one more ranged GET.
    const file = (await lanceFormat.latestVersionFile(store))!;
    store.stats.reset();
    const loaded = await loadStoredHead(store, headCodecs, async (identity) => identity.versionFile.etag === file.etag, HEAD_PREFIX_BYTES);
    expect(store.stats.snapshot()).toEqual({ ...NO_REQUESTS, get: 2 });
    if (loaded.state !== "readable") throw new Error(`head not readable: ${loaded.state}`);
    expectSameSnapshot(loaded.content.snapshot, await manifestSnapshot(store));
  });

  it("a head larger than the first read: the rest is asked for while the head's currency is decided, not after", async () => {
    const store = new LocalStore(large.tableUri);
    await store.deleteMany([HEAD_KEY]);
    await writeTableHead(store, { checkpointVersion: null });
    const file = (await lanceFormat.latestVersionFile(store))!;
    let restAsked!: () => void;
    const restStarted = new Promise<void>((resolve) => (restAsked = resolve));
    const get = store.get.bind(store);
    store.get = (key, range) => {
      if (key === HEAD_KEY && range && "offset" in range && range.offset > 0) restAsked();
      return get(key, range);
    };
    // A loader that waited for the answer before asking for the rest would never get here.
    const loaded = await loadStoredHead(
      store,
      headCodecs,
      async (identity) => {
        await restStarted;
        return identity.versionFile.etag === file.etag;
      },
      HEAD_PREFIX_BYTES,
    );
    expect(loaded.state).toBe("readable");

    // Stale: the rest was transferred, and is dropped undecoded.
    store.stats.reset();
    const stale = await loadStoredHead(store, headCodecs, async () => false, HEAD_PREFIX_BYTES);
    expect(stale.state).toBe("not-current");
    expect(store.stats.snapshot()).toEqual({ ...NO_REQUESTS, get: 2 });
  });

  it("a stale head is rejected from its properties: one GET, its other sections never decompressed", async () => {
    const store = new LocalStore(large.tableUri);
    await store.deleteMany([HEAD_KEY]);
    await writeTableHead(store, { version: large.written.at(-2)!.version, checkpointVersion: null });
    const bytes = (await storedHeadBytes(store)).slice();
    // Damage every section but the properties: a reader that decompressed any of them would say "unreadable".
    const head = SectionedHead.open(bytes, "head", headCodecs);
    for (const entry of head.entries.slice(1)) if (entry.storedLength > 0) bytes[entry.offset + Math.floor(entry.storedLength / 2)]! ^= 0xff;
    await store.put(HEAD_KEY, bytes);
    store.stats.reset();
    const state = await loadTableState(store);
    expect(state).toMatchObject({ source: "manifest", warning: { reason: "head-stale" } });
    expect(state.liveFileColumns()).toEqual(liveFileColumnsFrom(state.snapshot.liveFiles));
    // The head's first read, the manifest (over 64 KiB: its tail, then the rest), the LIST.
    expect(store.stats.snapshot()).toEqual({ ...NO_REQUESTS, get: 3, list: 1 });
    expectSameSnapshot(state.snapshot, await manifestSnapshot(store));
  });

  it("a current head with a damaged section falls back to the manifest, naming the section", async () => {
    const store = new LocalStore(large.tableUri);
    await store.deleteMany([HEAD_KEY]);
    await writeTableHead(store, { checkpointVersion: null });
    const bytes = (await storedHeadBytes(store)).slice();
    const entry = SectionedHead.open(bytes, "head", headCodecs).entries.find((e) => e.name === "raw_metadata")!;
    bytes[entry.offset + 5]! ^= 1;
    await store.put(HEAD_KEY, bytes);
    const state = await loadTableState(store);
    expect(state).toMatchObject({ source: "manifest", warning: { reason: "head-unreadable" } });
    expect(state.warning?.message).toMatch(/section raw_metadata checksum mismatch/);
    expect((await readStoredHead(store)).state).toBe("unreadable");
  });
});

describe("version 1 heads", () => {
  it.each([
    ["small", () => small],
    ["large", () => large],
  ])("written by the version 1 writer still load (%s table)", async (_name, table) => {
    const store = new LocalStore(table().tableUri);
    await store.deleteMany([HEAD_KEY]);
    const written = await writeTableHead(store, { checkpointVersion: null, headerVersion: 1, compression: "gzip" });
    expect(written.action).toBe("created");
    expect(decodeHeader(await storedHeadBytes(store), "head").headerVersion).toBe(1);
    const handle = await openTable(store);
    const state = handle.current()!;
    expect(state).toMatchObject({ source: "head", warning: null });
    expectSameSnapshot(state.snapshot, await manifestSnapshot(store));
    const timeline = await readHeadTimeline(store, headCodecs);
    expect(timeline?.recentVersions.records.map((r) => r.version)).toEqual(table().written.map((w) => w.version));

    // The next head write (version 2 writer) of the same version keeps it; of a newer version replaces it.
    const again = await writeTableHead(store, { checkpointVersion: null });
    expect(again.action).toBe("skipped-same-version");
  });
});
