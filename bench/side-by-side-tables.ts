/**
 * The side-by-side benchmark's tables (bench/side-by-side.ts): made by each format's own writer
 * (bench/tools/peer_tables.py), one fresh copy per tool, the same history in each.
 *
 * A table has `versions` commits, each a full overwrite writing `files / versions` data files, so
 * each version that expires leaves its files to be deleted. The first half of the commits comes
 * before the cutoff instant every tool is told, the second half after it: about half the
 * versions expire. Why the cutoff is taken on each copy: Delta's VACUUM (lakewarden's, as Spark's)
 * and Lance's cleanup never delete a file modified after the cutoff, and a copy's files are as new
 * as the copy (S3 LastModified cannot be set). So the master holds the first half only (Delta:
 * with a checkpoint at its last commit, the one log cleanup keeps); each copy is made, the cutoff
 * taken, and then the writer commits the second half onto the copy. The copies' first-half files
 * have the same names, so the deleted sets compare file by file.
 *
 * Iceberg (local disk only: pyiceberg names every file by its absolute location, so a copy cannot
 * be uploaded, and the Java peer has no S3 FileIO here) needs no such care: snapshot expiry and
 * the files of expired snapshots go by the snapshot times in the metadata. The master is the
 * whole history with its cutoff, and each copy keeps the master's file times.
 */
import { spawn } from "node:child_process";
import { cp, mkdir, readdir, readFile, rm, utimes, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { toolPython } from "../test/tools/python-env.ts";
import type { S3Env } from "./harness/s3-env.ts";

export type Format = "delta" | "lance" | "iceberg";
export type Storage = "local" | "s3";

const WRITER = fileURLToPath(new URL("./tools/peer_tables.py", import.meta.url));
const REVISION = 1;

export interface TableSpec {
  format: Format;
  /** Data files the whole history writes (the table holds about this many files). */
  files: number;
  versions: number;
}

export interface Master {
  spec: TableSpec;
  /** The local folder of the master table. */
  dir: string;
  /** Commits in the master (Delta, Lance: the first half; Iceberg: all). */
  commits: number;
  /** Iceberg: the cutoff, taken between its halves. */
  cutoffMs: number | null;
}

export interface TableCopy {
  /** Where the tool is pointed: a folder or `s3://bucket/prefix/...`. */
  uri: string;
  /** Versions committed before this instant expire. */
  cutoffMs: number;
  /** Delta: the table's version at the cutoff (its time travel "as of the cutoff"). */
  versionAtCutoff: number;
}

export const filesPerVersion = (spec: TableSpec): number => Math.max(1, Math.round(spec.files / spec.versions));
const firstHalf = (spec: TableSpec): number => Math.floor(spec.versions / 2);
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs the writer; resolves with what it printed. */
export function runWriter(format: Format, uri: string, spec: TableSpec, first: number, last: number, env: NodeJS.ProcessEnv, checkpoint = false): Promise<{ seconds: number }> {
  const args = [WRITER, "write", format, uri, "--files", String(filesPerVersion(spec)), "--first", String(first), "--last", String(last), ...(checkpoint ? ["--checkpoint"] : [])];
  return new Promise((resolve, reject) => {
    const child = spawn(toolPython(), args, { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => {
      if (code === 0) resolve(JSON.parse(stdout.trim().split("\n").at(-1)!) as { seconds: number });
      else reject(new Error(`peer_tables.py write ${format} ${uri} exited ${code}: ${stderr.trim().split("\n").slice(-6).join(" | ")}`));
    });
  });
}

/** Builds the master once under `cacheDir` (reused while the spec is unchanged). */
export async function ensureMaster(cacheDir: string, spec: TableSpec, log: (line: string) => void): Promise<Master> {
  const folder = join(cacheDir, `side-by-side-r${REVISION}`, `${spec.format}-f${spec.files}-v${spec.versions}`);
  const marker = join(folder, "master.json");
  try {
    return JSON.parse(await readFile(marker, "utf8")) as Master;
  } catch {
    // not built yet
  }
  await rm(folder, { recursive: true, force: true });
  await mkdir(folder, { recursive: true });
  const dir = join(folder, spec.format === "lance" ? "t.lance" : "t");
  const half = firstHalf(spec);
  const started = Date.now();
  let cutoffMs: number | null = null;
  if (spec.format === "iceberg") {
    await runWriter("iceberg", dir, spec, 0, half - 1, process.env);
    cutoffMs = await cutoffBetween();
    await runWriter("iceberg", dir, spec, half, spec.versions - 1, process.env);
  } else {
    await runWriter(spec.format, dir, spec, 0, half - 1, process.env, spec.format === "delta");
  }
  const master: Master = { spec, dir, commits: spec.format === "iceberg" ? spec.versions : half, cutoffMs };
  await writeFile(marker, JSON.stringify(master));
  log(`side-by-side: ${spec.format} master, ${spec.files} files over ${spec.versions} versions, written in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return master;
}

/** Store clocks count in whole seconds at worst (S3 LastModified): keep the cutoff clear of both halves. */
async function cutoffBetween(): Promise<number> {
  await sleep(1_100);
  const cutoff = Date.now();
  await sleep(1_100);
  return cutoff;
}

/**
 * One tool's copy: the master copied to `target` (a local folder, or a prefix on the emulated S3,
 * uploaded undelayed), then (Delta, Lance) the cutoff and the second half committed onto it.
 */
export async function prepareCopy(master: Master, storage: Storage, name: string, scratchDir: string, s3: S3Env | null): Promise<TableCopy> {
  const leaf = master.spec.format === "lance" ? "t.lance" : "t";
  const half = firstHalf(master.spec);
  if (master.spec.format === "iceberg") {
    if (storage !== "local") throw new Error("side-by-side: Iceberg runs on local disk only");
    const dir = join(scratchDir, name, leaf);
    await rm(dirname(dir), { recursive: true, force: true });
    await cp(master.dir, dir, { recursive: true, preserveTimestamps: true });
    return { uri: dir, cutoffMs: master.cutoffMs!, versionAtCutoff: half };
  }
  let uri: string;
  let env: NodeJS.ProcessEnv = process.env;
  if (storage === "local") {
    uri = join(scratchDir, name, leaf);
    await rm(dirname(uri), { recursive: true, force: true });
    await cp(master.dir, uri, { recursive: true });
    if (master.spec.format === "delta") await ageLog(uri);
  } else {
    await s3!.removePrefix(name);
    await s3!.upload(master.dir, `${name}/${leaf}`);
    uri = s3!.uri(`${name}/${leaf}`);
    env = { ...process.env, ...s3!.sdkEnvironment(), AWS_ENDPOINT_URL: s3!.directEndpoint };
  }
  const cutoffMs = await cutoffBetween();
  await runWriter(master.spec.format, uri, master.spec, half, master.spec.versions - 1, env);
  // Delta numbers versions from 0: the version current at the cutoff is the master's last.
  return { uri, cutoffMs, versionAtCutoff: master.spec.format === "delta" ? half - 1 : half };
}

/**
 * Delta's log cleanup cuts off at midnight UTC of (now - logRetentionDuration) in Spark and in
 * lakewarden (delta-rs cuts at the instant), going by the commit files' modification times: on
 * local disk the first half's log is dated two days back, so every tool's log cleanup has the
 * same work. S3's LastModified cannot be set: there lakewarden keeps the log until midnight
 * passes (docs/peers.md, the benchmark's section).
 */
async function ageLog(dir: string): Promise<void> {
  const when = new Date(Date.now() - 2 * 86_400_000);
  for (const name of await readdir(join(dir, "_delta_log"))) await utimes(join(dir, "_delta_log", name), when, when);
}

/** Removes a copy (off the clock). */
export async function removeCopy(storage: Storage, name: string, scratchDir: string, s3: S3Env | null): Promise<void> {
  if (storage === "s3") await s3!.removePrefix(name);
  else await rm(join(scratchDir, name), { recursive: true, force: true });
}
