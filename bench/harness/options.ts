/**
 * Command-line options of `npm run bench`. Parsed by hand (node:util parseArgs) so the
 * bench has no say in the CLI's commander program.
 */
import { parseArgs } from "node:util";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface BenchOptions {
  /** Benchmarks to run, by name; empty = all. */
  only: string[];
  /** Smaller grid, fewer runs: a smoke check, not numbers to publish. */
  quick: boolean;
  /** Timed runs per cell (after one warm-up run); the median is reported. */
  runs: number;
  /** Where markdown tables and SVG charts go. */
  outDir: string;
  /** Generated datasets are cached here between runs (never in git). */
  cacheDir: string;
  /** Per-request delay of the emulated S3, in milliseconds. */
  s3LatencyMs: number;
  /** Skip the emulated-S3 cells (local disk only). */
  localOnly: boolean;
  /** The exact command line, printed at the head of every result file. */
  command: string;
}

export class BenchUsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "BenchUsageError";
  }
}

export const USAGE = `usage: npm run bench -- [--only name[,name]] [--quick] [--runs N] [--out dir]
                         [--cache dir] [--s3-latency ms] [--local-only]
  --only        run only these benchmarks: history, cold-load, cleanup, head-write, iceberg, delta
  --quick       small grid and 2 runs per cell: a smoke check, not numbers to publish
  --runs        timed runs per cell (default 5, quick 2); the median is reported
  --out         result directory (default bench/results, quick: <cache>/quick-results)
  --cache       dataset cache (default $TMPDIR/lakewarden-bench-cache)
  --s3-latency  per-request delay of the emulated S3 in ms (default 20)
  --local-only  skip the emulated-S3 cells`;

export function parseBenchOptions(argv: readonly string[], known: readonly string[]): BenchOptions | "help" {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      options: {
        only: { type: "string", multiple: true },
        quick: { type: "boolean", default: false },
        runs: { type: "string" },
        out: { type: "string" },
        cache: { type: "string" },
        "s3-latency": { type: "string" },
        "local-only": { type: "boolean", default: false },
        help: { type: "boolean", short: "h", default: false },
      },
      allowPositionals: false,
    });
  } catch (error) {
    throw new BenchUsageError((error as Error).message);
  }
  const values = parsed.values;
  if (values.help) return "help";

  const only = (values.only ?? [])
    .flatMap((v) => v.split(","))
    .map((v) => v.trim())
    .filter(Boolean);
  for (const name of only) {
    if (!known.includes(name)) throw new BenchUsageError(`--only: unknown benchmark "${name}" (known: ${known.join(", ")})`);
  }
  const quick = values.quick ?? false;
  const cacheDir = values.cache ?? process.env.LAKEWARDEN_BENCH_CACHE ?? join(tmpdir(), "lakewarden-bench-cache");
  return {
    only,
    quick,
    runs: positiveInt("--runs", values.runs, quick ? 2 : 5),
    // Quick runs are smoke checks: they must not overwrite the published results.
    outDir: values.out ?? (quick ? join(cacheDir, "quick-results") : "bench/results"),
    cacheDir,
    s3LatencyMs: nonNegativeInt("--s3-latency", values["s3-latency"], 20),
    localOnly: values["local-only"] ?? false,
    command: ["npm run bench", ...(argv.length ? ["--", ...argv] : [])].join(" "),
  };
}

function positiveInt(flag: string, raw: string | undefined, fallback: number): number {
  const value = nonNegativeInt(flag, raw, fallback);
  if (value < 1) throw new BenchUsageError(`${flag}: must be at least 1, got ${raw}`);
  return value;
}

function nonNegativeInt(flag: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw new BenchUsageError(`${flag}: expected a whole number, got "${raw}"`);
  return Number(raw);
}
