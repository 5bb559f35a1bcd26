/**
 * Delta benchmark rows (issue 10, "Must show"): `versions` vs a full log replay, and head cold
 * load vs replay from the newest checkpoint. On copies of real fixture tables and of
 * delta-0.2.0 extended with appended commits (one add each, written as a Delta writer writes
 * them: test/formats/delta/log-surgery.ts `appendCommit`), local disk only: the format's own
 * replay is DuckDB's `read_parquet` / `read_ndjson_objects` (test/formats/delta/duckdb-oracle.ts),
 * which reads local files (S3 would need its httpfs extension, a download).
 *
 * Every timed run is its own process (bench/tools/delta-child.ts), timed inside it from the
 * call to the result: lib/formats/delta remembers parsed log files in memory, so a second read
 * in one process would not read the log at all.
 */
import { spawn } from "node:child_process";
import { chmod, copyFile, cp, mkdtemp, readdir, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Benchmark, BenchEnv } from "../harness/benchmark.ts";
import { formatMs, formatRatio, formatRequests, median } from "../harness/measure.ts";
import { chartCaption, type BenchReport, type MarkdownTable } from "../harness/report.ts";
import { renderBarChart } from "../harness/svg-chart.ts";
import type { DeltaJob, DeltaMethod, DeltaOutcome } from "../tools/delta-child.ts";
import { appendCommit } from "../../test/formats/delta/log-surgery.ts";
import { deltaFormat } from "../../lib/formats/delta/delta-format.ts";
import { writeTableHead } from "../../lib/head/write-table-head.ts";
import { runCheckpoint } from "../../lib/maintenance/run-checkpoint.ts";
import { openStore } from "../../lib/store/open-store.ts";
import type { RequestCounts } from "../../lib/store/object-store.ts";

const FIXTURES_DIR = fileURLToPath(new URL("../../../shared/fixtures/delta/", import.meta.url));
const CHILD = fileURLToPath(new URL("../tools/delta-child.ts", import.meta.url));

const REAL_TABLES = ["delta-0.2.0", "simple_table", "basic-dv-with-checkpoint", "checkpoint-v2-table", "multi-part-checkpoint", "table_with_deletion_logs"];
const SYNTHETIC_BASE = "delta-0.2.0";
const FULL_SYNTHETIC = [100, 1000];
const QUICK_SYNTHETIC = [100];

interface Case {
  name: string;
  what: string;
  dir: string;
  parent: string;
  commits: number;
  checkpointVersion: number | null;
  liveFiles: number;
}

interface Timing {
  medianMs: number;
  samplesMs: number[];
  requests: RequestCounts | null;
}

interface Cell {
  table: Case;
  /** Before lakewarden wrote anything: the format's own replays, and lakewarden's with nothing of its own. */
  replay: Timing;
  duckdbReplay: Timing;
  fullVersions: Timing;
  duckdbLog: Timing;
  /** After `runCheckpoint` + `writeTableHead`. */
  head: Timing;
  versions: Timing;
  duckdbStartup: Timing;
  headBytes: number;
}

export const deltaBenchmark: Benchmark = {
  name: "delta",
  title: "Delta: versions vs log replay, head cold load vs checkpoint replay",
  async run(env: BenchEnv): Promise<BenchReport> {
    const { options } = env;
    const cases: Case[] = [];
    const skipped: string[] = [];
    const cells: Cell[] = [];
    try {
      for (const name of REAL_TABLES) {
        const table = await realCase(name).catch((error: Error) => {
          skipped.push(`${name}: ${error.message.split("\n")[0]}`);
          return null;
        });
        if (table) cases.push(table);
      }
      for (const commits of options.quick ? QUICK_SYNTHETIC : FULL_SYNTHETIC) cases.push(await syntheticCase(commits));
      for (const table of cases) {
        const cell = await measure(env, table);
        cells.push(cell);
        env.log(
          `delta ${table.name}: head ${formatMs(cell.head.medianMs)}, replay ${formatMs(cell.replay.medianMs)}, duckdb ${formatMs(cell.duckdbReplay.medianMs)}; ` +
            `versions ${formatMs(cell.versions.medianMs)}, full ${formatMs(cell.fullVersions.medianMs)}, duckdb log ${formatMs(cell.duckdbLog.medianMs)}`,
        );
      }
    } finally {
      for (const table of cases) await rm(table.parent, { recursive: true, force: true });
    }
    return buildReport(env, cells, skipped);
  },
};

async function copyTable(name: string): Promise<{ dir: string; parent: string }> {
  const parent = await mkdtemp(join(tmpdir(), `lw-bench-delta-${name}-`));
  const dir = join(parent, name);
  try {
    await cp(join(FIXTURES_DIR, name), dir, { recursive: true });
    await makeWritable(dir);
  } catch (error) {
    await rm(parent, { recursive: true, force: true });
    throw error;
  }
  return { dir, parent };
}

async function makeWritable(path: string): Promise<void> {
  const info = await stat(path);
  if (info.isDirectory()) {
    await chmod(path, 0o755);
    for (const entry of await readdir(path)) await makeWritable(join(path, entry));
  } else await chmod(path, 0o644);
}

/** What lakewarden reads of the table at setup: commits, newest checkpoint, live files. Throws for a table it refuses. */
async function shape(dir: string): Promise<{ commits: number; checkpointVersion: number | null; liveFiles: number }> {
  const store = openStore(dir);
  const latest = await deltaFormat.latestVersionFile(store);
  if (!latest) throw new Error("no commits");
  const snapshot = await deltaFormat.readSnapshot(store, latest);
  const names = await readdir(join(dir, "_delta_log"));
  const commits = names.filter((n) => /^\d{20}\.json$/.test(n)).length;
  const checkpoints = names
    .map((n) => /^(\d{20})\.checkpoint\./.exec(n))
    .filter((m) => m !== null)
    .map((m) => Number(m[1]));
  return { commits, checkpointVersion: checkpoints.length ? Math.max(...checkpoints) : null, liveFiles: snapshot.liveFiles.length };
}

async function realCase(name: string): Promise<Case> {
  const { dir, parent } = await copyTable(name);
  try {
    return { name, what: `fixture ${name}`, dir, parent, ...(await shape(dir)) };
  } catch (error) {
    await rm(parent, { recursive: true, force: true });
    throw error;
  }
}

async function syntheticCase(appended: number): Promise<Case> {
  const { dir, parent } = await copyTable(SYNTHETIC_BASE);
  try {
    const names = await readdir(join(dir, "_delta_log"));
    const last = Math.max(...names.filter((n) => /^\d{20}\.json$/.test(n)).map((n) => Number(n.slice(0, 20))));
    const template = names.length ? (await readdir(dir)).find((n) => n.endsWith(".parquet"))! : "";
    const size = (await stat(join(dir, template))).size;
    const start = Date.now() - appended * 60_000;
    for (let i = 1; i <= appended; i++) {
      const path = `part-appended-${String(i).padStart(5, "0")}.snappy.parquet`;
      await copyFile(join(dir, template), join(dir, path));
      const timestamp = start + i * 60_000;
      await appendCommit(dir, last + i, [
        { commitInfo: { timestamp, operation: "WRITE", operationParameters: { mode: "Append", partitionBy: "[]" }, readVersion: last + i - 1, isBlindAppend: true } },
        { add: { path, partitionValues: {}, size, modificationTime: timestamp, dataChange: true } },
      ]);
    }
    return {
      name: `${SYNTHETIC_BASE}+${appended}`,
      what: `delta-0.2.0 (checkpoint at version 3) + ${appended} appended commits of one data file each, no checkpoint after them`,
      dir,
      parent,
      ...(await shape(dir)),
    };
  } catch (error) {
    await rm(parent, { recursive: true, force: true });
    throw error;
  }
}

function runChild(job: DeltaJob): Promise<DeltaOutcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--disable-warning=ExperimentalWarning", CHILD, JSON.stringify(job)], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (c: Buffer) => (out += c.toString()));
    child.stderr.on("data", (c: Buffer) => (err += c.toString()));
    child.on("error", reject);
    child.on("exit", (code) => {
      if (code !== 0) return reject(new Error(`delta child ${job.method} on ${job.dir} exited ${code}: ${err.trim().split("\n").slice(-3).join(" | ")}`));
      const line = out.trim().split("\n").pop()!;
      resolve(JSON.parse(line) as DeltaOutcome);
    });
  });
}

/** One untimed warm-up process, then `runs` timed ones; each must find `expected`. */
async function timeMethod(method: DeltaMethod, table: Case, runs: number, expected: number | null, expectedSource?: string): Promise<Timing> {
  const samplesMs: number[] = [];
  let requests: RequestCounts | null = null;
  for (let i = 0; i <= runs; i++) {
    const outcome = await runChild({ method, dir: table.dir });
    if (expected !== null && outcome.count !== expected) throw new Error(`${table.name}: ${method} found ${outcome.count}, expected ${expected}`);
    if (expectedSource && outcome.source !== expectedSource) throw new Error(`${table.name}: ${method} loaded from the ${outcome.source}, expected the ${expectedSource}`);
    if (i > 0) samplesMs.push(outcome.ms);
    requests = outcome.requests;
  }
  return { medianMs: median(samplesMs), samplesMs, requests };
}

async function measure(env: BenchEnv, table: Case): Promise<Cell> {
  const runs = env.options.runs;
  // Before lakewarden has written anything: its versions reads every commit (a full replay).
  const replay = await timeMethod("replay", table, runs, table.liveFiles);
  const duckdbReplay = await timeMethod("duckdb-replay", table, runs, table.liveFiles);
  const fullVersions = await timeMethod("versions", table, runs, table.commits);
  const duckdbLog = await timeMethod("duckdb-log", table, runs, table.commits);
  const duckdbStartup = await timeMethod("duckdb-startup", table, runs, null);
  // lakewarden's state, as `lakewarden checkpoint` and the commit hook write it.
  const store = openStore(table.dir);
  await runCheckpoint(store, { format: deltaFormat });
  const written = await writeTableHead(store, { format: deltaFormat });
  if (written.action !== "created") throw new Error(`${table.name}: head ${written.action}, expected created`);
  const head = await timeMethod("head", table, runs, table.liveFiles, "head");
  const versions = await timeMethod("versions", table, runs, table.commits);
  return { table, replay, duckdbReplay, fullVersions, duckdbLog, head, versions, duckdbStartup, headBytes: written.bytes };
}

function buildReport(env: BenchEnv, cells: Cell[], skipped: string[]): BenchReport {
  const load: MarkdownTable = {
    title: "Head cold load vs replay from the newest checkpoint (local disk)",
    note:
      "Median wall time in a fresh process from the call to the live files of the latest version. *head* = " +
      "`loadTableState(store, { format: deltaFormat })` with a current head (what `openTable` runs); *replay* = " +
      "`deltaFormat.latestVersionFile` + `readSnapshot` (newest checkpoint + the commits after it, lakewarden's path " +
      "without a head); DuckDB = `read_parquet` over the checkpoint + `read_ndjson_objects` over the commits after it " +
      "(test/formats/delta/duckdb-oracle.ts), including an in-memory DuckDB instance's creation (its own row below). " +
      "Ratios: other / head.",
    columns: [
      "table",
      "commits",
      "newest checkpoint",
      "live files",
      "head object",
      "head",
      "replay",
      "DuckDB replay",
      "replay / head",
      "DuckDB / head",
      "head requests",
      "replay requests",
    ],
    alignRight: [false, true, true, true, true, true, true, true, true, true, false, false],
    rows: cells.map((c) => [
      c.table.name,
      String(c.table.commits),
      c.table.checkpointVersion === null ? "none" : String(c.table.checkpointVersion),
      String(c.table.liveFiles),
      `${(c.headBytes / 1024).toFixed(1)} KiB`,
      formatMs(c.head.medianMs),
      formatMs(c.replay.medianMs),
      formatMs(c.duckdbReplay.medianMs),
      formatRatio(c.replay.medianMs, c.head.medianMs),
      formatRatio(c.duckdbReplay.medianMs, c.head.medianMs),
      formatRequests(c.head.requests),
      formatRequests(c.replay.requests),
    ]),
  };
  const history: MarkdownTable = {
    title: "`versions` vs a full log replay (local disk)",
    note:
      "*versions* = `readHistory(store, { format: deltaFormat })` (lib/head/timeline-source.ts, what `lakewarden versions` " +
      "runs) after `runCheckpoint` and `writeTableHead`: the version checkpoint + the head's recent versions + only the " +
      "commits neither covers. *full replay* = the same call before lakewarden wrote anything: every version rebuilt " +
      "from the log. DuckDB = one query over every commit file (version, operation, in-commit timestamp, file time). " +
      "Ratios: other / versions.",
    columns: ["table", "commits", "versions", "full replay", "DuckDB log", "full replay / versions", "DuckDB / versions", "versions requests", "full replay requests"],
    alignRight: [false, true, true, true, true, true, true, false, false],
    rows: cells.map((c) => [
      c.table.name,
      String(c.table.commits),
      formatMs(c.versions.medianMs),
      formatMs(c.fullVersions.medianMs),
      formatMs(c.duckdbLog.medianMs),
      formatRatio(c.fullVersions.medianMs, c.versions.medianMs),
      formatRatio(c.duckdbLog.medianMs, c.versions.medianMs),
      formatRequests(c.versions.requests),
      formatRequests(c.fullVersions.requests),
    ]),
  };
  const startup = cells.flatMap((c) => c.duckdbStartup.samplesMs);
  const svg = renderBarChart({
    caption: chartCaption(env.context),
    title: "Delta cold load (median time, local disk)",
    yLabel: "time",
    seriesNames: ["lakewarden: head", "lakewarden: checkpoint replay", "DuckDB replay"],
    groups: cells.map((c) => ({ label: c.table.name, values: [c.head.medianMs, c.replay.medianMs, c.duckdbReplay.medianMs] })),
    logScale: true,
    formatY: formatMs,
  });
  return {
    name: "delta",
    title: "Delta: versions vs log replay, head cold load vs checkpoint replay",
    intro: [
      "Local disk only: DuckDB (the independent replay) reads local files; on S3 it would need its httpfs extension. Each " +
        "table is a copy in a temporary folder (the shared fixtures are never opened for writing). Every timed run is a " +
        "fresh process (lib/formats/delta keeps parsed log files in memory, so a second read in one process would not read " +
        "the log), timed inside it from the call to the result, libraries imported before; one untimed warm-up process " +
        "per method and table. Every run checks its count: live files equal to lakewarden's replay at setup (DuckDB must " +
        "agree), versions equal to the commit files.",
      "Tables: " + cells.map((c) => `**${c.table.name}**: ${c.table.what}`).join("; ") + ".",
      ...(skipped.length ? [`Left out (refused or unreadable at setup): ${skipped.join("; ")}.`] : []),
      "The appended commits carry no checkpoint (no Delta writer runs here, and lakewarden does not write Delta " +
        "checkpoints): the replay reads the checkpoint at version 3 and every commit after it. Writers checkpoint every " +
        "10 (Spark, older) or 100 commits, so 1,000 commits past a checkpoint is a worst case for the replay, not a typical one.",
      `DuckDB's fixed cost, an in-memory instance + connection created and closed: median ${formatMs(median(startup))} over ${startup.length} processes; it is inside every DuckDB figure.`,
      "Shared machine: 2 cores used by other engineers at the same time; absolute times are noisy, the ratios within one table are the figures to read.",
    ],
    tables: [load, history],
    charts: [{ file: "delta.svg", svg, alt: "Delta cold load time: head, checkpoint replay, DuckDB replay, per table" }],
    headlines: cells
      .filter((c) => c.table.name.startsWith(`${SYNTHETIC_BASE}+`) || c.table.name === "basic-dv-with-checkpoint")
      .map(
        (c) =>
          `${c.table.name} (${c.table.commits} commits, ${c.table.liveFiles} live files), local disk: head ${formatMs(c.head.medianMs)} vs ` +
          `checkpoint replay ${formatMs(c.replay.medianMs)} (${formatRatio(c.replay.medianMs, c.head.medianMs)}), DuckDB ${formatMs(c.duckdbReplay.medianMs)} ` +
          `(${formatRatio(c.duckdbReplay.medianMs, c.head.medianMs)}); versions ${formatMs(c.versions.medianMs)} vs full replay ` +
          `${formatMs(c.fullVersions.medianMs)} (${formatRatio(c.fullVersions.medianMs, c.versions.medianMs)}), DuckDB log ${formatMs(c.duckdbLog.medianMs)} ` +
          `(${formatRatio(c.duckdbLog.medianMs, c.versions.medianMs)})`,
      ),
  };
}
