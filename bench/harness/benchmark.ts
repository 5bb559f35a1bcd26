/** What a benchmark module exports and what it gets from the runner. */
import type { BenchOptions } from "./options.ts";
import type { BenchReport, RunContext } from "./report.ts";
import type { S3Env } from "./s3-env.ts";

export interface BenchEnv {
  options: BenchOptions;
  context: RunContext;
  /** Progress line on stderr, prefixed with the elapsed time. */
  log(line: string): void;
  /** The emulated S3 (started on first use, shared by all benchmarks of the run). */
  s3(): Promise<S3Env>;
  /** A fresh directory under the cache for this benchmark's scratch data. */
  scratchDir(name: string): Promise<string>;
}

export interface Benchmark {
  name: string;
  title: string;
  run(env: BenchEnv): Promise<BenchReport>;
}

/** Storage a cell runs on. */
export type StorageKind = "local" | "s3";

export function storageLabel(kind: StorageKind, latencyMs: number): string {
  return kind === "local" ? "local disk" : `S3 (+${latencyMs} ms/request)`;
}
