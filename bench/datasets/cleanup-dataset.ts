/**
 * The real LanceDB table both cleanups run on, one fresh copy per run.
 *
 * The master holds the "old" history: small appends with the odd delete, compacted once (as a
 * maintained table is). Each copy then gets, from LanceDB itself, a few single-row deletes
 * committed after a cutoff instant taken once the copy is in place. Why this order: Lance's
 * cleanup only considers files whose store mtime is before the earliest kept manifest, and
 * a copy's files are as new as the copy (S3 LastModified cannot be set), so versions to keep
 * must be committed after the copy. The cutoff then separates old from kept versions for
 * both tools, and the current version is one LanceDB's optimize() cannot compact further
 * (one fragment, few deleted rows): its prune is what gets measured.
 */
import { cp, mkdir, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import * as lancedb from "@lancedb/lancedb";
import { templateRows } from "./lance-template.ts";
import type { S3Env } from "../harness/s3-env.ts";

export interface CleanupDatasetSpec {
  /** Append commits before the cutoff (each a new fragment, so a data file to delete later). */
  oldAppends: number;
  rowsPerAppend: number;
  /** Every this many appends, a delete (a deletion file). */
  deleteEvery: number;
  /** Single-row deletes after the cutoff: the versions that stay. */
  keptVersions: number;
}

export interface CleanupDataset {
  spec: CleanupDatasetSpec;
  /** Directory holding the master's `t.lance` (old history only). */
  databaseDir: string;
  tableName: string;
  /** Newest version of the master: every version up to it is older than a copy's cutoff. */
  lastOldVersion: number;
  /** Versions of a prepared copy. */
  totalVersions: number;
  files: number;
  bytes: number;
}

const REVISION = 2;

/** Builds the dataset once under `cacheDir` (reused while the spec is unchanged). */
export async function ensureCleanupDataset(cacheDir: string, spec: CleanupDatasetSpec): Promise<CleanupDataset> {
  const dir = join(cacheDir, `cleanup-r${REVISION}-a${spec.oldAppends}-r${spec.rowsPerAppend}-d${spec.deleteEvery}-k${spec.keptVersions}`);
  const markerPath = join(dir, "dataset.json");
  try {
    return JSON.parse(await readFile(markerPath, "utf8")) as CleanupDataset;
  } catch {
    // not built yet
  }
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  const databaseDir = join(dir, "db");
  const db = await lancedb.connect(databaseDir);
  const table = await db.createTable("t", templateRows(spec.rowsPerAppend));
  let nextId = spec.rowsPerAppend;
  for (let i = 1; i < spec.oldAppends; i++) {
    await table.add(templateRows(spec.rowsPerAppend, nextId));
    nextId += spec.rowsPerAppend;
    if (i % spec.deleteEvery === 0) await table.delete(`id = ${nextId - 1}`);
  }
  // One compaction, as a maintained table has had; the cutoff far in the past prunes nothing.
  await table.optimize({ cleanupOlderThan: new Date(0) });
  const lastOldVersion = await table.version();
  table.close();
  db.close();

  const { files, bytes } = await treeSize(join(databaseDir, "t.lance"));
  const dataset: CleanupDataset = {
    spec,
    databaseDir,
    tableName: "t",
    lastOldVersion,
    totalVersions: lastOldVersion + spec.keptVersions,
    files,
    bytes,
  };
  await writeFile(markerPath, JSON.stringify(dataset));
  return dataset;
}

/**
 * Where a copy goes: a local directory, or a key prefix on the emulated S3 (written
 * undelayed: copying is setup, not measurement).
 */
export type CopyTarget = { storage: "local"; databaseDir: string } | { storage: "s3"; s3: S3Env; prefix: string };

/**
 * Copies the master, takes the cutoff, then has LanceDB commit the kept versions on the
 * copy. Returns the cutoff: versions strictly older are to be removed.
 */
export async function prepareCleanupCopy(dataset: CleanupDataset, target: CopyTarget): Promise<number> {
  const source = join(dataset.databaseDir, `${dataset.tableName}.lance`);
  let databaseUri: string;
  let storageOptions: Record<string, string> | undefined;
  if (target.storage === "local") {
    await rm(target.databaseDir, { recursive: true, force: true });
    await mkdir(target.databaseDir, { recursive: true });
    await cp(source, join(target.databaseDir, `${dataset.tableName}.lance`), { recursive: true });
    databaseUri = target.databaseDir;
  } else {
    await target.s3.removePrefix(target.prefix);
    await target.s3.upload(source, `${target.prefix}/${dataset.tableName}.lance`);
    databaseUri = target.s3.uri(target.prefix);
    storageOptions = target.s3.lancedbStorageOptions({ direct: true });
  }
  // Store clocks count in whole seconds at worst (S3 LastModified): keep the copy's mtimes,
  // the cutoff and the kept commits clearly apart.
  await sleep(1_100);
  const cutoffMillis = Date.now();
  await sleep(250);
  const db = await lancedb.connect(databaseUri, storageOptions ? { storageOptions } : {});
  const table = await db.openTable(dataset.tableName);
  for (let i = 0; i < dataset.spec.keptVersions; i++) await table.delete(`id = ${i * 7}`);
  const version = await table.version();
  table.close();
  db.close();
  if (version !== dataset.totalVersions) {
    throw new Error(`${databaseUri}: the prepared copy is at version ${version}, expected ${dataset.totalVersions}`);
  }
  return cutoffMillis;
}

async function treeSize(dir: string): Promise<{ files: number; bytes: number }> {
  let files = 0;
  let bytes = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    files++;
    bytes += (await stat(join(entry.parentPath, entry.name))).size;
  }
  return { files, bytes };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
