/**
 * Child-process entry: runs ONE cleanup and reports it as one JSON line on stdout, so its
 * peak memory (see peakRssBytes) is the cleanup's alone.
 *
 *   node bench/tools/cleanup-child.ts '<CleanupJob JSON>'
 *
 * Each tool loads only its own libraries (LanceDB's native addon alone is ~100 MB of RSS),
 * before the clock starts; `baselineRssBytes` is the RSS at that point, so the report can
 * show what the cleanup itself added. The lakewarden side
 * reaches S3 through the AWS_* environment the parent passes (the emulator behind its delay).
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import type { CleanupProgress } from "../../lib/maintenance/progress.ts";

/**
 * Under `valgrind --tool=callgrind` with LAKEWARDEN_BENCH_CALLGRIND_STAGES=1
 * (bench/cleanup-instructions.ts): dumps the instructions counted since the last mark, named
 * `label`, so each stage's count is its own (callgrind_control asks the running process).
 */
function callgrindMark(label: string): void {
  if (process.env.LAKEWARDEN_BENCH_CALLGRIND_STAGES !== "1") return;
  // callgrind_control passes the label through a shell: letters, digits and spaces only.
  execFileSync("callgrind_control", [`--dump=${label.replace(/[^A-Za-z0-9 ]/g, "")}`, String(process.pid)], { stdio: "ignore" });
}

/**
 * Marks every stage's end for callgrindMark (a stage's count runs from its start to the next
 * mark) and keeps each stage's CPU time (user + system, every thread): one getrusage a stage.
 */
function stageMarks(): CleanupProgress & { end(): void; cpu: StageCpu[] } {
  let current = "start: lease, format, table state";
  let since = process.cpuUsage();
  const cpu: StageCpu[] = [];
  const mark = () => {
    const now = process.cpuUsage();
    cpu.push({ stage: current, cpuMs: cpuMillis(process.cpuUsage(since)) });
    since = now;
    callgrindMark(current);
  };
  return {
    stage(name) {
      mark();
      current = name;
    },
    advance: () => {},
    finish: () => {},
    end: mark,
    cpu,
  };
}

/**
 * This process's peak RSS. Linux: VmHWM of /proc/self/status, the high-water mark of this
 * process's own address space. Not getrusage's maxRSS: Linux carries that across fork + exec,
 * so a child spawned by a parent holding 500 MB would report the parent's 500 MB.
 */
function peakRssBytes(): number {
  try {
    const match = /^VmHWM:\s+(\d+)\s+kB$/m.exec(readFileSync("/proc/self/status", "utf8"));
    if (match) return Number(match[1]) * 1024;
  } catch {
    // not Linux
  }
  return process.resourceUsage().maxRSS * 1024;
}

function cpuMillis(usage: NodeJS.CpuUsage): number {
  return (usage.user + usage.system) / 1000;
}

export interface CleanupJob {
  tool: "lancedb" | "lakewarden";
  /** LanceDB: the database (parent of `<table>.lance`). */
  databaseUri: string;
  tableName: string;
  /** lakewarden: the table itself. */
  tableLocation: string;
  /** Versions committed before this instant are removed. */
  cutoffMillis: number;
  /** LanceDB storage options for S3 (through the delaying proxy). */
  storageOptions?: Record<string, string>;
}

/** One stage of lakewarden's run (its progress reporter's names) and the CPU time it took. */
export interface StageCpu {
  stage: string;
  cpuMs: number;
}

export interface CleanupOutcome {
  tool: CleanupJob["tool"];
  ms: number;
  /** CPU time (user + system, every thread) over the same span: less distorted than `ms` by other load on the machine. */
  cpuMs: number;
  peakRssBytes: number;
  baselineRssBytes: number;
  versionsRemoved: number;
  bytesRemoved: number;
  /** lakewarden only: each stage's CPU time, in the order they ran. */
  stageCpu?: StageCpu[];
  /** lakewarden only: requests from its store's counters; files removed by kind. */
  requests: Record<string, number> | null;
  filesRemoved: number | null;
}

async function main(job: CleanupJob): Promise<CleanupOutcome> {
  if (job.tool === "lancedb") {
    const lancedb = await import("@lancedb/lancedb");
    const baselineRssBytes = process.memoryUsage().rss;
    callgrindMark("loading");
    const cpuStart = process.cpuUsage();
    const start = performance.now();
    const db = await lancedb.connect(job.databaseUri, job.storageOptions ? { storageOptions: job.storageOptions } : {});
    const table = await db.openTable(job.tableName);
    const stats = await table.optimize({ cleanupOlderThan: new Date(job.cutoffMillis) });
    const ms = performance.now() - start;
    const cpuMs = cpuMillis(process.cpuUsage(cpuStart));
    callgrindMark("optimize");
    table.close();
    db.close();
    if (stats.compaction.fragmentsRemoved !== 0 || stats.compaction.filesAdded !== 0) {
      throw new Error(`${job.databaseUri}: optimize() compacted (${JSON.stringify(stats.compaction)}); the benchmark measures prune only`);
    }
    return {
      tool: job.tool,
      ms,
      cpuMs,
      peakRssBytes: peakRssBytes(),
      baselineRssBytes,
      versionsRemoved: stats.prune.oldVersionsRemoved,
      bytesRemoved: stats.prune.bytesRemoved,
      requests: null,
      filesRemoved: null,
    };
  }
  const { openStore } = await import("../../lib/store/open-store.ts");
  const { runCleanup } = await import("../../lib/maintenance/run-cleanup.ts");
  // The S3 store loads the AWS SDK with its first request; on S3 it is one of lakewarden's
  // libraries, loaded before the clock like LanceDB's addon. On local disk it is never loaded.
  if (job.tableLocation.startsWith("s3://")) await import("@aws-sdk/client-s3");
  // Lance's manifest reader (protobufjs with it) loads with the first manifest read: a library too, loaded before the clock.
  await (await import("../../lib/formats/lance/load-manifest-reader.ts")).loadManifestReader();
  const baselineRssBytes = process.memoryUsage().rss;
  const marks = stageMarks();
  callgrindMark("loading");
  const cpuStart = process.cpuUsage();
  const start = performance.now();
  const store = openStore(job.tableLocation);
  // The same cutoff as LanceDB's: "older than (now - cutoff)", now taken as the run starts.
  const report = await runCleanup(store, { settings: { olderThanMs: Date.now() - job.cutoffMillis, retainVersions: 1 }, progress: marks });
  const ms = performance.now() - start;
  const cpuMs = cpuMillis(process.cpuUsage(cpuStart));
  marks.end();
  if (report.status !== "completed") throw new Error(`${job.tableLocation}: cleanup ended ${report.status}: ${report.errors.join("; ")}`);
  return {
    tool: job.tool,
    ms,
    cpuMs,
    peakRssBytes: peakRssBytes(),
    baselineRssBytes,
    versionsRemoved: report.versions_removed.length,
    bytesRemoved: report.bytes_removed,
    requests: { ...report.requests },
    filesRemoved: Object.values(report.files_removed).reduce((sum, totals) => sum + (totals?.files ?? 0), 0),
    stageCpu: marks.cpu,
  };
}

const raw = process.argv[2];
if (!raw) {
  process.stderr.write("usage: cleanup-child.ts '<job JSON>'\n");
  process.exit(2);
}
try {
  process.stdout.write(`${JSON.stringify(await main(JSON.parse(raw) as CleanupJob))}\n`);
} catch (error) {
  process.stderr.write(`cleanup-child: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
}
