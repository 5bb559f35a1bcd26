/**
 * Benchmark 1, version history: LanceDB `listVersions()` (reads every manifest) against
 * `lakewarden versions` (checkpoint + head + manifests newer than both), over a grid of
 * versions × fragments per manifest, on local disk and on the emulated S3.
 */
import type { Benchmark, BenchEnv, StorageKind } from "../harness/benchmark.ts";
import { storageLabel } from "../harness/benchmark.ts";
import { formatBytes, formatCount, formatMs, formatRatio, formatRequests, sample, type Sampled } from "../harness/measure.ts";
import { chartCaption, type BenchReport, type MarkdownTable } from "../harness/report.ts";
import { renderLineChart, type Panel } from "../harness/svg-chart.ts";
import type { S3Env } from "../harness/s3-env.ts";
import type { ProxyCounts } from "../harness/s3-request-kind.ts";
import { loadManifestTemplate } from "../datasets/lance-template.ts";
import { SyntheticTable } from "../datasets/synthetic-table.ts";
import { clearLakewardenState, syntheticRecords, writeCheckpoint, writeHead } from "../datasets/lakewarden-state.ts";
import { lancedbListVersions } from "../tools/lancedb-side.ts";
import { runLakewarden } from "../tools/lakewarden-cli.ts";
import { openStore } from "../../lib/store/open-store.ts";
import type { ObjectStore, RequestCounts } from "../../lib/store/object-store.ts";
import type { VersionRecord } from "../../lib/model/version-record.ts";

interface Grid {
  fragments: number[];
  versions: number[];
}

const FULL_GRID: Grid = { fragments: [1_000, 10_000, 100_000], versions: [2, 8, 32, 128, 512] };
const QUICK_GRID: Grid = { fragments: [1_000, 10_000], versions: [4, 24] };

/**
 * Cells left out of the full run, and why. On the emulated S3, LanceDB reads 100K-fragment
 * manifests (8 MB each) at ~6 per second through the one emulator process, and lakewarden's
 * "+ 16 unarchived" needs ~14 s a run at 32 versions: 128 and 512 versions would add minutes
 * to a run meant to fit in ~20 min on 2 cores, and measure the emulator's throughput rather
 * than request latency. Locally the 512 × 100K cell (4.3 GB of manifests) stays: it is the
 * published reference point.
 */
function cutReason(storage: StorageKind, fragments: number, versions: number): string | null {
  if (storage === "s3" && fragments >= 100_000 && versions > 32) {
    return "on S3, 100K-fragment tables stop at 32 versions: LanceDB reads their 8 MB manifests at ~6/s through the single emulator process (512 versions ≈ 80 s a run), which measures the emulator's throughput, not request latency, and would push the run past its ~20 min budget";
  }
  return null;
}

/** Time one cell side may take (see `sample`): slow cells run fewer times. */
const LANCEDB_CELL_BUDGET_MS = 60_000;
const LAKEWARDEN_CELL_BUDGET_MS = 20_000;

interface Scenario {
  id: string;
  label: string;
  /** Versions newer than the checkpoint, or null when not applicable at this V. */
  unarchived(versions: number): number | null;
  withHead: boolean;
}

const SCENARIOS: Scenario[] = [
  { id: "checkpoint", label: "checkpoint only", unarchived: () => 0, withHead: false },
  { id: "plus8", label: "checkpoint + 8 unarchived", unarchived: (v) => (v > 8 ? 8 : null), withHead: false },
  { id: "plus16", label: "checkpoint + 16 unarchived", unarchived: (v) => (v > 16 ? 16 : null), withHead: false },
  // The head carries every version since the checkpoint: how many does not matter; 16 (or all but one) here.
  { id: "head", label: "checkpoint + head", unarchived: (v) => Math.min(16, v - 1), withHead: true },
];

interface Measured {
  sampled: Sampled<{ requests: RequestCounts | ProxyCounts | null }>;
}

interface Cell {
  storage: StorageKind;
  fragments: number;
  versions: number;
  manifestBytes: number;
  lancedb: Measured;
  lakewarden: Record<string, Measured | null>;
}

export const historyBenchmark: Benchmark = {
  name: "history",
  title: "Version history: LanceDB listVersions() vs lakewarden versions",
  async run(env: BenchEnv): Promise<BenchReport> {
    const { options } = env;
    const grid = options.quick ? QUICK_GRID : FULL_GRID;
    const storages: StorageKind[] = options.localOnly ? ["local"] : ["local", "s3"];
    const template = await loadManifestTemplate(`${options.cacheDir}/template`);
    const cells: Cell[] = [];
    const cuts = new Set<string>();

    for (const storage of storages) {
      const s3 = storage === "s3" ? await env.s3() : null;
      for (const fragments of grid.fragments) {
        const versionsHere = grid.versions.filter((v) => {
          const reason = cutReason(storage, fragments, v);
          if (reason) cuts.add(reason);
          return !reason;
        });
        if (versionsHere.length === 0) continue;
        const table = new SyntheticTable({
          template,
          cacheDir: options.cacheDir,
          fragments,
          storage,
          ...(s3 ? { s3 } : {}),
          name: `history-${storage}-f${fragments}`,
          maxVersions: Math.max(...grid.versions.filter((v) => !cutReason("local", fragments, v))),
        });
        env.log(`history ${storage} ${formatCount(fragments)} fragments: preparing`);
        await table.prepare();
        const store = openStore(table.location);
        try {
          for (const versions of versionsHere) {
            await table.growTo(versions);
            const cell = await measureCell(env, table, store, s3, versions);
            cells.push(cell);
            env.log(
              `history ${storage} ${formatCount(fragments)}×${versions}: LanceDB ${formatMs(cell.lancedb.sampled.medianMs)}, ` +
                SCENARIOS.map((s) => `${s.id} ${formatMs(cell.lakewarden[s.id]?.sampled.medianMs ?? Number.NaN)}`).join(", "),
            );
          }
        } finally {
          await table.remove();
        }
      }
    }
    return buildReport(env, cells, [...cuts], grid);
  },
};

async function measureCell(env: BenchEnv, table: SyntheticTable, store: ObjectStore, s3: S3Env | null, versions: number): Promise<Cell> {
  const { runs } = env.options;
  const fragments = table.fragments;
  const records = await syntheticRecords(store, fragments, versions);

  const lancedb = await sample(() => lancedbListVersions(table.databaseUri, table.tableName, s3), {
    runs,
    budgetMs: LANCEDB_CELL_BUDGET_MS,
    prepare: async () => void (await s3?.resetCounts()),
    afterEach: async (result) => {
      // listVersions() reading the generated table is the check that the generator writes valid manifests.
      if (result.versions !== versions || result.newestVersion !== versions || result.newestFragments !== fragments) {
        throw new Error(
          `${table.location}: LanceDB listVersions() saw ${result.versions} versions (newest ${result.newestVersion}, ${result.newestFragments} fragments); expected ${versions} × ${fragments}`,
        );
      }
      return { requests: s3 ? await s3.requestCounts() : null };
    },
  });

  const lakewarden: Record<string, Measured | null> = {};
  for (const scenario of SCENARIOS) {
    const unarchived = scenario.unarchived(versions);
    if (unarchived === null) {
      lakewarden[scenario.id] = null;
      continue;
    }
    await clearLakewardenState(store);
    await writeCheckpoint(store, records.slice(0, versions - unarchived));
    if (scenario.withHead) await writeHead(store, versions);
    const sampled = await sample(() => runLakewarden(["versions", table.location, "--json"]), {
      runs,
      budgetMs: LAKEWARDEN_CELL_BUDGET_MS,
      afterEach: async (run) => {
        checkHistory(table.location, run.stdout, records);
        return { requests: run.requests };
      },
    });
    lakewarden[scenario.id] = { sampled };
  }
  await clearLakewardenState(store);
  return { storage: table.storage, fragments, versions, manifestBytes: table.manifestBytes, lancedb: { sampled: lancedb }, lakewarden };
}

/** The CLI's answer must be the whole history: every version, with the summaries LanceDB would give. */
function checkHistory(location: string, stdout: string, expected: VersionRecord[]): void {
  const got = JSON.parse(stdout) as VersionRecord[];
  const problem =
    got.length !== expected.length
      ? `${got.length} versions, expected ${expected.length}`
      : got.findIndex((r, i) => r.version !== expected[i]!.version || r.total_fragments !== expected[i]!.total_fragments || r.timestamp_millis !== expected[i]!.timestamp_millis);
  if (typeof problem === "string") throw new Error(`${location}: lakewarden versions printed ${problem}`);
  if (problem >= 0) throw new Error(`${location}: lakewarden versions row ${problem} is ${JSON.stringify(got[problem])}, expected ${JSON.stringify(expected[problem])}`);
}

function buildReport(env: BenchEnv, cells: Cell[], cuts: string[], grid: Grid): BenchReport {
  const { s3LatencyMs } = env.options;
  const storages = [...new Set(cells.map((c) => c.storage))];
  const tables: MarkdownTable[] = [];
  for (const storage of storages) {
    const here = cells.filter((c) => c.storage === storage);
    tables.push({
      title: `Time, ${storageLabel(storage, s3LatencyMs)}`,
      note:
        "Median wall time of the whole command (LanceDB: connect + openTable + listVersions; lakewarden: `lakewarden versions --json`, in-process). " +
        "In brackets: how many times faster than LanceDB in the same run. – = not applicable (fewer versions than unarchived).",
      columns: ["fragments", "versions", "manifest", "LanceDB listVersions()", ...SCENARIOS.map((s) => `lakewarden: ${s.label}`)],
      rows: here.map((c) => [
        formatCount(c.fragments),
        String(c.versions),
        formatBytes(c.manifestBytes),
        `${formatMs(c.lancedb.sampled.medianMs)}${runsNote(c.lancedb.sampled, env.options.runs)}`,
        ...SCENARIOS.map((s) => {
          const m = c.lakewarden[s.id];
          return m ? `${formatMs(m.sampled.medianMs)} (${formatRatio(c.lancedb.sampled.medianMs, m.sampled.medianMs)})${runsNote(m.sampled, env.options.runs)}` : "–";
        }),
      ]),
    });
    tables.push({
      title: `Requests, ${storageLabel(storage, s3LatencyMs)}`,
      note:
        storage === "s3"
          ? "Requests of one run. LanceDB: counted by the delaying proxy in front of the emulator; lakewarden: its store's own counters (`--stats`)."
          : "Requests of one run, from lakewarden's store counters (`--stats`). LanceDB's local reads cannot be counted from outside; see the S3 table for its requests.",
      columns: ["fragments", "versions", "LanceDB listVersions()", ...SCENARIOS.map((s) => `lakewarden: ${s.label}`)],
      rows: here.map((c) => [
        formatCount(c.fragments),
        String(c.versions),
        formatRequests(c.lancedb.sampled.last.requests),
        ...SCENARIOS.map((s) => formatRequests(c.lakewarden[s.id]?.sampled.last.requests ?? null)),
      ]),
    });
  }

  const panels: Panel[] = [];
  for (const storage of storages) {
    for (const fragments of grid.fragments) {
      const here = cells.filter((c) => c.storage === storage && c.fragments === fragments);
      panels.push({
        title: `${formatCount(fragments)} fragments, ${storage === "local" ? "local disk" : `S3 +${s3LatencyMs} ms`}`,
        series: [
          { name: "LanceDB listVersions()", dashed: true, points: here.map((c) => ({ x: c.versions, y: c.lancedb.sampled.medianMs })) },
          ...SCENARIOS.map((s) => ({
            name: `lakewarden: ${s.label}`,
            points: here.flatMap((c) => {
              const m = c.lakewarden[s.id];
              return m ? [{ x: c.versions, y: m.sampled.medianMs }] : [];
            }),
          })),
        ],
      });
    }
  }
  const svg = renderLineChart({
    caption: chartCaption(env.context),
    title: "Reading a table's version history (median wall time, log-log)",
    xLabel: "versions",
    yLabel: "time",
    panels,
    columns: grid.fragments.length,
    formatY: formatMs,
  });

  return {
    name: "history",
    title: "Version history: LanceDB listVersions() vs lakewarden versions",
    intro: [
      "Reading every version of a table with its summary. LanceDB lists `_versions/` and reads every manifest; " +
        "`lakewarden versions` reads the newest checkpoint (one Arrow file with a row per archived version), the head " +
        "(which carries every version since that checkpoint) and only the manifests newer than both; one LIST covers " +
        "the checkpoints, `_refs/` and `_versions/` (`_transactions/` rolled up into one entry by the delimiter).",
      "Scenarios: *checkpoint only* = every version archived; *+ 8 / + 16 unarchived* = that many newer versions not yet " +
        "archived and no head, so lakewarden reads those manifests; *checkpoint + head* = the last 16 versions (or all but one) " +
        "not archived but carried by a current head.",
      "Tables: versions 1..V of an F-fragment table, each manifest copied from a real LanceDB 0.31 manifest (schema, " +
        "data format 2.1, writer version, flags) with F fragments, written under V2 names with an inline transaction and a " +
        "`_transactions/` file (bench/datasets/manifest-generator.ts). Every LanceDB run checks that `listVersions()` reads " +
        "V versions of F fragments; every lakewarden run checks its JSON against the manifests.",
      ...(cuts.length ? [`Cut from the grid: ${cuts.join("; ")}.`] : []),
    ],
    tables,
    charts: [{ file: "history.svg", svg, alt: "Version history: LanceDB vs lakewarden, time by versions, per fragment count and storage" }],
    headlines: headlines(cells, s3LatencyMs),
  };
}

function runsNote(sampled: Sampled<unknown>, wanted: number): string {
  return sampled.samplesMs.length < wanted ? ` [${sampled.samplesMs.length} run${sampled.samplesMs.length === 1 ? "" : "s"}]` : "";
}

function headlines(cells: Cell[], latencyMs: number): string[] {
  const lines: string[] = [];
  for (const storage of [...new Set(cells.map((c) => c.storage))]) {
    const biggest = cells.filter((c) => c.storage === storage).sort((a, b) => b.fragments * b.versions - a.fragments * a.versions)[0];
    if (!biggest) continue;
    const where = `${biggest.versions} versions × ${formatCount(biggest.fragments)} fragments, ${storageLabel(storage, latencyMs)}`;
    const parts = SCENARIOS.flatMap((s) => {
      const m = biggest.lakewarden[s.id];
      return m ? [`${s.label} ${formatMs(m.sampled.medianMs)} (${formatRatio(biggest.lancedb.sampled.medianMs, m.sampled.medianMs)})`] : [];
    });
    lines.push(`${where}: LanceDB listVersions() ${formatMs(biggest.lancedb.sampled.medianMs)}; lakewarden ${parts.join(", ")}`);
  }
  return lines;
}
