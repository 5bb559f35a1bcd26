/**
 * Benchmark 2, cold table load: the current state of a table (schema, live files, config)
 * from nothing cached. lakewarden through the head (GET head ‖ LIST the newest version name),
 * lakewarden through the manifest (LIST, then read the newest manifest), and LanceDB's
 * openTable (which reads the newest manifest), each on a fresh store / connection.
 */
import type { Benchmark, BenchEnv, StorageKind } from "../harness/benchmark.ts";
import { storageLabel } from "../harness/benchmark.ts";
import { formatBytes, formatCount, formatMs, formatRatio, formatRequests, sample, type Sampled } from "../harness/measure.ts";
import { chartCaption, type BenchReport, type MarkdownTable } from "../harness/report.ts";
import { renderBarChart } from "../harness/svg-chart.ts";
import type { ProxyCounts } from "../harness/s3-request-kind.ts";
import { loadManifestTemplate } from "../datasets/lance-template.ts";
import { SyntheticTable } from "../datasets/synthetic-table.ts";
import { clearLakewardenState, syntheticRecords, writeCheckpoint, writeHead } from "../datasets/lakewarden-state.ts";
import { lancedbOpenTable } from "../tools/lancedb-side.ts";
import { openStore } from "../../lib/store/open-store.ts";
import type { RequestCounts } from "../../lib/store/object-store.ts";
import { loadTableState } from "../../lib/head/loader.ts";
import { lanceFormat } from "../../lib/formats/lance/lance-format.ts";

const FULL_FRAGMENTS = [1_000, 10_000, 100_000];
const QUICK_FRAGMENTS = [1_000, 10_000];
const VERSIONS = 20;
const UNARCHIVED = 4;
const CELL_BUDGET_MS = 60_000;

interface Method {
  id: "head" | "manifest" | "lancedb";
  label: string;
}

const METHODS: Method[] = [
  { id: "head", label: "lakewarden: head" },
  { id: "manifest", label: "lakewarden: manifest" },
  { id: "lancedb", label: "LanceDB openTable()" },
];

interface Cell {
  storage: StorageKind;
  fragments: number;
  manifestBytes: number;
  headBytes: number;
  results: Record<Method["id"], Sampled<{ requests: RequestCounts | ProxyCounts | null }>>;
}

export const coldLoadBenchmark: Benchmark = {
  name: "cold-load",
  title: "Cold table load: head vs manifest",
  async run(env: BenchEnv): Promise<BenchReport> {
    const { options } = env;
    const fragmentsGrid = options.quick ? QUICK_FRAGMENTS : FULL_FRAGMENTS;
    const storages: StorageKind[] = options.localOnly ? ["local"] : ["local", "s3"];
    const template = await loadManifestTemplate(`${options.cacheDir}/template`);
    const cells: Cell[] = [];
    for (const storage of storages) {
      const s3 = storage === "s3" ? await env.s3() : null;
      for (const fragments of fragmentsGrid) {
        const table = new SyntheticTable({
          template,
          cacheDir: options.cacheDir,
          fragments,
          storage,
          ...(s3 ? { s3 } : {}),
          name: `cold-load-${storage}-f${fragments}`,
          maxVersions: VERSIONS,
          realDataFiles: 64,
        });
        await table.prepare();
        await table.growTo(VERSIONS);
        const setup = openStore(table.location);
        try {
          await clearLakewardenState(setup);
          await writeCheckpoint(setup, (await syntheticRecords(setup, fragments, VERSIONS)).slice(0, VERSIONS - UNARCHIVED));
          const head = await writeHead(setup, VERSIONS);
          const check = (version: number, liveFiles: number, what: string) => {
            if (version !== VERSIONS || liveFiles !== fragments) {
              throw new Error(`${table.location}: ${what} loaded version ${version} with ${liveFiles} live files; expected ${VERSIONS} × ${fragments}`);
            }
          };
          const lakewardenRun = (load: (store: ReturnType<typeof openStore>) => Promise<{ version: number; liveFiles: number; source: string }>, expectedSource: string) =>
            sample(
              async () => {
                const store = openStore(table.location);
                const loaded = await load(store);
                return { loaded, requests: store.stats.snapshot() };
              },
              {
                runs: options.runs,
                budgetMs: CELL_BUDGET_MS,
                afterEach: async ({ loaded, requests }) => {
                  check(loaded.version, loaded.liveFiles, expectedSource);
                  if (loaded.source !== expectedSource) throw new Error(`${table.location}: loaded from the ${loaded.source}, expected the ${expectedSource}`);
                  return { requests };
                },
              },
            );
          const viaHead = await lakewardenRun(async (store) => {
            const state = await loadTableState(store);
            return { version: state.version, liveFiles: state.snapshot.liveFiles.length, source: state.source };
          }, "head");
          const viaManifest = await lakewardenRun(async (store) => {
            const latest = await lanceFormat.latestVersionFile(store);
            if (!latest) throw new Error(`${table.location}: no version files`);
            const snapshot = await lanceFormat.readSnapshot(store, latest);
            return { version: snapshot.record.version, liveFiles: snapshot.liveFiles.length, source: "manifest" };
          }, "manifest");
          const lancedb = await sample(() => lancedbOpenTable(table.databaseUri, table.tableName, s3), {
            runs: options.runs,
            budgetMs: CELL_BUDGET_MS,
            prepare: async () => void (await s3?.resetCounts()),
            afterEach: async (version) => {
              if (version !== VERSIONS) throw new Error(`${table.location}: LanceDB opened version ${version}, expected ${VERSIONS}`);
              return { requests: s3 ? await s3.requestCounts() : null };
            },
          });
          const cell: Cell = {
            storage,
            fragments,
            manifestBytes: table.manifestBytes,
            headBytes: head.bytes,
            results: { head: viaHead, manifest: viaManifest, lancedb },
          };
          cells.push(cell);
          env.log(`cold-load ${storage} ${formatCount(fragments)}: ` + METHODS.map((m) => `${m.id} ${formatMs(cell.results[m.id].medianMs)}`).join(", "));
        } finally {
          await table.remove();
        }
      }
    }
    return buildReport(env, cells, fragmentsGrid);
  },
};

function buildReport(env: BenchEnv, cells: Cell[], fragmentsGrid: number[]): BenchReport {
  const latency = env.options.s3LatencyMs;
  const table: MarkdownTable = {
    title: "Cold load: time and requests",
    note:
      "Median wall time from a fresh store / connection to the table's current state. *head* = `loadTableState` " +
      "(lib/head/loader.ts, what `openTable` runs, no format given) with a current head (header version 2: its first 4 MiB " +
      "in one ranged GET while the newest version name is listed, the `.lance` folder suggesting the format; the rest of a " +
      "larger head in one more GET once the properties are read), then `snapshot.liveFiles` (one object per live file, " +
      "built from the live_files section); *manifest* = newest version name (LIST) then that manifest and its live files; LanceDB = " +
      "connect + openTable + version(). Ratios: LanceDB time / lakewarden time. Requests of one run (lakewarden: store " +
      "counters; LanceDB: counted by the S3 proxy, not countable on local disk).",
    columns: ["storage", "fragments", "manifest", "head object", ...METHODS.map((m) => `${m.label} time`), "head vs LanceDB", ...METHODS.map((m) => `${m.label} requests`)],
    rows: cells.map((c) => [
      storageLabel(c.storage, latency),
      formatCount(c.fragments),
      formatBytes(c.manifestBytes),
      formatBytes(c.headBytes),
      ...METHODS.map((m) => formatMs(c.results[m.id].medianMs)),
      formatRatio(c.results.lancedb.medianMs, c.results.head.medianMs),
      ...METHODS.map((m) => formatRequests(c.results[m.id].last.requests)),
    ]),
  };
  const svg = renderBarChart({
    caption: chartCaption(env.context),
    title: "Cold table load (median time)",
    yLabel: "time",
    seriesNames: METHODS.map((m) => m.label),
    groups: cells.map((c) => ({
      label: `${formatCount(c.fragments)}, ${c.storage === "local" ? "local" : "S3"}`,
      values: METHODS.map((m) => c.results[m.id].medianMs),
    })),
    logScale: true,
    formatY: formatMs,
  });
  return {
    name: "cold-load",
    title: "Cold table load: head vs manifest",
    intro: [
      `A synthetic table of ${VERSIONS} versions with F fragments per manifest (copied from a real LanceDB manifest), a ` +
        `checkpoint up to version ${VERSIONS - UNARCHIVED} and a current head of version ${VERSIONS}. Every run checks it ` +
        "got the newest version with all F live files.",
    ],
    tables: [table],
    charts: [{ file: "cold-load.svg", svg, alt: "Cold load time: head, manifest, LanceDB openTable, per size and storage" }],
    headlines: cells
      .filter((c) => c.fragments === Math.max(...fragmentsGrid) || c.fragments === Math.min(...fragmentsGrid))
      .map(
        (c) =>
          `${formatCount(c.fragments)} fragments, ${storageLabel(c.storage, latency)}: head ${formatMs(c.results.head.medianMs)} ` +
          `(requests: ${formatRequests(c.results.head.last.requests)}), manifest ${formatMs(c.results.manifest.medianMs)} ` +
          `(${formatRequests(c.results.manifest.last.requests)}), LanceDB openTable ${formatMs(c.results.lancedb.medianMs)}` +
          (c.results.lancedb.last.requests ? ` (${formatRequests(c.results.lancedb.last.requests)})` : ""),
      ),
  };
}
