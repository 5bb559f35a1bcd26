/**
 * Benchmark 4, head write after a commit: what the commit hook does once LanceDB has
 * committed version V (lib/head writeTableHead): read the stored head (version V-1), read
 * manifest V, build the new head (reusing the old one's version records and file footers),
 * PUT it conditionally. Time, bytes and requests for 1K / 10K / 100K fragments.
 */
import type { Benchmark, BenchEnv, StorageKind } from "../harness/benchmark.ts";
import { storageLabel } from "../harness/benchmark.ts";
import { formatBytes, formatCount, formatMs, formatRequests, sample, type Sampled } from "../harness/measure.ts";
import { chartCaption, type BenchReport, type MarkdownTable } from "../harness/report.ts";
import { renderBarChart } from "../harness/svg-chart.ts";
import { loadManifestTemplate } from "../datasets/lance-template.ts";
import { SyntheticTable } from "../datasets/synthetic-table.ts";
import { clearLakewardenState, syntheticRecords, writeCheckpoint, writeHead } from "../datasets/lakewarden-state.ts";
import { openStore } from "../../lib/store/open-store.ts";
import type { RequestCounts } from "../../lib/store/object-store.ts";
import { writeTableHead, type WriteTableHeadResult } from "../../lib/head/write-table-head.ts";
import { HEAD_KEY } from "../../lib/head/stored-head.ts";

const FULL_FRAGMENTS = [1_000, 10_000, 100_000];
const QUICK_FRAGMENTS = [1_000, 10_000];
/** The table: versions 1..V, a checkpoint up to V - 4, so the head carries 4 recent versions. */
const VERSIONS = 12;
const UNARCHIVED = 4;
/** The head writer reads at most 64 footers per head; the newest 64 fragments get real files. */
const REAL_DATA_FILES = 64;
const CELL_BUDGET_MS = 60_000;

interface Cell {
  storage: StorageKind;
  fragments: number;
  manifestBytes: number;
  sampled: Sampled<{ result: WriteTableHeadResult; requests: RequestCounts }>;
}

export const headWriteBenchmark: Benchmark = {
  name: "head-write",
  title: "Head write after a commit",
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
          name: `head-write-${storage}-f${fragments}`,
          maxVersions: VERSIONS,
          realDataFiles: REAL_DATA_FILES,
        });
        await table.prepare();
        await table.growTo(VERSIONS);
        const store = openStore(table.location);
        try {
          await clearLakewardenState(store);
          await writeCheckpoint(store, (await syntheticRecords(store, fragments, VERSIONS)).slice(0, VERSIONS - UNARCHIVED));
          // As the commit hook calls it (lib/follow/write-head-for-commit.ts): for the committed version.
          const sampled = await sample(() => writeTableHead(store, { version: VERSIONS }), {
            runs: options.runs,
            budgetMs: CELL_BUDGET_MS,
            // Each run starts where the commit hook does: the head of the previous version in place.
            prepare: async () => {
              await store.deleteMany([HEAD_KEY]);
              await writeHead(store, VERSIONS - 1);
              store.stats.reset();
            },
            afterEach: async (result) => {
              if (result.action !== "replaced" || result.version !== VERSIONS) {
                throw new Error(`${table.location}: head write for version ${VERSIONS} ended "${result.action}" at ${result.version}`);
              }
              return { result, requests: store.stats.snapshot() };
            },
          });
          cells.push({ storage, fragments, manifestBytes: table.manifestBytes, sampled });
          const built = sampled.last.result.built;
          env.log(
            `head-write ${storage} ${formatCount(fragments)}: ${formatMs(sampled.medianMs)}, ${formatBytes(sampled.last.result.bytes)} ` +
              `(footers ${built?.footers ?? 0}, manifests read ${built?.manifestsRead ?? 0})`,
          );
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
    title: "Head write after a commit",
    note:
      "Median wall time of `writeTableHead(store, { version })` for the newest version, as the commit hook calls it, with the previous version's head in place " +
      "(read whole: its records and footers are reused). *Head* = bytes PUT (header version 2: 64-byte header, section directory, sections compressed one by one with zstd); " +
      "*uncompressed* = mandatory sections + footers before compression. Requests of one run from the store's counters.",
    columns: ["storage", "fragments", "manifest", "time", "head", "uncompressed (mandatory + footers)", "footers", "manifests read", "requests"],
    rows: cells.map((c) => {
      const r = c.sampled.last.result;
      const built = r.built!;
      return [
        storageLabel(c.storage, latency),
        formatCount(c.fragments),
        formatBytes(c.manifestBytes),
        formatMs(c.sampled.medianMs) + (c.sampled.samplesMs.length < env.options.runs ? ` [${c.sampled.samplesMs.length} runs]` : ""),
        formatBytes(r.bytes),
        `${formatBytes(built.mandatoryBytes + built.footerBytes)} (${formatBytes(built.mandatoryBytes)} + ${formatBytes(built.footerBytes)})`,
        String(built.footers),
        String(built.manifestsRead),
        formatRequests(c.sampled.last.requests),
      ];
    }),
  };
  const storages = [...new Set(cells.map((c) => c.storage))];
  const svg = renderBarChart({
    caption: chartCaption(env.context),
    title: "Head write after a commit (median time)",
    yLabel: "time",
    seriesNames: storages.map((s) => storageLabel(s, latency)),
    groups: fragmentsGrid.map((fragments) => ({
      label: `${formatCount(fragments)} fragments`,
      values: storages.map((s) => cells.find((c) => c.storage === s && c.fragments === fragments)?.sampled.medianMs ?? Number.NaN),
    })),
    logScale: true,
    formatY: formatMs,
  });
  return {
    name: "head-write",
    title: "Head write after a commit",
    intro: [
      `A synthetic table of ${VERSIONS} versions (manifests copied from a real LanceDB manifest, F fragments each; ` +
        `the newest ${REAL_DATA_FILES} fragments have real data files for the head's footers), a checkpoint up to version ` +
        `${VERSIONS - UNARCHIVED}, the head of version ${VERSIONS - 1} in place. Each run writes the head of version ${VERSIONS}, ` +
        "as the commit hook does after LanceDB commits.",
    ],
    tables: [table],
    charts: [{ file: "head-write.svg", svg, alt: "Head write time by fragment count and storage" }],
    headlines: cells
      .filter((c) => c.fragments === Math.max(...fragmentsGrid))
      .map(
        (c) =>
          `${formatCount(c.fragments)} fragments, ${storageLabel(c.storage, latency)}: head written in ${formatMs(c.sampled.medianMs)}, ` +
          `${formatBytes(c.sampled.last.result.bytes)} (manifest ${formatBytes(c.manifestBytes)}), ${formatRequests(c.sampled.last.requests)} requests`,
      ),
  };
}
