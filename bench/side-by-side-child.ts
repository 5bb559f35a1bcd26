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
 * instant every peer is told. Its libraries (the AWS SDK on S3, Lance's manifest reader) load
 * before the clock, as the peers import theirs first.
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
  /** When each stage began, in ms from the span's start: where the time went. */
  stages: { stage: string; atMs: number }[];
}

async function main(job: SideBySideJob): Promise<SideBySideOutcome> {
  const { openStore } = await import("../lib/store/open-store.ts");
  const { runCleanup } = await import("../lib/maintenance/run-cleanup.ts");
  if (job.table.startsWith("s3://")) await import("@aws-sdk/client-s3");
  await (await import("../lib/formats/lance/load-manifest-reader.ts")).loadManifestReader();
  const cpuStart = process.cpuUsage();
  const start = performance.now();
  const windowMs = Math.max(0, Date.now() - job.cutoffMs);
  const stages: SideBySideOutcome["stages"] = [];
  const report = await runCleanup(openStore(job.table), {
    progress: { stage: (stage) => void stages.push({ stage, atMs: performance.now() - start }), advance: () => {}, finish: () => {} },
    settings: { olderThanMs: windowMs, safetyWindowMs: windowMs, retainVersions: 1, allowShortRetention: true, allowShortSafetyWindow: true },
  });
  const ms = performance.now() - start;
  const cpu = process.cpuUsage(cpuStart);
  if (report.status !== "completed") throw new Error(`${job.table}: cleanup ended ${report.status}: ${report.errors.join("; ")}`);
  return {
    ms,
    cpuMs: (cpu.user + cpu.system) / 1000,
    status: report.status,
    versionsRemoved: report.versions_removed.length,
    filesRemoved: Object.values(report.files_removed).reduce((sum, totals) => sum + (totals?.files ?? 0), 0),
    requests: { ...report.requests },
    stages,
  };
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
