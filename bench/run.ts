/**
 * `npm run bench`: runs the benchmarks side by side with LanceDB and writes markdown tables
 * and SVG charts to bench/results/ (quick mode: to the cache directory, so smoke checks
 * never overwrite published numbers). See USAGE in harness/options.ts.
 */
import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import type { Benchmark, BenchEnv } from "./harness/benchmark.ts";
import { describeMachine } from "./harness/machine.ts";
import { BenchUsageError, parseBenchOptions, USAGE } from "./harness/options.ts";
import { renderSummary, writeReport, type BenchReport, type RunContext } from "./harness/report.ts";
import { S3Env } from "./harness/s3-env.ts";

/** Loaded lazily: `--only history` needs only the history module and what it imports. */
const BENCHMARKS: Record<string, () => Promise<Benchmark>> = {
  history: async () => (await import("./benchmarks/history.ts")).historyBenchmark,
  "cold-load": async () => (await import("./benchmarks/cold-load.ts")).coldLoadBenchmark,
  "cold-query": async () => (await import("./benchmarks/cold-query.ts")).coldQueryBenchmark,
  cleanup: async () => (await import("./benchmarks/cleanup.ts")).cleanupBenchmark,
  "head-write": async () => (await import("./benchmarks/head-write.ts")).headWriteBenchmark,
  iceberg: async () => (await import("./benchmarks/iceberg.ts")).icebergBenchmark,
  delta: async () => (await import("./benchmarks/delta.ts")).deltaBenchmark,
};

async function main(argv: string[]): Promise<number> {
  let options;
  try {
    options = parseBenchOptions(argv, Object.keys(BENCHMARKS));
  } catch (error) {
    if (error instanceof BenchUsageError) {
      process.stderr.write(`bench: ${error.message}\n${USAGE}\n`);
      return 2;
    }
    throw error;
  }
  if (options === "help") {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }

  const start = performance.now();
  const log = (line: string) => {
    const seconds = ((performance.now() - start) / 1000).toFixed(1).padStart(6);
    process.stderr.write(`[${seconds}s] ${line}\n`);
  };
  const context: RunContext = {
    command: options.command,
    machine: describeMachine(),
    startedAt: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
    runs: options.runs,
    quick: options.quick,
    s3LatencyMs: options.s3LatencyMs,
  };
  await mkdir(options.cacheDir, { recursive: true });
  const s3: { started: Promise<S3Env> | null } = { started: null };
  const env: BenchEnv = {
    options,
    context,
    log,
    s3: () => (s3.started ??= startS3(options.s3LatencyMs, log)),
    scratchDir: async (name) => {
      const dir = join(options.cacheDir, "scratch", name);
      await rm(dir, { recursive: true, force: true });
      await mkdir(dir, { recursive: true });
      return dir;
    },
  };

  const names = options.only.length ? options.only : Object.keys(BENCHMARKS);
  const reports: BenchReport[] = [];
  const failures: string[] = [];
  try {
    for (const name of names) {
      const benchmark = await BENCHMARKS[name]!();
      log(`${benchmark.name}: ${benchmark.title}`);
      try {
        const report = await benchmark.run(env);
        const written = await writeReport(options.outDir, report, context);
        reports.push(report);
        log(`${benchmark.name}: wrote ${written.join(", ")}`);
        for (const headline of report.headlines) log(`  ${headline}`);
      } catch (error) {
        failures.push(name);
        log(`${benchmark.name}: FAILED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      }
    }
  } finally {
    if (s3.started) await (await s3.started).stop();
  }
  // The index lists every benchmark; a partial run (--only) leaves the last full one alone.
  if (options.only.length === 0 && failures.length === 0) {
    await writeFile(join(options.outDir, "README.md"), renderSummary(reports, context));
  }
  log(`done in ${((performance.now() - start) / 1000).toFixed(0)} s${failures.length ? `; failed: ${failures.join(", ")}` : ""}`);
  return failures.length ? 1 : 0;
}

/**
 * Starts the emulated S3 and points this process's AWS SDK settings at it, so the stores the
 * lakewarden CLI opens (`openStore("s3://…")`) go through the same delay as LanceDB.
 */
async function startS3(latencyMs: number, log: (line: string) => void): Promise<S3Env> {
  const started = await S3Env.start(latencyMs);
  Object.assign(process.env, started.sdkEnvironment());
  log(`emulated S3 at ${started.endpoint} (+${started.delayMs} ms per request)`);
  return started;
}

process.exitCode = await main(process.argv.slice(2));
