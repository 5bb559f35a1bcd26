/**
 * Iceberg cold load (issue 11, "Must show": head cold load vs metadata + manifest list +
 * manifests). Three ways to the current state of an Iceberg table, from nothing cached, side by
 * side on the same copy in one run:
 *   - lakewarden through the head: `loadTableState(store, { format: icebergFormat })` with a
 *     current head written by `writeTableHead` (what `openTable` runs);
 *   - lakewarden without a head: the format's own chain as lakewarden reads it
 *     (`icebergFormat.latestVersionFile` + `readSnapshot`: version hint ∥ LIST of metadata/,
 *     the metadata JSON, the manifest list, every manifest);
 *   - icebird 0.3.1 (an independent reader; dev dependency): `icebergMetadata` (version hint,
 *     then the metadata JSON) + `icebergManifests` (manifest list, then the manifests in
 *     parallel), its `fetch` served from the copy (local) or from the emulated S3 through the
 *     same per-request delay (S3).
 * On the readable real fixtures (copies, never the originals) and on a copy of spark-bunnies
 * extended with appended snapshots (test/support/iceberg-fixtures.ts `appendSnapshot`: each
 * snapshot one new manifest of F files, its manifest list carrying every earlier manifest).
 */
import { copyFile, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { GetObjectCommand, NoSuchKey, S3Client } from "@aws-sdk/client-s3";
import { icebergManifests, icebergMetadata } from "icebird";
import { translateS3Url } from "icebird/src/fetch.js";
import type { Benchmark, BenchEnv, StorageKind } from "../harness/benchmark.ts";
import { storageLabel } from "../harness/benchmark.ts";
import { formatBytes, formatMs, formatRatio, formatRequests, sample, type Sampled } from "../harness/measure.ts";
import { chartCaption, type BenchReport, type MarkdownTable } from "../harness/report.ts";
import type { S3Env } from "../harness/s3-env.ts";
import { renderBarChart } from "../harness/svg-chart.ts";
import { emptyCounts, type ProxyCounts } from "../harness/s3-request-kind.ts";
import { appendSnapshot, copyIcebergFixture, fixturePath, type FixtureCopy, type IcebergFixture } from "../../test/support/iceberg-fixtures.ts";
import { icebergFormat } from "../../lib/formats/iceberg/iceberg-format.ts";
import { loadTableState } from "../../lib/head/loader.ts";
import { writeTableHead } from "../../lib/head/write-table-head.ts";
import { openStore } from "../../lib/store/open-store.ts";
import type { ObjectStore, RequestCounts } from "../../lib/store/object-store.ts";

/** The fixtures a reader can read (the README's broken ones left out: they are refused, by design). */
const REAL_TABLES: IcebergFixture[] = ["spark-bunnies", "athena-example", "spark-rename_column", "hive_partitioned_table", "legacy_v1"];
/** Appended snapshots × data files per snapshot, on top of spark-bunnies. */
const FULL_SYNTHETIC = [
  { snapshots: 10, filesPerSnapshot: 10 },
  { snapshots: 100, filesPerSnapshot: 10 },
  // The same 1,000 files in one manifest: what a writer that merges manifests keeps.
  { snapshots: 1, filesPerSnapshot: 1000 },
];
const QUICK_SYNTHETIC = [{ snapshots: 10, filesPerSnapshot: 10 }];
const SYNTHETIC_BASE: IcebergFixture = "spark-bunnies";
/** The real data file every appended file is a byte copy of (so the head's footers are real). */
const BASE_DATA_FILE = "data/00000-1-6cd7611f-0ceb-4cf3-8b8e-8c856356df3e-00001.parquet";
const CELL_BUDGET_MS = 60_000;

interface Method {
  id: "head" | "chain" | "icebird";
  label: string;
}

const METHODS: Method[] = [
  { id: "head", label: "lakewarden: head" },
  { id: "chain", label: "lakewarden: metadata + manifests" },
  { id: "icebird", label: "icebird 0.3.1" },
];

interface Case {
  name: string;
  /** What the table is, one line for the report. */
  what: string;
  copy: FixtureCopy;
  snapshots: number;
  manifests: number;
  liveFiles: number;
}

interface Cell {
  storage: StorageKind;
  table: Case;
  headBytes: number;
  /** Bytes icebird fetched: version hint + metadata JSON + manifest list + manifests. */
  chainBytes: number;
  results: Record<Method["id"], Sampled<{ requests: RequestCounts | ProxyCounts | null }>>;
}

export const icebergBenchmark: Benchmark = {
  name: "iceberg",
  title: "Iceberg cold load: head vs metadata + manifest list + manifests",
  async run(env: BenchEnv): Promise<BenchReport> {
    const { options } = env;
    const storages: StorageKind[] = options.localOnly ? ["local"] : ["local", "s3"];
    const synthetic = options.quick ? QUICK_SYNTHETIC : FULL_SYNTHETIC;
    const cases: Case[] = [];
    const cells: Cell[] = [];
    try {
      for (const name of REAL_TABLES) cases.push(await realCase(name));
      for (const grid of synthetic) cases.push(await syntheticCase(grid.snapshots, grid.filesPerSnapshot));
      for (const storage of storages) {
        const s3 = storage === "s3" ? await env.s3() : null;
        for (const table of cases) {
          const prefix = `iceberg/${table.name}`;
          if (s3) {
            await s3.removePrefix(prefix);
            await s3.upload(table.copy.dir, prefix);
            // The local cell's head (of the local copy) is not the S3 table's: each storage writes its own.
            await s3.removePrefix(`${prefix}/_lakewarden`);
          }
          try {
            const cell = await measure(env, storage, table, s3 ? { s3, prefix } : null);
            cells.push(cell);
            env.log(`iceberg ${storage} ${table.name}: ` + METHODS.map((m) => `${m.id} ${formatMs(cell.results[m.id].medianMs)}`).join(", "));
          } finally {
            if (s3) await s3.removePrefix(prefix);
          }
        }
      }
    } finally {
      for (const table of cases) await table.copy.remove();
    }
    return buildReport(env, cells);
  },
};

async function realCase(name: IcebergFixture): Promise<Case> {
  const copy = await copyIcebergFixture(name);
  const shape = await tableShape(copy.dir);
  return { name, what: `fixture ${name}`, copy, ...shape };
}

async function syntheticCase(snapshots: number, filesPerSnapshot: number): Promise<Case> {
  const copy = await copyIcebergFixture(SYNTHETIC_BASE);
  try {
    const location = await tableLocation(copy.dir);
    const size = (await stat(join(copy.dir, BASE_DATA_FILE))).size;
    const start = Date.now() - snapshots * 60_000;
    for (let s = 0; s < snapshots; s++) {
      const files = [];
      for (let f = 0; f < filesPerSnapshot; f++) {
        const key = `data/appended-${String(s).padStart(4, "0")}-${String(f).padStart(4, "0")}.parquet`;
        await copyFile(join(copy.dir, BASE_DATA_FILE), join(copy.dir, key));
        files.push({ path: `${location}/${key}`, recordCount: 20, sizeInBytes: size });
      }
      await appendSnapshot(copy.dir, { files, timestampMs: start + s * 60_000 });
    }
  } catch (error) {
    await copy.remove();
    throw error;
  }
  const shape = await tableShape(copy.dir);
  const name = `bunnies+${snapshots}x${filesPerSnapshot}`;
  return { name, what: `spark-bunnies + ${snapshots} appended snapshots of ${filesPerSnapshot} data files each`, copy, ...shape };
}

async function tableLocation(dir: string): Promise<string> {
  const store = openStore(dir);
  const latest = await icebergFormat.latestVersionFile(store);
  const text = await readFile(join(dir, latest!.key), "utf8");
  return (JSON.parse(text) as { location: string }).location.replace(/\/+$/, "");
}

/** Snapshots in the current metadata, manifests of the current snapshot and its live files, as lakewarden reads them. */
async function tableShape(dir: string): Promise<{ snapshots: number; manifests: number; liveFiles: number }> {
  const store = openStore(dir);
  const latest = await icebergFormat.latestVersionFile(store);
  if (!latest) throw new Error(`${dir}: no current snapshot`);
  const snapshot = await icebergFormat.readSnapshot(store, latest);
  const versions = await icebergFormat.listVersionFiles(store);
  const manifests = snapshot.referencedFiles.filter((f) => f.role === "manifest").length;
  return { snapshots: versions.length, manifests, liveFiles: snapshot.liveFiles.length };
}

async function measure(env: BenchEnv, storage: StorageKind, table: Case, s3: { s3: S3Env; prefix: string } | null): Promise<Cell> {
  const { options } = env;
  const location = s3 ? s3.s3.uri(s3.prefix) : table.copy.dir;
  const setup = openStore(location);
  const written = await writeTableHead(setup, { format: icebergFormat });
  if (written.action !== "created") throw new Error(`${location}: head ${written.action}, expected created`);
  const expect = (what: string, liveFiles: number) => {
    if (liveFiles !== table.liveFiles) throw new Error(`${location}: ${what} found ${liveFiles} live files, expected ${table.liveFiles}`);
  };

  const lakewardenRun = (load: (store: ObjectStore) => Promise<{ liveFiles: number; source: string }>, expectedSource: string) =>
    sample(
      async () => {
        const store = openStore(location);
        const loaded = await load(store);
        return { loaded, requests: store.stats.snapshot() };
      },
      {
        runs: options.runs,
        budgetMs: CELL_BUDGET_MS,
        prepare: emptyMetadataCache,
        afterEach: async ({ loaded, requests }) => {
          expect(expectedSource, loaded.liveFiles);
          if (loaded.source !== expectedSource) throw new Error(`${location}: loaded from the ${loaded.source}, expected the ${expectedSource}`);
          return { requests };
        },
      },
    );
  const head = await lakewardenRun(async (store) => {
    const state = await loadTableState(store, { format: icebergFormat });
    return { liveFiles: state.snapshot.liveFiles.length, source: state.source };
  }, "head");
  const chain = await lakewardenRun(async (store) => {
    const latest = await icebergFormat.latestVersionFile(store);
    if (!latest) throw new Error(`${location}: no current snapshot`);
    const snapshot = await icebergFormat.readSnapshot(store, latest);
    return { liveFiles: snapshot.liveFiles.length, source: "manifest" };
  }, "manifest");

  const metadataLocation = await tableLocation(table.copy.dir);
  // Without a version hint (Athena's table is Glue's), icebird is given the metadata file's name, as a catalog would.
  const hasHint = await stat(join(table.copy.dir, "metadata/version-hint.text")).then(
    () => true,
    () => false,
  );
  const metadataFileName = hasHint ? undefined : (await icebergFormat.latestVersionFile(setup))!.key.slice("metadata/".length);
  const fetcher = s3 ? s3Fetcher(s3.s3, s3.prefix) : localFetcher(table.copy.dir);
  const icebird = await sample(() => withFetch(metadataLocation, fetcher, () => icebirdLiveFileCount(metadataLocation, metadataFileName)), {
    runs: options.runs,
    budgetMs: CELL_BUDGET_MS,
    prepare: async () => {
      fetcher.reset();
      await s3?.s3.resetCounts();
    },
    afterEach: async (liveFiles) => {
      expect("icebird", liveFiles);
      return { requests: s3 ? await s3.s3.requestCounts() : { ...emptyCounts(), get: fetcher.requests } };
    },
  });
  const chainBytes = fetcher.bytes;
  if (s3) fetcher.close();
  return { storage, table, headBytes: written.bytes, chainBytes, results: { head, chain, icebird } };
}

/**
 * lib/formats/iceberg keeps the last four parsed metadata files in memory (by store URI and
 * key: metadata files never change), which a cold process does not have: four other tables
 * (the read-only originals, only read) are opened off the clock so every timed run starts
 * without it. Without this, `readSnapshot` would skip its own version-hint and metadata GETs.
 */
async function emptyMetadataCache(): Promise<void> {
  for (const name of REAL_TABLES.slice(0, 4)) {
    const store = openStore(fixturePath(name));
    const latest = await icebergFormat.latestVersionFile(store);
    await icebergFormat.readRecord!(store, latest!);
  }
}

/** icebird's cold path: version hint, metadata JSON, manifest list, manifests; the live data files counted. */
async function icebirdLiveFileCount(location: string, metadataFileName: string | undefined): Promise<number> {
  const metadata = await icebergMetadata({ tableUrl: location, ...(metadataFileName ? { metadataFileName } : {}) });
  // icebird expects manifest-list records; a format v1 snapshot may list manifest paths inline.
  for (const snapshot of metadata.snapshots ?? []) {
    const inline = (snapshot as { manifests?: unknown[] }).manifests;
    if (Array.isArray(inline)) (snapshot as { manifests?: unknown[] }).manifests = inline.map((p) => (typeof p === "string" ? { manifest_path: p } : p));
  }
  const manifests = await icebergManifests(metadata);
  let live = 0;
  // lakewarden's liveFiles are the data files (a delete file rides on the data file it names).
  for (const manifest of manifests) for (const entry of manifest.entries) if (entry.status !== 2 && (entry.data_file.content ?? 0) === 0) live++;
  return live;
}

interface Fetcher {
  /** The object under the table root, or null (404). */
  get(key: string): Promise<Uint8Array | null>;
  requests: number;
  bytes: number;
  reset(): void;
  close(): void;
}

function localFetcher(dir: string): Fetcher {
  const fetcher: Fetcher = {
    requests: 0,
    bytes: 0,
    async get(key) {
      fetcher.requests++;
      try {
        const body = await readFile(join(dir, key));
        fetcher.bytes += body.length;
        return body;
      } catch {
        return null;
      }
    },
    reset() {
      fetcher.requests = 0;
      fetcher.bytes = 0;
    },
    close() {},
  };
  return fetcher;
}

/** GETs through the delayed endpoint, as lakewarden's S3 store does (the proxy counts them). */
function s3Fetcher(s3: S3Env, prefix: string): Fetcher {
  const env = s3.sdkEnvironment();
  const client = new S3Client({
    endpoint: s3.endpoint,
    region: env.AWS_REGION!,
    credentials: { accessKeyId: env.AWS_ACCESS_KEY_ID!, secretAccessKey: env.AWS_SECRET_ACCESS_KEY! },
    forcePathStyle: true,
  });
  const fetcher: Fetcher = {
    requests: 0,
    bytes: 0,
    async get(key) {
      fetcher.requests++;
      try {
        const out = await client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: `${prefix}/${key}` }));
        const body = await out.Body!.transformToByteArray();
        fetcher.bytes += body.length;
        return body;
      } catch (error) {
        if (error instanceof NoSuchKey) return null;
        throw error;
      }
    },
    reset() {
      fetcher.requests = 0;
      fetcher.bytes = 0;
    },
    close() {
      client.destroy();
    },
  };
  return fetcher;
}

/** Points the global `fetch` (icebird's only I/O) at `fetcher` for the table's location. */
async function withFetch<T>(location: string, fetcher: Fetcher, body: () => Promise<T>): Promise<T> {
  const prefixes = [translateS3Url(location), location].map((p) => p.replace(/\/+$/, "") + "/");
  const original = globalThis.fetch;
  globalThis.fetch = (async (input: string | URL | Request) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    const prefix = prefixes.find((p) => url.startsWith(p));
    if (prefix === undefined) return new Response("not served", { status: 404 });
    const bytes = await fetcher.get(decodeURIComponent(url.slice(prefix.length)));
    return bytes ? new Response(bytes) : new Response("not found", { status: 404 });
  }) as typeof fetch;
  try {
    return await body();
  } finally {
    globalThis.fetch = original;
  }
}

function buildReport(env: BenchEnv, cells: Cell[]): BenchReport {
  const latency = env.options.s3LatencyMs;
  const table: MarkdownTable = {
    title: "Cold load: time and requests",
    note:
      "Median wall time from a fresh store (icebird: a fresh read) to the current snapshot's live files (every manifest entry decoded; data files counted and checked). " +
      "*head* = `loadTableState(store, { format: icebergFormat })` (lib/head/loader.ts, what `openTable` runs) with a current " +
      "head: the head's GET in parallel with finding the latest metadata (version hint ∥ LIST of metadata/, then the metadata " +
      "JSON, whose current snapshot the head must name), then `snapshot.liveFiles`. *metadata + manifests* = " +
      "`icebergFormat.latestVersionFile` + `readSnapshot` (lakewarden's path when there is no head). icebird = " +
      "`icebergMetadata` + `icebergManifests` (version hint, metadata JSON, manifest list, manifests in parallel). " +
      "Ratios: time of the other path / time through the head, same cell. Requests of one run (lakewarden: store counters; " +
      "icebird: its fetches, counted by the S3 proxy on S3). *chain bytes* = what icebird fetched.",
    columns: [
      "storage",
      "table",
      "snapshots",
      "manifests",
      "live data files",
      "chain bytes",
      "head object",
      ...METHODS.map((m) => `${m.label} time`),
      "metadata + manifests / head",
      "icebird / head",
      ...METHODS.map((m) => `${m.label} requests`),
    ],
    alignRight: [false, false, true, true, true, true, true, true, true, true, true, true, false, false, false],
    rows: cells.map((c) => [
      storageLabel(c.storage, latency),
      c.table.name,
      String(c.table.snapshots),
      String(c.table.manifests),
      String(c.table.liveFiles),
      formatBytes(c.chainBytes),
      formatBytes(c.headBytes),
      ...METHODS.map((m) => formatMs(c.results[m.id].medianMs)),
      formatRatio(c.results.chain.medianMs, c.results.head.medianMs),
      formatRatio(c.results.icebird.medianMs, c.results.head.medianMs),
      ...METHODS.map((m) => formatRequests(c.results[m.id].last.requests)),
    ]),
  };
  const svg = renderBarChart({
    caption: chartCaption(env.context),
    title: "Iceberg cold load (median time)",
    yLabel: "time",
    seriesNames: METHODS.map((m) => m.label),
    groups: cells.map((c) => ({
      label: `${c.table.name}, ${c.storage === "local" ? "local" : "S3"}`,
      values: METHODS.map((m) => c.results[m.id].medianMs),
    })),
    logScale: true,
    formatY: formatMs,
  });
  const described = [...new Map(cells.map((c) => [c.table.name, c.table])).values()];
  return {
    name: "iceberg",
    title: "Iceberg cold load: head vs metadata + manifest list + manifests",
    intro: [
      "Each table is a copy in a temporary folder (the shared fixtures are never opened for writing); on S3 the copy is " +
        "uploaded to the emulator first. A head is written once per cell with `writeTableHead(store, { format: icebergFormat })` " +
        "(footers included, as the commit hook writes it). Every timed run checks that it found the expected number of live " +
        "files (the count lakewarden's `readSnapshot` gives at setup; icebird must agree).",
      "Tables: " + described.map((t) => `**${t.name}**: ${t.what}`).join("; ") + ".",
      "The synthetic tables are built with `appendSnapshot` (test/support/iceberg-fixtures.ts): each appended snapshot is one " +
        "new manifest of its data files (every data file a byte copy of one of spark-bunnies' Parquet files), a new manifest " +
        "list carrying all earlier manifests, and the next `vN.metadata.json` with the version hint moved, as Iceberg Java " +
        "writes an append without manifest merging. A real writer would merge manifests (`commit.manifest-merge.enabled`), so " +
        "the many-manifest case is the unmerged worst case, not a typical one.",
      "Shared machine: 2 cores used by other engineers at the same time; absolute times are noisy, the ratios within one cell are the figures to read.",
    ],
    tables: [table],
    charts: [{ file: "iceberg.svg", svg, alt: "Iceberg cold load time: head, metadata + manifests, icebird, per table and storage" }],
    headlines: cells
      .filter((c) => c.table.name.startsWith("bunnies+") || c.table.name === "spark-bunnies")
      .map(
        (c) =>
          `${c.table.name} (${c.table.manifests} manifests, ${c.table.liveFiles} live files), ${storageLabel(c.storage, latency)}: ` +
          `head ${formatMs(c.results.head.medianMs)} (${formatRequests(c.results.head.last.requests)}), metadata + manifests ` +
          `${formatMs(c.results.chain.medianMs)} (${formatRequests(c.results.chain.last.requests)}, ` +
          `${formatRatio(c.results.chain.medianMs, c.results.head.medianMs)}), icebird ${formatMs(c.results.icebird.medianMs)} ` +
          `(${formatRequests(c.results.icebird.last.requests)}, ${formatRatio(c.results.icebird.medianMs, c.results.head.medianMs)})`,
      ),
  };
}
