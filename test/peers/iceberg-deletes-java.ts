/**
 * The Java side of the Iceberg tables with equality and position deletes: the writer
 * (IcebergDeletesTable.java), Iceberg's own reader (IcebergDeletesRead.java) and the peer's cleanup
 * (IcebergPeer.java), compiled together by javac against the jars of test/peers/iceberg-writer/pom.xml
 * (Iceberg 1.10.0 with iceberg-data and iceberg-parquet, copied into .tools/iceberg-writer/lib by
 * Maven once per version of the pom, as iceberg-s3-jars.ts does for the S3 jars). Every JVM runs
 * under nice in its own process group, killed with it, so none outlives its test.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { mkdtemp, readdir, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Literal } from "../../lib/scan/expression.ts";
import { REPO_ROOT, runNiced } from "./peer-scripts.ts";

const HERE = join(REPO_ROOT, "test", "peers");
const POM = join(HERE, "iceberg-writer", "pom.xml");
const SOURCES = ["IcebergPeer.java", "IcebergDeletesTable.java", "IcebergDeletesRead.java"].map((name) => join(HERE, name));
const TOOL_DIR = join(REPO_ROOT, ".tools", "iceberg-writer");
const LIB_DIR = join(TOOL_DIR, "lib");
const CLASSES_DIR = join(TOOL_DIR, "classes");
const STAMP = join(TOOL_DIR, "lakewarden-build.sha256");
/** Where the writer says its files are: a made-up bucket, so a reader that does not map it onto the copy reads nothing by mistake. */
export const DELETES_TABLE_LOCATION = "s3://lakewarden-test-deletes/table";

/** The pom's and the sources' hash: the jars are copied again when the pom changes, the classes built again when either does. */
function buildHash(): string {
  const hash = createHash("sha256").update(readFileSync(POM));
  for (const source of SOURCES) hash.update(readFileSync(source));
  return hash.digest("hex");
}

/** The class path of the writer, the reader and the peer: the jars copied and the sources compiled first when missing or stale. */
export function icebergWriterClassPath(log: (line: string) => void = () => {}): string {
  const classPath = `${CLASSES_DIR}:${join(LIB_DIR, "*")}`;
  if (existsSync(STAMP) && readFileSync(STAMP, "utf8").trim() === buildHash()) return classPath;
  rmSync(TOOL_DIR, { recursive: true, force: true });
  mkdirSync(CLASSES_DIR, { recursive: true });
  log(`copying the jars of test/peers/iceberg-writer/pom.xml into ${LIB_DIR} with Maven`);
  // --strict-checksums: a jar whose checksum does not match Maven Central's fails the install.
  execFileSync("mvn", ["-q", "-B", "--strict-checksums", "-f", POM, "dependency:copy-dependencies", `-DoutputDirectory=${LIB_DIR}`], { stdio: ["ignore", "inherit", "inherit"] });
  execFileSync("javac", ["-nowarn", "-d", CLASSES_DIR, "-cp", join(LIB_DIR, "*"), ...SOURCES], { stdio: ["ignore", "inherit", "inherit"] });
  writeFileSync(STAMP, `${buildHash()}\n`);
  return classPath;
}

/** Runs a class of the class path with `args` under nice in its own process group; resolves with its stdout. */
export function runJava(mainClass: string, args: readonly string[], timeoutMs: number): Promise<string> {
  return runNiced(mainClass, "java", ["-Xmx1g", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", icebergWriterClassPath(), mainClass, ...args], timeoutMs);
}

export interface DeletesTable {
  dir: string;
  location: string;
  snapshots: { id: string; operation: string; sequence_number: number }[];
  refs: Record<string, string>;
  /** Files the table's history added, by content: data, equality_deletes, position_deletes. */
  files: Record<string, number>;
  samples: Record<string, Literal[]>;
  /** The keys of the data files the history's compaction replaced and of their position delete files: only expired snapshots reach them. */
  compacted: string[];
  /** The key of the data file written and never committed. */
  orphan: string;
  /** The scratch folder the table is in, removed with it. */
  remove: () => Promise<void>;
}

export interface DeletesTableSize {
  dataFiles: number;
  rowsPerFile: number;
  seed: number;
}

/**
 * Writes the table (IcebergDeletesTable.java's history) into a new scratch folder. With
 * `agedDays`, it waits until the snapshots are past the table's 2-second max-snapshot-age, then
 * dates every file that many days back, so only the retention rules decide what expires.
 */
export async function writeDeletesTable(size: DeletesTableSize, agedDays?: number): Promise<DeletesTable> {
  const parent = await mkdtemp(join(tmpdir(), "lw-iceberg-deletes-"));
  const dir = join(parent, "t");
  const remove = () => rm(parent, { recursive: true, force: true });
  // A writer that fails leaves no half-written table behind in the scratch space.
  const out = JSON.parse(
    await runJava("IcebergDeletesTable", [dir, DELETES_TABLE_LOCATION, String(size.dataFiles), String(size.rowsPerFile), String(size.seed)], 900_000).catch(
      async (error: unknown) => {
        await remove();
        throw error;
      },
    ),
  );
  if (agedDays !== undefined) {
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const when = new Date(Date.now() - agedDays * 86_400_000);
    for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
      if (entry.isFile()) await utimes(join(entry.parentPath, entry.name), when, when);
    }
  }
  return { ...out, dir, remove };
}

/** A copy for Iceberg Java to read: every snapshot its metadata lists (or those in `only`), or the current one file by file. */
export type ReadJob = { id: string; dir: string; metadata: string; mode: "snapshots" | "files"; only?: string[] };
export interface SnapshotsRead {
  id: string;
  error?: string;
  /** Per snapshot id: its row count and the SHA-256 of its rows as Iceberg Java reads them. */
  snapshots?: Record<string, { rows: number; sha256: string }>;
}
export interface FilesRead {
  id: string;
  error?: string;
  /** The current snapshot's live data files (table-relative keys) with their live rows, canonical. */
  files?: { key: string; rows: Record<string, unknown>[] }[];
  generics_rows?: number;
  snapshot?: string;
}

/** Iceberg Java reads each job's copy (IcebergDeletesRead.java), every job in one JVM. */
export async function readWithIcebergJava<T extends SnapshotsRead | FilesRead>(jobs: ReadJob[], scratch: string): Promise<T[]> {
  const file = join(scratch, `read-jobs-${Date.now()}.json`);
  await writeFile(file, JSON.stringify(jobs));
  return JSON.parse(await runJava("IcebergDeletesRead", [file], 900_000)) as T[];
}
