/**
 * Benchmark 3, cleanup: lakewarden's pipeline (`runCleanup`: plan, delete, archive into a
 * checkpoint) against LanceDB's prune (`optimize({ cleanupOlderThan })`), each on its own
 * fresh copy of one real LanceDB table, with the same cutoff. Each run is a child process, so
 * its peak RSS is the cleanup's own. The files left afterwards are compared between the tools.
 */
import { spawn } from "node:child_process";
import { rm } from "node:fs/promises";
import { availableParallelism, loadavg } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Benchmark, BenchEnv, StorageKind } from "../harness/benchmark.ts";
import { storageLabel } from "../harness/benchmark.ts";
import { formatBytes, formatMs, formatRatio, formatRequests, median } from "../harness/measure.ts";
import { chartCaption, type BenchReport, type MarkdownTable } from "../harness/report.ts";
import { renderBarChart } from "../harness/svg-chart.ts";
import type { S3Env } from "../harness/s3-env.ts";
import { ensureCleanupDataset, prepareCleanupCopy, type CleanupDataset, type CleanupDatasetSpec } from "../datasets/cleanup-dataset.ts";
import type { CleanupJob, CleanupOutcome } from "../tools/cleanup-child.ts";
import { bundleCleanupChild, CLEANUP_CHILD_NODE_FLAGS } from "../tools/cleanup-child-bundle.ts";
import { openStore } from "../../lib/store/open-store.ts";

export const FULL_SPEC: CleanupDatasetSpec = { oldAppends: 300, rowsPerAppend: 1000, deleteEvery: 10, keptVersions: 10 };
const QUICK_SPEC: CleanupDatasetSpec = { oldAppends: 40, rowsPerAppend: 500, deleteEvery: 10, keptVersions: 5 };

/**
 * How a child runs: `bundle` is bench/tools/cleanup-child.ts compiled by esbuild with the Lambda's
 * options (what users run: the Lambda bundle, or compiled JavaScript from npm); `sources` is the
 * TypeScript run directly under Node's type stripping, kept so the difference stays visible.
 */
type Runtime = "bundle" | "sources";
type Variant = "lancedb" | "lakewarden" | "lakewarden-sources";
const TOOLS: { id: Variant; tool: CleanupJob["tool"]; runtime: Runtime; label: string }[] = [
  { id: "lancedb", tool: "lancedb", runtime: "bundle", label: "LanceDB optimize({cleanupOlderThan})" },
  { id: "lakewarden", tool: "lakewarden", runtime: "bundle", label: "lakewarden runCleanup, bundled (as the Lambda ships it)" },
  { id: "lakewarden-sources", tool: "lakewarden", runtime: "sources", label: "lakewarden runCleanup, TypeScript sources (type stripping)" },
];

interface ToolRuns {
  outcomes: CleanupOutcome[];
  /** LanceDB on S3: counted by the proxy; lakewarden: its store's counters (from the child). */
  requests: Record<string, number> | null;
  /** Keys left in the table after the last run (lakewarden's own `_lakewarden/` excluded). */
  remaining: Set<string>;
}

interface Cell {
  storage: StorageKind;
  tools: Record<Variant, ToolRuns>;
}

export const cleanupBenchmark: Benchmark = {
  name: "cleanup",
  title: "Cleanup: lakewarden vs LanceDB prune",
  async run(env: BenchEnv): Promise<BenchReport> {
    const { options } = env;
    const spec = options.quick ? QUICK_SPEC : FULL_SPEC;
    env.log(`cleanup: building the LanceDB table (${spec.oldAppends} appends, cached)`);
    const dataset = await ensureCleanupDataset(join(options.cacheDir, "cleanup"), spec);
    const storages: StorageKind[] = options.localOnly ? ["local"] : ["local", "s3"];
    const masterKeys = await remainingKeys(join(dataset.databaseDir, `${dataset.tableName}.lance`));
    const bundledChild = await bundleCleanupChild(await env.scratchDir("cleanup-child-bundle"));
    const children: Record<Runtime, string> = { bundle: bundledChild, sources: fileURLToPath(new URL("../tools/cleanup-child.ts", import.meta.url)) };
    const cells: Cell[] = [];
    for (const storage of storages) {
      const s3 = storage === "s3" ? await env.s3() : null;
      const targets = TOOLS.map((tool) => {
        const target =
          storage === "local"
            ? ({ storage, databaseDir: join(options.cacheDir, "scratch", `cleanup-${tool.id}`) } as const)
            : ({ storage, s3: s3!, prefix: `cleanup-${tool.id}` } as const);
        const databaseUri = target.storage === "local" ? target.databaseDir : s3!.uri(target.prefix);
        return {
          tool,
          target,
          databaseUri,
          tableLocation: `${databaseUri}/${dataset.tableName}.lance`,
          runs: [] as CleanupOutcome[],
          requests: null as Record<string, number> | null,
        };
      });
      // The tools take turns, run by run: the machine's speed drifts over minutes (LanceDB's own CPU time has moved
      // 124 -> 262 ms between invocations), and a block of one tool's runs, then the other's, would put the drift in their ratio.
      for (let run = 0; run < options.runs; run++) {
        for (const each of targets) {
          const cutoffMillis = await prepareCleanupCopy(dataset, each.target);
          await s3?.resetCounts();
          const outcome = await runChild(children[each.tool.runtime], {
            tool: each.tool.tool,
            databaseUri: each.databaseUri,
            tableName: dataset.tableName,
            tableLocation: each.tableLocation,
            cutoffMillis,
            ...(s3 ? { storageOptions: s3.lancedbStorageOptions() } : {}),
          });
          checkOutcome(outcome, dataset, each.tableLocation);
          each.requests = outcome.requests ?? (s3 ? { ...(await s3.requestCounts()) } : null);
          each.runs.push(outcome);
        }
      }
      const tools = {} as Record<Variant, ToolRuns>;
      for (const { tool, runs, requests, tableLocation } of targets) {
        tools[tool.id] = { outcomes: runs, requests, remaining: await remainingKeys(tableLocation) };
        env.log(
          `cleanup ${storage} ${tool.id}: ${formatMs(median(runs.map((r) => r.ms)))}, peak RSS ${formatBytes(median(runs.map((r) => r.peakRssBytes)))}, ` +
            `${runs.at(-1)!.versionsRemoved} versions removed`,
        );
      }
      cells.push({ storage, tools });
      await cleanupCopies(s3, options.cacheDir);
    }
    await rm(dirname(bundledChild), { recursive: true, force: true });
    return buildReport(env, dataset, cells, masterKeys);
  },
};

/** Both tools must remove exactly the versions older than the cutoff. */
function checkOutcome(outcome: CleanupOutcome, dataset: CleanupDataset, location: string): void {
  if (outcome.versionsRemoved !== dataset.lastOldVersion) {
    throw new Error(`${location}: ${outcome.tool} removed ${outcome.versionsRemoved} versions, expected ${dataset.lastOldVersion} (all before the cutoff)`);
  }
}

function runChild(child: string, job: CleanupJob): Promise<CleanupOutcome> {
  return new Promise((resolve, reject) => {
    // LAKEWARDEN_BENCH_CPU_PROF=<dir>: a V8 CPU profile of every lakewarden child, for reading where its CPU time goes.
    const profileDir = process.env.LAKEWARDEN_BENCH_CPU_PROF;
    const profile = profileDir && job.tool === "lakewarden" ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : [];
    const proc = spawn(process.execPath, [...CLEANUP_CHILD_NODE_FLAGS, ...profile, child, JSON.stringify(job)], {
      stdio: ["ignore", "pipe", "pipe"],
      env: process.env,
    });
    let stdout = "";
    let stderr = "";
    proc.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    proc.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    proc.on("error", reject);
    proc.on("exit", (code) => {
      const last = stdout.trim().split("\n").at(-1);
      if (code !== 0 || !last) {
        reject(
          new Error(
            `cleanup child (${job.tool}) exited ${code}: ${stderr
              .trim()
              .split("\n")
              .filter((l) => !l.includes(" WARN "))
              .join(" | ")}`,
          ),
        );
        return;
      }
      resolve(JSON.parse(last) as CleanupOutcome);
    });
  });
}

async function remainingKeys(tableLocation: string): Promise<Set<string>> {
  const store = openStore(tableLocation);
  const keys = new Set<string>();
  for await (const object of store.list("")) if (!object.key.startsWith("_lakewarden/")) keys.add(object.key);
  return keys;
}

async function cleanupCopies(s3: S3Env | null, cacheDir: string): Promise<void> {
  for (const tool of TOOLS) {
    if (s3) await s3.removePrefix(`cleanup-${tool.id}`);
    else await rm(join(cacheDir, "scratch", `cleanup-${tool.id}`), { recursive: true, force: true });
  }
}

function buildReport(env: BenchEnv, dataset: CleanupDataset, cells: Cell[], masterKeys: Set<string>): BenchReport {
  const latency = env.options.s3LatencyMs;
  const table: MarkdownTable = {
    title: "Cleanup: time, requests, memory",
    note: tableNote(env),
    columns: ["storage", "tool", "time", "vs LanceDB", "CPU time", "CPU, × LanceDB's", "peak RSS", "added", "versions removed", "bytes removed", "requests", "same files left"],
    rows: cells.flatMap((cell) => {
      const base = median(cell.tools.lancedb.outcomes.map((o) => o.ms));
      const baseCpu = median(cell.tools.lancedb.outcomes.map((o) => o.cpuMs));
      return TOOLS.map((tool) => {
        const runs = cell.tools[tool.id];
        const ms = median(runs.outcomes.map((o) => o.ms));
        const last = runs.outcomes.at(-1)!;
        return [
          storageLabel(cell.storage, latency),
          tool.label,
          formatMs(ms),
          tool.id === "lancedb" ? "1×" : formatRatio(base, ms),
          formatMs(median(runs.outcomes.map((o) => o.cpuMs))),
          tool.id === "lancedb" ? "1×" : cpuShare(median(runs.outcomes.map((o) => o.cpuMs)), baseCpu),
          withRange(runs.outcomes.map((o) => o.peakRssBytes)),
          withRange(runs.outcomes.map((o) => o.peakRssBytes - o.baselineRssBytes)),
          String(last.versionsRemoved),
          formatBytes(last.bytesRemoved),
          formatRequests(runs.requests),
          sameKeys(cell.tools.lancedb.remaining, runs.remaining, masterKeys),
        ];
      });
    }),
  };
  const svg = renderBarChart({
    caption: chartCaption(env.context),
    title: "Cleanup of one table (median time)",
    yLabel: "time",
    seriesNames: TOOLS.map((t) => t.label),
    groups: cells.map((cell) => ({
      label: cell.storage === "local" ? "local disk" : `S3 +${latency} ms`,
      values: TOOLS.map((t) => median(cell.tools[t.id].outcomes.map((o) => o.ms))),
    })),
    logScale: true,
    formatY: formatMs,
  });
  const spec = dataset.spec;
  return {
    name: "cleanup",
    title: "Cleanup: lakewarden vs LanceDB prune",
    timing:
      `median of ${env.options.runs} timed run${env.options.runs === 1 ? "" : "s"} per cell, each a fresh child process on a fresh copy of the table, ` +
      "the tools taking turns run by run, with no warm-up (a scheduled cleanup starts cold)",
    intro: [
      `One real LanceDB table (bench/datasets/cleanup-dataset.ts): ${spec.oldAppends} appends of ${spec.rowsPerAppend} rows ` +
        `(a delete every ${spec.deleteEvery}), compacted once by LanceDB: ${dataset.lastOldVersion} versions, ${dataset.files} files, ` +
        `${formatBytes(dataset.bytes)}. Each run copies it, takes the cutoff, then LanceDB commits ${spec.keptVersions} single-row ` +
        "deletes on the copy: those versions are newer than the cutoff and stay. (Lance only deletes files whose store mtime " +
        "is before the oldest kept manifest, so kept versions must be committed after the copy.)",
      `Both tools remove every version before the cutoff (${dataset.lastOldVersion}) and the data, deletion and transaction ` +
        "files only those versions referenced; every run checks the count. *Same files left* compares the tables after the " +
        "last run of each tool (lakewarden's own `_lakewarden/` aside). LanceDB's optimize() also tries compaction and index " +
        "optimization: on this table both are no-ops (checked every run), so its time is its prune.",
    ],
    tables: [table],
    charts: [{ file: "cleanup.svg", svg, alt: "Cleanup time, lakewarden vs LanceDB, local and S3" }],
    headlines: cells.map((cell) => {
      const l = cell.tools.lancedb.outcomes;
      const w = cell.tools.lakewarden.outcomes;
      const t = cell.tools["lakewarden-sources"].outcomes;
      const lm = median(l.map((o) => o.ms));
      const wm = median(w.map((o) => o.ms));
      const tm = median(t.map((o) => o.ms));
      return (
        `${storageLabel(cell.storage, latency)}: lakewarden bundled ${formatMs(wm)} vs LanceDB ${formatMs(lm)} (${formatRatio(lm, wm)}), ` +
        `CPU ${formatMs(median(w.map((o) => o.cpuMs)))} vs ${formatMs(median(l.map((o) => o.cpuMs)))} (${cpuShare(median(w.map((o) => o.cpuMs)), median(l.map((o) => o.cpuMs)))} LanceDB's), ` +
        `peak RSS ${formatBytes(median(w.map((o) => o.peakRssBytes)))} vs ${formatBytes(median(l.map((o) => o.peakRssBytes)))}; ` +
        `from the TypeScript sources ${formatMs(tm)} (${formatRatio(lm, tm)}), peak RSS ${formatBytes(median(t.map((o) => o.peakRssBytes)))}; ` +
        `${w.at(-1)!.versionsRemoved} versions removed by each`
      );
    }),
  };
}

/** What the table's columns measure, and the machine's load when the run ended. */
function tableNote(env: BenchEnv): string {
  return (
    `Median of ${env.options.runs} runs, each a fresh child process on a fresh copy (no warm-up: a scheduled cleanup starts cold). ` +
    "Time: connect/open through the end of the cleanup, measured inside the child after its libraries loaded. " +
    "CPU time: user + system time of the child over the same span, every thread (LanceDB's prune runs on several), median: " +
    "other load on a shared machine stretches the wall time far more than this; *CPU, × LanceDB's*: its CPU time over LanceDB's (below 1×: less CPU). " +
    `Load average when the run ended: ${loadavg()
      .map((load) => load.toFixed(1))
      .join(", ")} (1, 5, 15 min; ${availableParallelism()} cores). ` +
    "Peak RSS: the child's high-water RSS (Linux VmHWM), median (min–max) over the runs; *added*: peak minus the RSS after loading libraries. " +
    "Requests of the last run: lakewarden from its store's counters, LanceDB from the S3 proxy (not countable on local disk). " +
    "lakewarden's run includes what LanceDB's does not: the lease, archiving every removed version into a checkpoint, and a run receipt. " +
    "*Bundled*: the child (bench/tools/cleanup-child.ts) compiled by esbuild with the Lambda's bundling options " +
    "(infra/function-bundling.ts: ESM, node22, minified, AWS SDK included), split into one chunk per tool, run by plain `node`: " +
    "what users run (the Lambda bundle, or compiled JavaScript from npm). LanceDB's child runs the same way, its native addon " +
    "loaded from node_modules. *TypeScript sources*: the same child and lib/ run as .ts under Node's type stripping " +
    "(how the tests run), whose compiler and per-module transforms are part of its baseline RSS."
  );
}

/** lakewarden's CPU time as a multiple of LanceDB's: "0.85×" uses less. */
function cpuShare(oursMs: number, lanceDbMs: number): string {
  return `${(oursMs / lanceDbMs).toFixed(2)}×`;
}

/** `median (min–max)` of byte counts. */
function withRange(values: number[]): string {
  const low = formatBytes(Math.min(...values));
  const high = formatBytes(Math.max(...values));
  return low === high ? low : `${formatBytes(median(values))} (${low}–${high})`;
}

/**
 * Whether both tools left the same files. Files of the copied history are compared by name;
 * the kept versions' files are new on every copy (random names), so those are compared by count.
 */
function sameKeys(afterLanceDb: Set<string>, afterLakewarden: Set<string>, masterKeys: Set<string>): string {
  const old = (keys: Set<string>) => [...keys].filter((k) => masterKeys.has(k));
  const newer = (keys: Set<string>) => [...keys].filter((k) => !masterKeys.has(k)).length;
  const a = new Set(old(afterLanceDb));
  const b = new Set(old(afterLakewarden));
  const onlyA = [...a].filter((k) => !b.has(k));
  const onlyB = [...b].filter((k) => !a.has(k));
  if (onlyA.length === 0 && onlyB.length === 0 && newer(afterLanceDb) === newer(afterLakewarden)) {
    return `yes (${afterLanceDb.size} files)`;
  }
  const sample = [...onlyA.map((k) => `+LanceDB ${k}`), ...onlyB.map((k) => `+lakewarden ${k}`)].slice(0, 3).join(", ");
  return `no: ${onlyA.length} old files only after LanceDB, ${onlyB.length} only after lakewarden, newer ${newer(afterLanceDb)} vs ${newer(afterLakewarden)} (${sample})`;
}
