/**
 * Racing head writers: 36 writers offering shuffled versions (each of 12 versions three
 * times) at once, on local disk and on S3: moto's server, which enforces If-Match and
 * If-None-Match itself, so no wrapper stands between the writers and the server's answers
 * (also with injected 409s). A reader polling the whole time never sees the version go down or a head
 * it cannot decode, and the final head holds the highest version; also with writers of
 * version 1 heads (the layout written before) racing writers of sectioned (version 2) heads.
 */
import { randomUUID } from "node:crypto";
import { readFile, readdir } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lanceFormat } from "../../lib/formats/lance/lance-format.ts";
import { putHeadConditionally } from "../../lib/head/conditional-put.ts";
import { HeadWriteContentionError } from "../../lib/head/errors.ts";
import { HEAD_KEY, readStoredHead } from "../../lib/head/stored-head.ts";
import { writeTableHead } from "../../lib/head/write-table-head.ts";
import type { WriteTableHeadResult } from "../../lib/head/write-table-head.ts";
import { FaultInjectingStore } from "../support/fault-injecting-store.ts";
import { LocalStore } from "../../lib/store/local-store.ts";
import type { ObjectStore } from "../../lib/store/object-store.ts";
import { S3Store } from "../../lib/store/s3-store.ts";
import { startMotoServer, type MotoHandle } from "../support/moto.ts";
import { buildLanceDataset, makeTempDir, removeDir } from "../support/lance-datasets.ts";
import type { LanceDataset } from "../support/lance-datasets.ts";

const VERSIONS = 12;
const COPIES = 3;
const BUCKET = "head-races";

let dir: string;
let dataset: LanceDataset;
let moto: MotoHandle;

/** A seeded PRNG, so a failing interleaving of offers can be replayed. */
function mulberry32(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function shuffledOffers(random: () => number): number[] {
  const offers = Array.from({ length: VERSIONS * COPIES }, (_, i) => (i % VERSIONS) + 1);
  for (let i = offers.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [offers[i], offers[j]] = [offers[j]!, offers[i]!];
  }
  return offers;
}

async function filesUnder(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => relative(root, join(e.parentPath, e.name)).split(sep).join("/"));
}

beforeAll(async () => {
  dir = await makeTempDir("lw-head-races-");
  dataset = await buildLanceDataset({
    dbUri: dir,
    steps: [{ op: "create", rows: 3 }, ...Array.from({ length: VERSIONS - 1 }, () => ({ op: "append" as const, rows: 2 }))],
  });
  moto = await startMotoServer({ buckets: [BUCKET] });
});
afterAll(async () => {
  dataset?.close();
  await moto?.stop();
  await removeDir(dir);
});

interface RaceOutcome {
  results: WriteTableHeadResult[];
  seen: number[];
  /** Header versions of the heads the reader saw. */
  headerVersions: Set<number>;
}

/**
 * Runs every writer at once while one reader polls the head until they are all done.
 * `headerVersionOf(i)` picks writer i's header version (default: the current one, 2).
 */
async function race(makeStore: () => ObjectStore, seed: number, headerVersionOf?: (writer: number) => 1 | 2): Promise<RaceOutcome> {
  const random = mulberry32(seed);
  const offers = shuffledOffers(random);
  expect(new Set(offers).size).toBe(VERSIONS);
  let done = false;
  const seen: number[] = [];
  const headerVersions = new Set<number>();
  const reader = (async () => {
    const readerStore = makeStore();
    while (!done) {
      const stored = await readStoredHead(readerStore);
      if (stored.state === "unreadable") throw new Error(`reader saw an unreadable head: ${stored.problem}`);
      if (stored.state === "readable") {
        seen.push(stored.content.tableVersion);
        headerVersions.add(stored.probe.header!.headerVersion);
      }
    }
  })();
  const writers = offers.map((version, i) =>
    writeTableHead(makeStore(), {
      version,
      ...(headerVersionOf ? { headerVersion: headerVersionOf(i) } : {}),
      checkpointVersion: null,
      maxAttempts: 200,
      backoff: { baseMs: 1, maxMs: 20 },
      random,
    }),
  );
  try {
    const results = await Promise.all(writers);
    return { results, seen, headerVersions };
  } finally {
    done = true;
    await reader;
  }
}

function expectMonotonicAndComplete({ results, seen }: RaceOutcome): void {
  // The writers really raced (conditional puts lost) and the reader really saw the head move.
  expect(results.reduce((sum, r) => sum + r.lostRaces, 0)).toBeGreaterThan(0);
  expect(new Set(seen).size).toBeGreaterThan(1);
  expect(seen.length).toBeGreaterThan(0);
  for (let i = 1; i < seen.length; i++) expect(seen[i]!).toBeGreaterThanOrEqual(seen[i - 1]!);
  expect(results).toHaveLength(VERSIONS * COPIES);
  expect(results.filter((r) => r.action === "created")).toHaveLength(1);
  for (const result of results) {
    expect(["created", "replaced", "skipped-same-version", "skipped-newer-present"]).toContain(result.action);
    if (result.action === "skipped-newer-present") expect(result.storedVersion!).toBeGreaterThan(result.version);
    if (result.action === "skipped-same-version") expect(result.storedVersion).toBe(result.version);
  }
}

async function expectFinalHeadIsHighest(store: ObjectStore): Promise<void> {
  const stored = await readStoredHead(store);
  if (stored.state !== "readable") throw new Error(`final head not readable (${stored.state})`);
  expect(stored.content.tableVersion).toBe(VERSIONS);
  const manifest = await lanceFormat.readSnapshot(store, await lanceFormat.findVersionFile(store, VERSIONS));
  expect(stored.content.snapshot.liveFiles).toEqual(manifest.liveFiles);
  expect(stored.content.recentVersions.records.map((r) => r.version)).toEqual(Array.from({ length: VERSIONS }, (_, i) => i + 1));
}

describe("racing head writers", () => {
  it("on local disk: never moves back, ends at the highest version", async () => {
    const root = dataset.tableUri;
    await new LocalStore(root).deleteMany([HEAD_KEY]);
    const outcome = await race(() => new LocalStore(root), 20241125);
    expectMonotonicAndComplete(outcome);
    await expectFinalHeadIsHighest(new LocalStore(root));
  });

  it("mixed version 1 and version 2 heads, on local disk: never moves back, ends at the highest version", async () => {
    const root = dataset.tableUri;
    await new LocalStore(root).deleteMany([HEAD_KEY]);
    const outcome = await race(
      () => new LocalStore(root),
      20261130,
      (i) => (i % 2 === 0 ? 1 : 2),
    );
    expectMonotonicAndComplete(outcome);
    expect([...outcome.headerVersions].sort()).toEqual([1, 2]);
    await expectFinalHeadIsHighest(new LocalStore(root));
  });

  it("mixed version 1 and version 2 heads, on moto's S3 (conditions enforced by the server): never moves back", async () => {
    const makeStore = await uploadedToMoto();
    const outcome = await race(makeStore, 20261201, (i) => (i % 3 === 0 ? 2 : 1));
    expectMonotonicAndComplete(outcome);
    expect([...outcome.headerVersions].sort()).toEqual([1, 2]);
    await expectFinalHeadIsHighest(makeStore());
  });

  it("on moto's S3 with injected 409s: never moves back, ends at the highest version", async () => {
    const s3 = await uploadedToMoto();
    const conflicts = { injected: 0 };
    const makeStore = () =>
      new FaultInjectingStore(s3(), {
        // Every third head put of each writer answers 409 ConditionalRequestConflict.
        conflictOnPuts: (key, n) => key === HEAD_KEY && n % 3 === 2 && ++conflicts.injected > 0,
      });
    const outcome = await race(makeStore, 20250916);
    expectMonotonicAndComplete(outcome);
    expect(conflicts.injected).toBeGreaterThan(0);
    expect(outcome.results.reduce((sum, r) => sum + r.lostRaces, 0)).toBeGreaterThanOrEqual(conflicts.injected);
    await expectFinalHeadIsHighest(makeStore());
  });
});

/** The Lance table (without a head) copied to a fresh prefix of moto's bucket; returns a maker of plain S3Stores on it. */
async function uploadedToMoto(): Promise<() => ObjectStore> {
  const prefix = `t-${randomUUID()}`;
  const makeStore = () => new S3Store({ client: moto.s3Client, bucket: BUCKET, prefix, endpoint: moto.endpoint });
  const upload = makeStore();
  for (const key of await filesUnder(dataset.tableUri)) {
    if (key === HEAD_KEY) continue;
    await upload.put(key, await readFile(join(dataset.tableUri, ...key.split("/"))));
  }
  return makeStore;
}

describe("conditional put edge cases", () => {
  it("gives up with a typed error naming the head after maxAttempts lost attempts", async () => {
    const root = await makeTempDir("lw-head-contention-");
    try {
      const store = new FaultInjectingStore(new LocalStore(root), { conflictOnPuts: () => true });
      const attempt = putHeadConditionally(store, { bytes: new Uint8Array([1, 2, 3]), version: 1, codec: "arrow" }, { maxAttempts: 3, sleep: async () => {} });
      await expect(attempt).rejects.toThrow(HeadWriteContentionError);
      await expect(attempt).rejects.toThrow(/_lakewarden\/head: head not written, lost 3 conditional write attempts/);
    } finally {
      await removeDir(root);
    }
  });
});
