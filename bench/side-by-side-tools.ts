/**
 * The tools of the side-by-side benchmark, each run as its own process under
 * bench/tools/peer_rusage.py (wall time, CPU time of the process tree, peak RSS, all from wait4),
 * each reporting the span of its cleanup from inside (after its libraries loaded):
 *   - lakewarden: bench/side-by-side-child.ts bundled by esbuild with the Lambda's options, run by node;
 *   - delta-rs: `vacuum` + `cleanup_metadata` (bench/tools/peer_cleanup.py);
 *   - Lance: pylance `cleanup_old_versions` (bench/tools/peer_cleanup.py);
 *   - Iceberg: iceberg-core `ExpireSnapshots` + the orphan removal of test/peers/IcebergPeer.java,
 *     one JVM per run (test/peers/IcebergBenchPeer.java); on S3 through iceberg-aws's S3FileIO
 *     (test/peers/IcebergS3Files.java, jars from test/peers/iceberg-s3/pom.xml).
 */
import { spawn } from "node:child_process";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { BUNDLING } from "../infra/function-bundling.ts";
import { ensureIcebergS3Jars } from "../test/peers/iceberg-s3-jars.ts";
import { icebergRestClassPath } from "../test/tools/iceberg-rest-env.ts";
import { toolPython } from "../test/tools/python-env.ts";
import type { S3Env } from "./harness/s3-env.ts";
import type { Format, TableCopy } from "./side-by-side-tables.ts";

export type Tool = "lakewarden" | "deltars" | "lance" | "iceberg-core";

export const PEER_OF: Record<Format, Exclude<Tool, "lakewarden">> = { delta: "deltars", lance: "lance", iceberg: "iceberg-core" };

export const TOOL_LABEL: Record<Tool, string> = {
  lakewarden: "lakewarden (bundled)",
  deltars: "delta-rs vacuum + cleanup_metadata",
  lance: "pylance cleanup_old_versions",
  "iceberg-core": "iceberg-core ExpireSnapshots + orphans",
};

export interface ToolRun {
  /** The cleanup's span, measured inside the process after its libraries loaded. */
  spanMs: number;
  spanCpuMs: number;
  /** The whole process from start to exit (interpreter or JVM start included), from wait4. */
  processMs: number;
  processCpuMs: number;
  peakRssBytes: number;
  /** What the tool said it did (its own counters), for the report's notes. */
  said: Record<string, unknown>;
}

const HERE = fileURLToPath(new URL(".", import.meta.url));
const REPO = join(HERE, "..");
const RUSAGE = join(HERE, "tools", "peer_rusage.py");
const PEER_CLEANUP = join(HERE, "tools", "peer_cleanup.py");

export interface ToolKit {
  lakewardenBundle: string;
  javaClassPath: string;
  /** LAKEWARDEN_BENCH_CPU_PROF=<dir>: a V8 CPU profile of every lakewarden run goes there. */
  cpuProfileDir: string | null;
}

/** Bundles `entry` (a tree's bench/side-by-side-child.ts) into `outdir` with the Lambda's esbuild options; returns the bundle's path. */
export async function bundleSideBySideChild(entry: string, outdir: string): Promise<string> {
  await build({
    entryPoints: { "side-by-side-child": entry },
    outdir,
    outExtension: { ".js": ".mjs" },
    bundle: true,
    platform: "node",
    format: "esm",
    target: BUNDLING.target ?? "node22",
    mainFields: BUNDLING.mainFields ?? ["module", "main"],
    minify: BUNDLING.minify ?? false,
    // A CPU profile of mangled names says nothing: when profiling, the names stay (the code is the same otherwise).
    ...(process.env.LAKEWARDEN_BENCH_CPU_PROF ? { minifyIdentifiers: false } : {}),
    banner: { js: BUNDLING.banner ?? "" },
    logLevel: "error",
  });
  return join(outdir, "side-by-side-child.mjs");
}

/** Bundles the lakewarden child with the Lambda's esbuild options and compiles the Java peer (with its S3 FileIO when Iceberg runs on S3). */
export async function prepareToolKit(scratchDir: string, options: { icebergOnS3: boolean }): Promise<ToolKit> {
  const outdir = join(scratchDir, "lakewarden-bundle");
  await bundleSideBySideChild(join(HERE, "side-by-side-child.ts"), outdir);
  const classes = join(REPO, ".tools", "iceberg-peer", "bench-classes");
  await mkdir(classes, { recursive: true });
  // The REST server's jars first: iceberg-core and Jackson as the parity suite runs them; the S3 jars add S3FileIO and the SDK.
  const libs = [icebergRestClassPath(), ...(options.icebergOnS3 ? [ensureIcebergS3Jars((line) => process.stderr.write(`${line}\n`))] : [])].join(":");
  const sources = ["IcebergPeer.java", "IcebergBenchPeer.java", ...(options.icebergOnS3 ? ["IcebergS3Files.java"] : [])].map((name) => join(REPO, "test", "peers", name));
  await runCommand("javac", ["-d", classes, "-cp", libs, ...sources], process.env);
  return { lakewardenBundle: join(outdir, "side-by-side-child.mjs"), javaClassPath: `${classes}:${libs}`, cpuProfileDir: process.env.LAKEWARDEN_BENCH_CPU_PROF ?? null };
}

/** Runs one tool on one copy; throws with its stderr's tail when it fails. */
export async function runTool(tool: Tool, copy: TableCopy, kit: ToolKit, s3: S3Env | null, scratchDir: string): Promise<ToolRun> {
  const report = join(scratchDir, `rusage-${tool}.json`);
  const env = s3 ? { ...process.env, ...s3.sdkEnvironment(), AWS_ENDPOINT_URL: s3.endpoint } : process.env;
  let command: string[];
  if (tool === "lakewarden") {
    const profile = kit.cpuProfileDir ? ["--cpu-prof", `--cpu-prof-dir=${kit.cpuProfileDir}`] : [];
    command = [process.execPath, ...profile, kit.lakewardenBundle, JSON.stringify({ table: copy.uri, cutoffMs: copy.cutoffMs })];
  } else if (tool === "iceberg-core") {
    const job = join(scratchDir, "iceberg-job.json");
    await writeFile(job, JSON.stringify(await icebergJob(copy, s3)));
    command = ["java", "-Xmx2g", "-cp", kit.javaClassPath, "IcebergBenchPeer", job];
  } else {
    command = [toolPython(), PEER_CLEANUP, tool, copy.uri, JSON.stringify({ cutoff_ms: copy.cutoffMs, keep_from: copy.versionAtCutoff })];
  }
  const stdout = await runCommand(toolPython(), [RUSAGE, report, "--", ...command], env);
  const usage = JSON.parse(await readFile(report, "utf8")) as { wall_ms: number; cpu_ms: number; peak_rss_bytes: number };
  await rm(report, { force: true });
  const inner = JSON.parse(stdout.trim().split("\n").at(-1)!) as Record<string, unknown>;
  return {
    spanMs: Number(inner.ms),
    spanCpuMs: Number(inner.cpuMs ?? inner.cpu_ms),
    processMs: usage.wall_ms,
    processCpuMs: usage.cpu_ms,
    peakRssBytes: usage.peak_rss_bytes,
    said: saidOf(tool, inner),
  };
}

/** IcebergPeer's job: the current metadata file (from the version hint), the cutoff, and on S3 where and how to reach it (through the delay). */
async function icebergJob(copy: TableCopy, s3Env: S3Env | null): Promise<Record<string, unknown>> {
  const s3 = copy.uri.startsWith("s3://") ? s3Env : null;
  const hint = s3 ? await s3.getText(`${copy.home}/metadata/version-hint.text`) : await readFile(join(copy.uri, "metadata", "version-hint.text"), "utf8");
  const job = { id: "0", dir: copy.uri, metadata: `v${hint.trim()}.metadata.json`, expireOlderThanMs: copy.cutoffMs, retainLast: 1, orphanOlderThanMs: copy.cutoffMs };
  if (!s3) return job;
  const env = s3.sdkEnvironment();
  return { ...job, s3: { location: copy.uri, endpoint: s3.endpoint, region: env.AWS_REGION, accessKeyId: env.AWS_ACCESS_KEY_ID, secretAccessKey: env.AWS_SECRET_ACCESS_KEY } };
}

function saidOf(tool: Tool, inner: Record<string, unknown>): Record<string, unknown> {
  if (tool === "lakewarden") return { versionsRemoved: inner.versionsRemoved, filesRemoved: inner.filesRemoved, requests: inner.requests, stages: inner.stages };
  if (tool === "iceberg-core") return { expired: (inner.expired as unknown[] | undefined)?.length, error: inner.error };
  return (inner.said as Record<string, unknown>) ?? {};
}

function runCommand(cmd: string, args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => {
      if (code === 0) resolve(stdout);
      else reject(new Error(`${cmd} ${args.slice(0, 4).join(" ")} exited ${code}: ${stderr.trim().split("\n").slice(-8).join(" | ")}`));
    });
  });
}
