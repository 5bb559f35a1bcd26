/**
 * `node bench/cleanup-instructions.ts [--tool lakewarden|lancedb|both] [--runs N] [--cpu-runs N] [--keep dir] [--cache dir] [--node-flags="..."]`
 *
 * The cleanup benchmark's work counted in instructions, a measure that holds on a loaded machine
 * (wall time and sampled profiles do not: a descheduled process looks slow). Each run is the
 * benchmark's bundled child (bench/tools/cleanup-child.ts, built as bench/benchmarks/cleanup.ts
 * builds it, run with the same node flags) on a fresh copy of the benchmark's table, under
 * `valgrind --tool=callgrind`. The child marks the start of its clock, each of lakewarden's
 * stages (its progress reporter) and the end of its clock; callgrind counts each span apart, so
 * loading the libraries is left out as the benchmark's clock leaves it out. Every thread is
 * counted (LanceDB's prune and V8's compiler and GC helpers run on several).
 *
 * User-space instructions only: time in the kernel (file system calls) is not in these counts,
 * so `--cpu-runs N` also runs the child N times without valgrind and prints its median CPU time
 * (user + system), the clock's and each stage's (the child reads its CPU time at every mark). `--keep dir` keeps callgrind's files for `callgrind_annotate` (V8's generated
 * code shows unnamed; its builtins, compiler, GC and runtime are named).
 */
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { FULL_SPEC } from "./benchmarks/cleanup.ts";
import { ensureCleanupDataset, prepareCleanupCopy, type CleanupDataset } from "./datasets/cleanup-dataset.ts";
import { median } from "./harness/measure.ts";
import type { CleanupJob, CleanupOutcome } from "./tools/cleanup-child.ts";
import { bundleCleanupChild, CLEANUP_CHILD_NODE_FLAGS } from "./tools/cleanup-child-bundle.ts";

type Tool = CleanupJob["tool"];

interface Options {
  tools: Tool[];
  runs: number;
  cpuRuns: number;
  keepDir: string | null;
  cacheDir: string;
  /** Extra node or V8 flags for lakewarden's child, to try one before the deployment adopts it. */
  nodeFlags: string[];
}

function parseOptions(): Options {
  const { values } = parseArgs({
    options: {
      tool: { type: "string", default: "both" },
      runs: { type: "string", default: "1" },
      "cpu-runs": { type: "string", default: "0" },
      keep: { type: "string" },
      cache: { type: "string" },
      "node-flags": { type: "string", default: "" },
    },
  });
  const tool = values.tool;
  if (tool !== "both" && tool !== "lakewarden" && tool !== "lancedb") throw new Error(`--tool: lakewarden, lancedb or both, got ${tool}`);
  return {
    tools: tool === "both" ? ["lakewarden", "lancedb"] : [tool],
    runs: Number(values.runs),
    cpuRuns: Number(values["cpu-runs"]),
    keepDir: values.keep ?? null,
    cacheDir: values.cache ?? process.env.LAKEWARDEN_BENCH_CACHE ?? join(tmpdir(), "lakewarden-bench-cache"),
    nodeFlags: values["node-flags"].split(" ").filter(Boolean),
  };
}

/** Instructions per span, in the order the child marked them (the clock's spans, loading and exit left out). */
type Spans = Map<string, number>;

/** Spans outside the benchmark's clock. */
const UNTIMED = new Set(["loading", "exit"]);

function runChild(child: string, job: CleanupJob, nodeFlags: string[], callgrindOut: string | null): Promise<CleanupOutcome> {
  const node = [...CLEANUP_CHILD_NODE_FLAGS, ...nodeFlags, child, JSON.stringify(job)];
  const [command, args] = callgrindOut ? ["valgrind", ["--tool=callgrind", `--callgrind-out-file=${callgrindOut}`, process.execPath, ...node]] : [process.execPath, node];
  return new Promise((resolve, reject) => {
    const proc = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, LAKEWARDEN_BENCH_CALLGRIND_STAGES: callgrindOut ? "1" : "0" } });
    let stdout = "";
    let stderr = "";
    proc.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    proc.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    proc.on("error", reject);
    proc.on("exit", (code) => {
      const last = stdout.trim().split("\n").at(-1);
      if (code !== 0 || !last) reject(new Error(`cleanup child (${job.tool}) exited ${code}: ${stderr.trim().split("\n").slice(-5).join(" | ")}`));
      else resolve(JSON.parse(last) as CleanupOutcome);
    });
  });
}

/** Callgrind's dumps of one run: `<out>.N` per mark (named by its trigger), `<out>` at exit. */
async function readSpans(outFile: string): Promise<Spans> {
  const dir = join(outFile, "..");
  const base = outFile.slice(dir.length + 1);
  const dumps: { part: number; label: string; instructions: number }[] = [];
  for (const name of await readdir(dir)) {
    if (name !== base && !name.startsWith(`${base}.`)) continue;
    const text = await readFile(join(dir, name), "utf8");
    const trigger = /^desc: Trigger: (.*)$/m.exec(text)?.[1] ?? "";
    const totals = /^totals: (\d+)/m.exec(text)?.[1];
    const part = /^part: (\d+)/m.exec(text)?.[1];
    if (!totals || !part) throw new Error(`${name}: not a callgrind dump`);
    dumps.push({ part: Number(part), label: trigger.startsWith("dump ") ? trigger.slice(5) : "exit", instructions: Number(totals) });
  }
  const spans: Spans = new Map();
  for (const dump of dumps.sort((a, b) => a.part - b.part)) {
    if (!UNTIMED.has(dump.label)) spans.set(dump.label, (spans.get(dump.label) ?? 0) + dump.instructions);
  }
  return spans;
}

function jobFor(tool: Tool, dataset: CleanupDataset, databaseUri: string, cutoffMillis: number): CleanupJob {
  return { tool, databaseUri, tableName: dataset.tableName, tableLocation: join(databaseUri, `${dataset.tableName}.lance`), cutoffMillis };
}

async function runOne(tool: Tool, options: Options, dataset: CleanupDataset, child: string, scratch: string, callgrindOut: string | null): Promise<CleanupOutcome> {
  const databaseDir = join(scratch, `copy-${tool}`);
  const cutoffMillis = await prepareCleanupCopy(dataset, { storage: "local", databaseDir });
  const outcome = await runChild(child, jobFor(tool, dataset, databaseDir, cutoffMillis), tool === "lakewarden" ? options.nodeFlags : [], callgrindOut);
  if (outcome.versionsRemoved !== dataset.lastOldVersion) throw new Error(`${tool} removed ${outcome.versionsRemoved} versions, expected ${dataset.lastOldVersion}`);
  return outcome;
}

function millions(count: number): string {
  return `${(count / 1e6).toFixed(1)} M`;
}

/** A run's CPU time per stage label (a label that recurs, as the checkpoint's write does, summed as callgrind's spans are). */
function cpuByStage(outcome: CleanupOutcome): Map<string, number> {
  const byStage = new Map<string, number>();
  for (const { stage, cpuMs } of outcome.stageCpu ?? []) {
    // Named as callgrind names the stage's dump (cleanup-child.ts callgrindMark), so both counts share a row.
    const label = stage.replace(/[^A-Za-z0-9 ]/g, "");
    byStage.set(label, (byStage.get(label) ?? 0) + cpuMs);
  }
  return byStage;
}

/** One markdown row per span and one for the whole clock: instructions (median and each run), CPU time (median, and each run for the clock). */
async function measureTool(tool: Tool, options: Options, dataset: CleanupDataset, child: string, scratch: string): Promise<string[]> {
  const runs: Spans[] = [];
  for (let run = 0; run < options.runs; run++) {
    const outFile = join(options.keepDir ?? scratch, `callgrind.${tool}.run${run}`);
    await runOne(tool, options, dataset, child, scratch, outFile);
    runs.push(await readSpans(outFile));
  }
  const cpuRuns: CleanupOutcome[] = [];
  for (let run = 0; run < options.cpuRuns; run++) cpuRuns.push(await runOne(tool, options, dataset, child, scratch, null));
  const stageCpu = cpuRuns.map(cpuByStage);
  const labels = [...new Set([...runs.flatMap((spans) => [...spans.keys()]), ...stageCpu.flatMap((byStage) => [...byStage.keys()])])];
  const row = (label: string, counts: number[], cpuCell: string) =>
    `| ${tool} | ${label} | ${counts.length ? millions(median(counts)) : "–"} | ${counts.map(millions).join(", ")} | ${cpuCell} |`;
  const stageCell = (label: string) => {
    const times = stageCpu.map((byStage) => byStage.get(label)).filter((ms) => ms !== undefined);
    return times.length ? `${median(times).toFixed(1)} ms` : "";
  };
  const cpu = cpuRuns.map((outcome) => outcome.cpuMs);
  const cpuCell = cpu.length ? `${median(cpu).toFixed(0)} ms (${cpu.map((ms) => ms.toFixed(0)).join(", ")})` : "–";
  return [
    ...labels.map((label) =>
      row(
        label,
        runs.map((spans) => spans.get(label) ?? 0).filter((count) => count > 0),
        stageCell(label),
      ),
    ),
    row(
      "**the clock's span**",
      runs.map((spans) => [...spans.values()].reduce((a, b) => a + b, 0)),
      cpuCell,
    ),
  ];
}

async function main(): Promise<void> {
  const options = parseOptions();
  const dataset = await ensureCleanupDataset(join(options.cacheDir, "cleanup"), FULL_SPEC);
  const scratch = await mkdtemp(join(tmpdir(), "cleanup-instructions-"));
  if (options.keepDir) await mkdir(options.keepDir, { recursive: true });
  try {
    const child = await bundleCleanupChild(join(scratch, "bundle"));
    const rows: string[] = [];
    for (const tool of options.tools) rows.push(...(await measureTool(tool, options, dataset, child, scratch)));
    const loads = loadavg()
      .map((l) => l.toFixed(1))
      .join(", ");
    process.stdout.write(
      [
        `${dataset.lastOldVersion} versions removed per run; lakewarden's extra node flags: ${options.nodeFlags.join(" ") || "none"}; ` +
          `${options.runs} callgrind run(s), ${options.cpuRuns} CPU run(s); load average ${loads}`,
        "",
        "| tool | span | instructions (median) | per run | CPU time, median (runs) |",
        "| --- | --- | ---: | ---: | ---: |",
        ...rows,
        "",
      ].join("\n"),
    );
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

await main();
