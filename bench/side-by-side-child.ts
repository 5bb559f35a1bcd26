/**
 * Child-process entry of the side-by-side benchmark (bench/side-by-side.ts): ONE lakewarden
 * cleanup, reported as one JSON line on stdout. The benchmark runs it bundled by esbuild with the
 * Lambda's options (bench/side-by-side.ts bundles it as bench/tools/cleanup-child-bundle.ts does
 * its child), so what is measured is what the Lambda runs.
 *
 *   node side-by-side-child.mjs '{"table":"s3://...","cutoffMs":1764000000000}'
 *
 * Every version committed before `cutoffMs` may go (older-than and the safety window both
 * `now - cutoffMs`, the short-setting guards acknowledged, the latest version kept), the same
 * instant every peer is told. Its libraries (Lance's manifest reader) load before the clock, as
 * the peers import theirs first. On S3 the store is the cleanup-table function's (the small
 * client of lib/store/s3-http-store.ts, not the AWS SDK the CLI uses).
 */
import { performance } from "node:perf_hooks";

export interface SideBySideJob {
  table: string;
  cutoffMs: number;
}

export interface SideBySideOutcome {
  ms: number;
  cpuMs: number;
  status: string;
  versionsRemoved: number;
  filesRemoved: number;
  requests: Record<string, number>;
  /** When each stage began, in ms from the span's start, and the CPU time used by then (user + system, every thread): where the time went, and how much of it was work on a loaded machine. */
  stages: { stage: string; atMs: number; cpuMs: number }[];
}

async function main(job: SideBySideJob): Promise<SideBySideOutcome> {
  const { httpStoreOpener } = await import("../lib/store/open-http-store.ts");
  const { runCleanup } = await import("../lib/maintenance/run-cleanup.ts");
  await (await import("../lib/formats/lance/load-manifest-reader.ts")).loadManifestReader();
  const cpuStart = process.cpuUsage();
  const start = performance.now();
  const windowMs = Math.max(0, Date.now() - job.cutoffMs);
  const stages: SideBySideOutcome["stages"] = [];
  // Opened as functions/cleanup-table/lambda.ts opens it.
  const report = await runCleanup(httpStoreOpener()(job.table), {
    progress: { stage: (stage) => void stages.push({ stage, atMs: performance.now() - start, cpuMs: cpuMsSince(cpuStart) }), advance: () => {}, finish: () => {} },
    settings: { olderThanMs: windowMs, safetyWindowMs: windowMs, retainVersions: 1, allowShortRetention: true, allowShortSafetyWindow: true },
  });
  const ms = performance.now() - start;
  const cpuMs = cpuMsSince(cpuStart);
  if (report.status !== "completed") throw new Error(`${job.table}: cleanup ended ${report.status}: ${report.errors.join("; ")}`);
  return {
    ms,
    cpuMs,
    status: report.status,
    versionsRemoved: report.versions_removed.length,
    filesRemoved: Object.values(report.files_removed).reduce((sum, totals) => sum + (totals?.files ?? 0), 0),
    requests: { ...report.requests },
    stages,
  };
}

function cpuMsSince(start: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

const raw = process.argv[2];
if (!raw) {
  process.stderr.write("usage: side-by-side-child '<job JSON>'\n");
  process.exit(2);
}
try {
  process.stdout.write(`${JSON.stringify(await main(JSON.parse(raw) as SideBySideJob))}\n`);
} catch (error) {
  process.stderr.write(`side-by-side-child: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
}
