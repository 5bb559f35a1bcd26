/**
 * Child-process entry for the scale bench: ONE budgeted (or unbounded) cleanup run, reported as
 * one JSON line on stdout with this process's own peak RSS (VmHWM; see cleanup-child.ts).
 *
 *   node bench/tools/scale-cleanup-child.ts '{"table":"...","maxDurationMs":60000}'
 */
import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";

export interface ScaleRunJob {
  table: string;
  /** Budget of the run; absent: unbounded. */
  maxDurationMs?: number;
  /** RunCleanupOptions.minWorkPerRun; absent: the default. */
  minWorkPerRun?: number;
}

export interface ScaleRunOutcome {
  status: string;
  stopReason: string | null;
  ms: number;
  peakRssBytes: number;
  baselineRssBytes: number;
  versionsRemoved: number;
  filesRemoved: number;
  deleteRate: { achieved_per_second: number | null; keys_deleted: number; elapsed_ms: number; throttled_requests: number } | null;
  requests: Record<string, number>;
  /** When each stage began, in ms from the run's start: where a resumed run's time goes before it resumes work. */
  stages: { stage: string; atMs: number }[];
}

function peakRssBytes(): number {
  try {
    const match = /^VmHWM:\s+(\d+)\s+kB$/m.exec(readFileSync("/proc/self/status", "utf8"));
    if (match) return Number(match[1]) * 1024;
  } catch {
    // not Linux
  }
  return process.resourceUsage().maxRSS * 1024;
}

async function main(job: ScaleRunJob): Promise<ScaleRunOutcome> {
  const { openStore } = await import("../../lib/store/open-store.ts");
  const { runCleanup } = await import("../../lib/maintenance/run-cleanup.ts");
  // On S3 the SDK (which the store loads with its first request) is loaded before the clock.
  if (job.table.startsWith("s3://")) await import("@aws-sdk/client-s3");
  const baselineRssBytes = process.memoryUsage().rss;
  const start = performance.now();
  const stages: ScaleRunOutcome["stages"] = [];
  const report = await runCleanup(openStore(job.table), {
    progress: { stage: (stage) => void stages.push({ stage, atMs: performance.now() - start }), advance: () => {}, finish: () => {} },
    ...(job.minWorkPerRun !== undefined ? { minWorkPerRun: job.minWorkPerRun } : {}),
    // Every version but the latest goes; unreferenced files go at once (the generated ones are new).
    settings: { olderThanMs: 0, retainVersions: 1, safetyWindowMs: 0 },
    ...(job.maxDurationMs !== undefined ? { maxDurationMs: job.maxDurationMs } : {}),
  });
  const ms = performance.now() - start;
  if (report.status !== "completed" && report.status !== "stopped") throw new Error(`${job.table}: cleanup ended ${report.status}: ${report.errors.join("; ")}`);
  return {
    status: report.status,
    stopReason: report.stop_reason,
    ms,
    peakRssBytes: peakRssBytes(),
    baselineRssBytes,
    versionsRemoved: report.versions_removed.length,
    filesRemoved: Object.values(report.files_removed).reduce((sum, totals) => sum + (totals?.files ?? 0), 0),
    deleteRate: report.delete_rate,
    requests: { ...report.requests },
    stages,
  };
}

const raw = process.argv[2];
if (!raw) {
  process.stderr.write("usage: scale-cleanup-child.ts '<job JSON>'\n");
  process.exit(2);
}
try {
  process.stdout.write(`${JSON.stringify(await main(JSON.parse(raw) as ScaleRunJob))}\n`);
} catch (error) {
  process.stderr.write(`scale-cleanup-child: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
}
