/** Timing and summary statistics. Medians, because a shared 2-core machine has outliers. */
import { performance } from "node:perf_hooks";

export function median(samples: readonly number[]): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export interface Timed<T> {
  ms: number;
  value: T;
}

export async function timed<T>(body: () => Promise<T>): Promise<Timed<T>> {
  const start = performance.now();
  const value = await body();
  return { ms: performance.now() - start, value };
}

export interface Sampled<T> {
  /** Median of the timed runs, ms. */
  medianMs: number;
  samplesMs: number[];
  /** What the last timed run returned (with `afterEach`, what that returned). */
  last: T;
}

export interface SampleOptions<R, T> {
  /** Timed runs wanted (fewer when `budgetMs` runs out; never fewer than one). */
  runs: number;
  /**
   * Time one cell may take. A first run slower than `budgetMs / (runs + 1)` (e.g. 40 s of
   * LanceDB reading 4 GB of manifests) is kept as a sample rather than thrown away as a
   * warm-up, and no further run starts unless it is likely to fit. Default: unlimited.
   */
  budgetMs?: number;
  /** Before each run, off the clock (reset counters, restore a copy...). */
  prepare?: () => Promise<void>;
  /** After each run, off the clock: turns the run's result into what is kept (e.g. add request counts). */
  afterEach?: (result: R) => Promise<T>;
}

/**
 * One warm-up run (JIT, file cache, connection pools), then up to `runs` timed runs; the
 * median is reported. See `budgetMs` for cells too slow to repeat.
 */
export async function sample<R, T = R>(body: () => Promise<R>, options: SampleOptions<R, T>): Promise<Sampled<T>> {
  const budget = options.budgetMs ?? Number.POSITIVE_INFINITY;
  const finish = options.afterEach ?? (async (r: R) => r as unknown as T);
  const samplesMs: number[] = [];
  let spent = 0;
  let last: T | undefined;

  await options.prepare?.();
  const first = await timed(body);
  spent += first.ms;
  const warmupIsEnough = first.ms > budget / (options.runs + 1);
  last = await finish(first.value);
  if (warmupIsEnough) samplesMs.push(first.ms);

  // Another run only if it is likely to fit (judged by the slowest so far).
  let slowest = first.ms;
  while (samplesMs.length < options.runs && (samplesMs.length === 0 || spent + slowest <= budget)) {
    await options.prepare?.();
    const run = await timed(body);
    spent += run.ms;
    slowest = Math.max(slowest, run.ms);
    samplesMs.push(run.ms);
    last = await finish(run.value);
  }
  return { medianMs: median(samplesMs), samplesMs, last };
}

export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return "–";
  if (ms >= 100_000) return `${(ms / 1000).toFixed(0)} s`;
  if (ms >= 10_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms >= 1000) return `${(ms / 1000).toFixed(2)} s`;
  if (ms >= 100) return `${ms.toFixed(0)} ms`;
  if (ms >= 10) return `${ms.toFixed(1)} ms`;
  return `${ms.toFixed(2)} ms`;
}

export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return "–";
  const units = ["B", "KiB", "MiB", "GiB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(value >= 100 ? 0 : 1)} ${units[unit]}`;
}

/** "how many times faster": baseline / ours, shown as e.g. `180×`. */
export function formatRatio(baselineMs: number, oursMs: number): string {
  if (!(baselineMs > 0) || !(oursMs > 0)) return "–";
  const ratio = baselineMs / oursMs;
  if (ratio >= 100) return `${ratio.toFixed(0)}×`;
  if (ratio >= 10) return `${ratio.toFixed(1)}×`;
  return `${ratio.toFixed(2)}×`;
}

export function formatCount(n: number): string {
  if (n >= 1000 && n % 1000 === 0) return `${n / 1000}K`;
  return String(n);
}

/** `12 (10 get, 2 list)`; zero kinds are left out. */
export function formatRequests(counts: Partial<Record<string, number>> | null | undefined): string {
  if (!counts) return "–";
  const parts = Object.entries(counts).filter(([, n]) => (n ?? 0) > 0);
  const total = parts.reduce((sum, [, n]) => sum + (n ?? 0), 0);
  if (parts.length <= 1) return parts.length ? `${total} ${parts[0]![0]}` : "0";
  return `${total} (${parts.map(([kind, n]) => `${n} ${kind}`).join(", ")})`;
}
