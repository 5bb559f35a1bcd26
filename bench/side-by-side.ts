/**
 * Side by side (issue 26): lakewarden's cleanup, bundled as the Lambda runs it, against each
 * format's own maintenance, in one run: delta-rs `vacuum` + `cleanup_metadata`, iceberg-core
 * `ExpireSnapshots` + orphan removal (JVM start on a row of its own), pylance
 * `cleanup_old_versions`; on local disk and on emulated S3 (fauxqs behind a per-request delay),
 * on writer-made tables of 100 to 100,000 files (bench/side-by-side-tables.ts), each tool on its
 * own copy with the same cutoff. Per cell: wall, CPU (span, and the process tree's), peak RSS,
 * the ratio to the fastest peer, and whether the tools deleted the same files.
 *
 *   npm run bench:peers -- --files 100,1000 --storage local,s3 [--formats delta,lance,iceberg]
 *                          [--versions 10] [--runs 3] [--large-runs 1] [--s3-latency 20] [--out bench/results/side-by-side.md]
 *                          [--cache $TMPDIR/lakewarden-bench-cache]
 *
 * The writers make each table once into --cache (kept across runs); every copy is made from it
 * without a writer (docs/peers.md, "The benchmark beside the peers", says how long each part takes).
 *
 * LAKEWARDEN_BENCH_CPU_PROF=<dir> writes a V8 CPU profile of every lakewarden run there.
 */
import { execFileSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { describeMachine, machineLine } from "./harness/machine.ts";
import { S3Env } from "./harness/s3-env.ts";
import { median } from "./harness/measure.ts";
import { type Cell, type CellRun, renderSideBySide } from "./side-by-side-report.ts";
import { ensureMaster, type Format, listTableKeys, prepareCopy, removeCopy, type Storage } from "./side-by-side-tables.ts";
import { PEER_OF, prepareToolKit, runTool, type Tool, type ToolKit, type ToolRun } from "./side-by-side-tools.ts";

const { values } = parseArgs({
  options: {
    files: { type: "string", default: "100,1000" },
    storage: { type: "string", default: "local,s3" },
    formats: { type: "string", default: "delta,lance,iceberg" },
    versions: { type: "string", default: "10" },
    runs: { type: "string", default: "3" },
    "large-runs": { type: "string", default: "1" },
    "s3-latency": { type: "string", default: "20" },
    cache: { type: "string", default: join(tmpdir(), "lakewarden-bench-cache") },
    out: { type: "string" },
  },
});
const list = (text: string): string[] =>
  text
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
const sizes = list(values.files!).map(Number);
const storages = list(values.storage!) as Storage[];
const formats = list(values.formats!) as Format[];
const versions = Number(values.versions);
const latencyMs = Number(values["s3-latency"]);
const runs = Number(values.runs);
/** Runs per cell at 10,000 files and more, where one run is minutes of setup. */
const largeRuns = Number(values["large-runs"]);
if (sizes.some((n) => !(n > 0)) || !(versions >= 4) || !(runs >= 1) || !(largeRuns >= 1)) throw new Error("--files: positive counts; --versions: at least 4; --runs: at least 1");
for (const s of storages) if (s !== "local" && s !== "s3") throw new Error(`--storage: local or s3, got ${s}`);
for (const f of formats) if (!(f in PEER_OF)) throw new Error(`--formats: delta, lance or iceberg, got ${f}`);

const log = (line: string): void => void process.stderr.write(`${new Date().toISOString()} ${line}\n`);
const command = `npm run bench:peers -- ${process.argv.slice(2).join(" ")}`.trim();
const startedAt = new Date();
const commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim();
const loadBefore = loadavg();
const scratch = await mkdtemp(join(tmpdir(), "lakewarden-side-by-side-"));
// The memory backend: fauxqs's file backend deletes in O(objects in the folder) per key (bench/harness/s3-server.ts).
const s3 = storages.includes("s3") ? await S3Env.start(latencyMs, "memory") : null;
try {
  const kit = await prepareToolKit(scratch, { icebergOnS3: formats.includes("iceberg") && s3 !== null });
  const cells: Cell[] = [];
  for (const files of sizes) {
    for (const format of formats) {
      for (const storage of storages) {
        // Iceberg's files are named by their absolute location: its S3 table is written on S3 (side-by-side-tables.ts).
        const master = await ensureMaster(values.cache!, { format, files, versions }, format === "iceberg" && storage === "s3" ? s3 : null, log);
        cells.push(await runCell(format, storage, files, master, kit));
        // After every cell, so a run that fails at 10,000 files keeps what it measured.
        await writeResult(cells, false);
      }
    }
  }
  process.stdout.write(`${await writeResult(cells, true)}\n`);
} finally {
  await s3?.stop();
  await rm(scratch, { recursive: true, force: true });
}

/** Renders the cells so far; writes them to --out (marked unfinished until the last cell is in). */
async function writeResult(cells: Cell[], finished: boolean): Promise<string> {
  const text = renderSideBySide({
    command,
    commit,
    machine: machineLine(describeMachine()),
    startedAt,
    finishedAt: new Date(),
    loadBefore,
    loadAfter: loadavg(),
    latencyMs,
    versions,
    runs,
    largeRuns,
    cells,
  });
  const body = finished ? text : `(unfinished: ${cells.length} cells so far)\n\n${text}`;
  if (values.out) await writeFile(values.out, `${body}\n`);
  return text;
}

/**
 * One cell: lakewarden and the format's peer, each on its own fresh copy of the master per run,
 * the order alternating from run to run (so a drift in the machine's load hits both alike).
 * Times and memory: the median over the runs; the deleted sets: the last run's.
 */
async function runCell(format: Format, storage: Storage, files: number, master: Awaited<ReturnType<typeof ensureMaster>>, kit: ToolKit): Promise<Cell> {
  const masterKeys = new Set(await listTableKeys("local", master.dir, null));
  const tools: Tool[] = ["lakewarden", PEER_OF[format]];
  const samples = new Map<Tool, ToolRun[]>(tools.map((t) => [t, []]));
  const last = new Map<Tool, Omit<CellRun, "run">>();
  const count = files >= 10_000 ? largeRuns : runs;
  for (let i = 0; i < count; i++) {
    for (const tool of i % 2 === 0 ? tools : [...tools].reverse()) {
      const name = `sbs-${format}-${files}-${storage}-${tool}`;
      const copyStarted = performance.now();
      const copy = await prepareCopy(master, storage, name, scratch, s3);
      const copyMs = performance.now() - copyStarted;
      const before = await listTableKeys(storage, copy.uri, s3);
      const run = await runTool(tool, copy, kit, s3, scratch);
      const after = new Set(await listTableKeys(storage, copy.uri, s3));
      const deleted = before.filter((key) => !after.has(key));
      samples.get(tool)!.push(run);
      last.set(tool, {
        tool,
        filesBefore: before.length,
        deletedMaster: deleted.filter((k) => masterKeys.has(k)).sort(),
        deletedOther: deleted.filter((k) => !masterKeys.has(k)).length,
      });
      log(
        `${format} ${storage} ${files} ${tool} run ${i + 1}: ${run.spanMs.toFixed(0)} ms (process ${run.processMs.toFixed(0)} ms, the copy took ${copyMs.toFixed(0)} ms), ${deleted.length} of ${before.length} files deleted; said ${JSON.stringify(run.said)}`,
      );
      await removeCopy(storage, copy, s3);
    }
  }
  return { format, storage, files, masterKeys: masterKeys.size, count, runs: tools.map((tool) => ({ ...last.get(tool)!, run: medianRun(samples.get(tool)!) })) };
}

/** The median of each measure over the runs (each on its own: the medians may come from different runs). */
function medianRun(all: ToolRun[]): ToolRun {
  const of = (pick: (r: ToolRun) => number) => median(all.map(pick));
  return {
    spanMs: of((r) => r.spanMs),
    spanCpuMs: of((r) => r.spanCpuMs),
    processMs: of((r) => r.processMs),
    processCpuMs: of((r) => r.processCpuMs),
    peakRssBytes: of((r) => r.peakRssBytes),
    said: all.at(-1)!.said,
  };
}
