/**
 * The side-by-side benchmark's tables (bench/side-by-side.ts): made by each format's own writer
 * (bench/tools/peer_tables.py), one fresh copy per tool, the same history in each.
 *
 * A table has `versions` commits, each a full overwrite writing `files / versions` data files, so
 * each version that expires leaves its files to be deleted. The first half of the commits comes
 * before the cutoff instant every tool is told, the second half after it: about half the versions
 * expire. The writer makes the whole history once, into a master cached across runs, and takes the
 * cutoff between its halves; Delta's first-half log is dated two days back before the second half
 * is written (log cleanup cuts at midnight UTC of now - logRetentionDuration: so every tool's log
 * cleanup has the same work). A copy keeps the master's file times: `cp -a` on local disk, and on
 * the emulated S3 each object is loaded with its file's time as its LastModified
 * (bench/harness/s3-seed.ts), which no S3 client can set. So no writer runs per copy, and every
 * copy holds the same names: the deleted sets compare file by file.
 *
 * Iceberg names every file by its absolute location, so its table on S3 is written there by
 * pyiceberg (straight to the emulator, at a prefix fixed by the spec), saved into the cache, and
 * every copy is loaded back at that prefix (the tools run one at a time). Its local master is
 * written on local disk; both tools map the master's location onto a local copy.
 */
import { execFile, spawn } from "node:child_process";
import { mkdir, readdir, readFile, rm, utimes, writeFile } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { toolPython } from "../test/tools/python-env.ts";
import { ListObjectsV2Command } from "@aws-sdk/client-s3";
import type { S3Env } from "./harness/s3-env.ts";

export type Format = "delta" | "lance" | "iceberg";
export type Storage = "local" | "s3";

const WRITER = fileURLToPath(new URL("./tools/peer_tables.py", import.meta.url));
const REVISION = 2;

export interface TableSpec {
  format: Format;
  /** Data files the whole history writes (the table holds about this many files). */
  files: number;
  versions: number;
}

export interface Master {
  spec: TableSpec;
  /** The local folder of the master table: the whole history, files dated as written. */
  dir: string;
  /** Iceberg on S3: the key prefix its files are named under (copies must sit there); null: anywhere. */
  s3Prefix: string | null;
  /** Versions committed before this instant expire: taken between the halves. */
  cutoffMs: number;
  /** Delta: the table's version at the cutoff (its time travel "as of the cutoff"). */
  versionAtCutoff: number;
}

export interface TableCopy {
  /** Where the tool is pointed: a folder or `s3://bucket/prefix/...`. */
  uri: string;
  cutoffMs: number;
  versionAtCutoff: number;
  /** What removeCopy removes: a local folder or an S3 key prefix. */
  home: string;
}

export const filesPerVersion = (spec: TableSpec): number => Math.max(1, Math.round(spec.files / spec.versions));
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs the writer; resolves with what it printed. */
export async function runWriter(
  format: Format,
  uri: string,
  spec: TableSpec,
  first: number,
  last: number,
  env: NodeJS.ProcessEnv,
  checkpoint = false,
): Promise<{ seconds: number }> {
  const args = [WRITER, "write", format, uri, "--files", String(filesPerVersion(spec)), "--first", String(first), "--last", String(last), ...(checkpoint ? ["--checkpoint"] : [])];
  return JSON.parse(await runPython(args, env)) as { seconds: number };
}

/** What the format's own reader read at each version (peer_tables.py read). */
export interface VersionsRead {
  versions: { version: string; rows: number; operation?: string }[];
}

/**
 * Reads every version of a table with the format's own reader, its data files included: Delta and
 * Lance from version `from` to the latest, Iceberg every snapshot its current metadata keeps.
 */
export async function readVersions(format: Format, uri: string, from: number, env: NodeJS.ProcessEnv): Promise<VersionsRead> {
  return JSON.parse(await runPython([WRITER, "read", format, uri, "--from", String(from)], { ...process.env, ...env })) as VersionsRead;
}

function runPython(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(toolPython(), args, { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => {
      if (code === 0) resolve(stdout.trim().split("\n").at(-1)!);
      else reject(new Error(`peer_tables.py ${args.slice(1, 4).join(" ")} exited ${code}: ${stderr.trim().split("\n").slice(-6).join(" | ")}`));
    });
  });
}

const leafOf = (format: Format): string => (format === "lance" ? "t.lance" : "t");

/** Iceberg's S3 master (and every copy of it) sits at this key prefix: its files are named under it. */
const icebergS3Prefix = (spec: TableSpec): string => `sbs-iceberg-f${spec.files}-v${spec.versions}/t`;

/**
 * Builds the master once under `cacheDir` (reused while the spec is unchanged). `s3` given:
 * Iceberg's master for the emulated S3, written there (the other formats' masters serve both storages).
 */
export async function ensureMaster(cacheDir: string, spec: TableSpec, s3: S3Env | null, log: (line: string) => void): Promise<Master> {
  const onS3 = spec.format === "iceberg" && s3 !== null;
  const folder = join(cacheDir, `side-by-side-r${REVISION}`, `${spec.format}${onS3 ? "-s3" : ""}-f${spec.files}-v${spec.versions}`);
  const marker = join(folder, "master.json");
  try {
    return JSON.parse(await readFile(marker, "utf8")) as Master;
  } catch {
    // not built yet
  }
  await rm(folder, { recursive: true, force: true });
  await mkdir(folder, { recursive: true });
  const dir = join(folder, leafOf(spec.format));
  const started = Date.now();
  const master = onS3 ? await writeIcebergOnS3(spec, dir, s3) : await writeLocally(spec, dir);
  await writeFile(marker, JSON.stringify(master));
  log(`side-by-side: ${spec.format} master${onS3 ? " (S3)" : ""}, ${spec.files} files over ${spec.versions} versions, written in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return master;
}

const half = (spec: TableSpec): number => Math.floor(spec.versions / 2);
const versionAtCutoff = (spec: TableSpec): number => (spec.format === "delta" ? half(spec) - 1 : half(spec));

async function writeLocally(spec: TableSpec, dir: string): Promise<Master> {
  await runWriter(spec.format, dir, spec, 0, half(spec) - 1, process.env, spec.format === "delta");
  if (spec.format === "delta") await ageLog(dir);
  const cutoffMs = await cutoffBetween();
  await runWriter(spec.format, dir, spec, half(spec), spec.versions - 1, process.env);
  return { spec, dir, s3Prefix: null, cutoffMs, versionAtCutoff: versionAtCutoff(spec) };
}

/** pyiceberg writes the table on the emulator (undelayed), which saves it into the cache with its times. */
async function writeIcebergOnS3(spec: TableSpec, dir: string, s3: S3Env): Promise<Master> {
  const prefix = icebergS3Prefix(spec);
  const env = { ...process.env, ...s3.sdkEnvironment(), AWS_ENDPOINT_URL: s3.directEndpoint };
  await s3.removePrefix(prefix);
  await runWriter("iceberg", s3.uri(prefix), spec, 0, half(spec) - 1, env);
  const cutoffMs = await cutoffBetween();
  await runWriter("iceberg", s3.uri(prefix), spec, half(spec), spec.versions - 1, env);
  await s3.save(prefix, dir);
  await s3.removePrefix(prefix);
  return { spec, dir, s3Prefix: prefix, cutoffMs, versionAtCutoff: versionAtCutoff(spec) };
}

/** Store clocks count in whole seconds at worst (S3 LastModified): keep the cutoff clear of both halves. */
async function cutoffBetween(): Promise<number> {
  await sleep(1_100);
  const cutoff = Date.now();
  await sleep(1_100);
  return cutoff;
}

/** One tool's copy of the master, with the master's file times: `cp -a` on local disk, loaded into the emulator on S3. */
export async function prepareCopy(master: Master, storage: Storage, name: string, scratchDir: string, s3: S3Env | null): Promise<TableCopy> {
  const copied = { cutoffMs: master.cutoffMs, versionAtCutoff: master.versionAtCutoff };
  if (storage === "local") {
    const home = join(scratchDir, name);
    const dir = join(home, leafOf(master.spec.format));
    await rm(home, { recursive: true, force: true });
    await mkdir(home, { recursive: true });
    await promisify(execFile)("cp", ["-a", master.dir, dir]);
    return { ...copied, uri: dir, home };
  }
  const prefix = master.s3Prefix ?? `${name}/${leafOf(master.spec.format)}`;
  await s3!.removePrefix(prefix);
  await s3!.load(master.dir, prefix);
  return { ...copied, uri: s3!.uri(prefix), home: prefix };
}

/**
 * Delta's log cleanup cuts off at midnight UTC of (now - logRetentionDuration) in Spark and in
 * lakewarden (delta-rs cuts at the instant), going by the commit files' modification times: the
 * first half's log is dated two days back, so every tool's log cleanup has the same work.
 */
async function ageLog(dir: string): Promise<void> {
  const when = new Date(Date.now() - 2 * 86_400_000);
  for (const name of await readdir(join(dir, "_delta_log"))) await utimes(join(dir, "_delta_log", name), when, when);
}

/** Removes a copy (off the clock). */
export async function removeCopy(storage: Storage, copy: TableCopy, s3: S3Env | null): Promise<void> {
  if (storage === "s3") await s3!.removePrefix(copy.home);
  else await rm(copy.home, { recursive: true, force: true });
}

/** A table's keys, lakewarden's own `_lakewarden/` aside (setup: undelayed). */
export async function listTableKeys(storage: Storage, uri: string, s3: S3Env | null): Promise<string[]> {
  if (storage === "local") {
    const entries = await readdir(uri, { recursive: true, withFileTypes: true });
    return entries
      .filter((e) => e.isFile())
      .map((e) => relative(uri, join(e.parentPath, e.name)).split(sep).join("/"))
      .filter((k) => !k.startsWith("_lakewarden/"));
  }
  const prefix = `${uri.slice(`s3://${s3!.bucket}/`.length)}/`;
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page = await s3!.setupClient.send(new ListObjectsV2Command({ Bucket: s3!.bucket, Prefix: prefix, ContinuationToken: token }));
    for (const object of page.Contents ?? []) keys.push(object.Key!.slice(prefix.length));
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return keys.filter((k) => !k.startsWith("_lakewarden/"));
}
