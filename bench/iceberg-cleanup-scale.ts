/**
 * Iceberg cleanup at scale, this tree against another commit, in one sitting: the side-by-side
 * benchmark's lakewarden child (bench/side-by-side-child.ts), bundled with the Lambda's options
 * from each tree, run on fresh local copies of the same pyiceberg masters (10 full overwrites,
 * about half the snapshots expire; bench/side-by-side-tables.ts), the two alternating run by run.
 * Per run: the cleanup's span (wall and CPU), the process's wall, CPU and peak RSS, and when each
 * stage began.
 *
 *   node bench/iceberg-cleanup-scale.ts --against <commit> [--files 10000,30000,100000] [--runs 1]
 *                                       [--cache $TMPDIR/lakewarden-bench-cache] [--out bench/results/iceberg-cleanup-scale.md]
 *
 * `--against` is checked out with `git archive` into a scratch folder (this tree's node_modules
 * beside it), so no worktree changes.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { toolPython } from "../test/tools/python-env.ts";
import { describeMachine, machineLine } from "./harness/machine.ts";
import { median } from "./harness/measure.ts";
import { ensureMaster, prepareCopy, removeCopy } from "./side-by-side-tables.ts";
import { bundleSideBySideChild } from "./side-by-side-tools.ts";

const { values } = parseArgs({
  options: {
    against: { type: "string" },
    files: { type: "string", default: "10000,30000,100000" },
    runs: { type: "string", default: "1" },
    cache: { type: "string", default: join(tmpdir(), "lakewarden-bench-cache") },
    out: { type: "string" },
  },
});
if (!values.against) throw new Error("--against <commit>: the commit to compare this tree with");
const REPO = fileURLToPath(new URL("..", import.meta.url));
const RUSAGE = join(REPO, "bench", "tools", "peer_rusage.py");
const sizes = values.files!.split(",").map(Number);
const runs = Number(values.runs);
const git = (...args: string[]): string => execFileSync("git", args, { cwd: REPO, encoding: "utf8" }).trim();
const here = `${git("rev-parse", "--short", "HEAD")}${git("status", "--porcelain") === "" ? "" : " (with uncommitted changes)"}`;
const against = git("rev-parse", "--short", values.against);

interface Run {
  tree: string;
  files: number;
  spanMs: number;
  spanCpuMs: number;
  processMs: number;
  processCpuMs: number;
  peakRss: number;
  deleted: number;
  load: number;
  stages: string;
}

/** The side-by-side child of the tree at `root`, bundled as the benchmark bundles it. */
function bundle(root: string, outdir: string): Promise<string> {
  return bundleSideBySideChild(join(root, "bench", "side-by-side-child.ts"), outdir);
}

/** `commit`'s tree in `dir`, with this tree's node_modules. */
async function checkout(commit: string, dir: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  execFileSync("sh", ["-c", `git archive ${commit} | tar -x -C "${dir}"`], { cwd: REPO });
  await symlink(join(REPO, "node_modules"), join(dir, "node_modules"));
  return dir;
}

async function runOnce(tree: string, child: string, files: number, scratch: string): Promise<Run> {
  const master = await ensureMaster(values.cache!, { format: "iceberg", files, versions: 10 }, null, (line) => process.stderr.write(`${line}\n`));
  const copy = await prepareCopy(master, "local", `scale-${files}`, scratch, null);
  const report = join(scratch, "rusage.json");
  const load = loadavg()[0]!;
  const job = JSON.stringify({ table: copy.uri, cutoffMs: copy.cutoffMs });
  const out = spawnSync(toolPython(), [RUSAGE, report, "--", process.execPath, child, job], { encoding: "utf8", maxBuffer: 1 << 26 });
  await removeCopy("local", copy, null);
  if (out.status !== 0) throw new Error(`${tree} at ${files} files: ${out.stderr.trim().split("\n").slice(-5).join(" | ")}`);
  const usage = JSON.parse(await readFile(report, "utf8")) as { wall_ms: number; cpu_ms: number; peak_rss_bytes: number };
  const inner = JSON.parse(out.stdout.trim().split("\n").at(-1)!) as { ms: number; cpuMs: number; filesRemoved: number; stages: { stage: string; atMs: number; cpuMs: number }[] };
  const stages = inner.stages.map((s) => `${s.stage} ${(s.atMs / 1000).toFixed(2)}/${(s.cpuMs / 1000).toFixed(2)}`).join("; ");
  return {
    tree,
    files,
    spanMs: inner.ms,
    spanCpuMs: inner.cpuMs,
    processMs: usage.wall_ms,
    processCpuMs: usage.cpu_ms,
    peakRss: usage.peak_rss_bytes,
    deleted: inner.filesRemoved,
    load,
    stages,
  };
}

const seconds = (ms: number): string => `${(ms / 1000).toFixed(2)} s`;
const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(0)} MiB`;

function render(results: Run[], loadBefore: number[], started: Date): string {
  const rows = results.map(
    (r) =>
      `| ${r.files} | ${r.tree} | ${seconds(r.spanMs)} | ${seconds(r.spanCpuMs)} | ${seconds(r.processMs)} | ${seconds(r.processCpuMs)} | ${mib(r.peakRss)} | ${r.deleted} | ${r.load.toFixed(2)} |`,
  );
  const stages = results.map((r) => `- ${r.files} files, ${r.tree}: ${r.stages}`);
  const ratios = sizes.map((files) => {
    const of = (prefix: string, pick: (r: Run) => number): number => median(results.filter((r) => r.files === files && r.tree.startsWith(prefix)).map(pick));
    const ratio = (pick: (r: Run) => number): string => `${(of("against", pick) / of("this", pick)).toFixed(2)}×`;
    return `| ${files} | ${ratio((r) => r.spanMs)} | ${ratio((r) => r.spanCpuMs)} | ${ratio((r) => r.peakRss)} |`;
  });
  return [
    "```",
    `node bench/iceberg-cleanup-scale.ts ${process.argv.slice(2).join(" ")}`,
    "```",
    "",
    `This tree: ${here}; against: ${against}. ${started.toISOString()} to ${new Date().toISOString()}; ${machineLine(describeMachine())}`,
    `Load average (1, 5, 15 min) before: ${loadBefore.map((n) => n.toFixed(2)).join(", ")}; after: ${loadavg()
      .map((n) => n.toFixed(2))
      .join(", ")}. Local disk; each run on a fresh copy in a fresh process; the trees alternate.`,
    "",
    "| files | tree | wall | CPU | process wall | process CPU | peak RSS | files deleted | load (1 min) at start |",
    "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ...rows,
    "",
    "Against ÷ this tree (medians; above 1×: this tree is faster or smaller):",
    "",
    "| files | wall | CPU | peak RSS |",
    "| ---: | ---: | ---: | ---: |",
    ...ratios,
    "",
    "When each stage began (wall / CPU, seconds from the span's start):",
    "",
    ...stages,
  ].join("\n");
}

const started = new Date();
const loadBefore = loadavg();
const scratch = await mkdtemp(join(tmpdir(), "lakewarden-iceberg-scale-"));
try {
  const trees = [
    { tree: `this tree (${here})`, child: await bundle(REPO, join(scratch, "bundle-here")) },
    { tree: `against (${against})`, child: await bundle(await checkout(against, join(scratch, "against")), join(scratch, "bundle-against")) },
  ];
  const results: Run[] = [];
  for (const files of sizes) {
    for (let run = 0; run < runs; run++) {
      for (const { tree, child } of run % 2 === 0 ? [...trees].reverse() : trees) {
        const result = await runOnce(tree, child, files, scratch);
        process.stderr.write(`${tree} ${files}: ${seconds(result.spanMs)}, CPU ${seconds(result.spanCpuMs)}, peak RSS ${mib(result.peakRss)}\n`);
        results.push(result);
      }
    }
  }
  const text = render(results, loadBefore, started);
  if (values.out) await writeFile(values.out, `${text}\n`);
  process.stdout.write(`${text}\n`);
} finally {
  await rm(scratch, { recursive: true, force: true });
}
