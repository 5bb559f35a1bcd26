/**
 * The real Iceberg tables in the shared fixtures folder (`<repo>/../shared/fixtures/iceberg/`,
 * see its README), copied into a temporary folder before a test touches them: the originals
 * are never opened for writing. Copies are made writable (the originals are read-only) and,
 * since git keeps no modification times, every file's mtime is set to `ageMs` ago.
 */
import { chmod, cp, mkdtemp, readdir, rm, stat, utimes } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const ICEBERG_FIXTURES_DIR = fileURLToPath(new URL("../../../shared/fixtures/iceberg/", import.meta.url));

/** Every fixture table, by folder name. */
export const ICEBERG_FIXTURES = [
  "spark-bunnies",
  "athena-example",
  "spark-rename_column",
  "hive_partitioned_table",
  "legacy_v1",
  "equality_deletes-mytable",
  "big_query_error",
] as const;
export type IcebergFixture = (typeof ICEBERG_FIXTURES)[number];

/** Fixtures a reader must refuse (README): a missing manifest list, paths outside the table. */
export const BROKEN_FIXTURES: readonly IcebergFixture[] = ["equality_deletes-mytable", "big_query_error"];

export function fixturePath(name: IcebergFixture): string {
  return join(ICEBERG_FIXTURES_DIR, name);
}

export interface FixtureCopy {
  /** The copied table's root folder. */
  dir: string;
  remove(): Promise<void>;
}

/** Copies fixture `name` into a fresh temp folder; every file writable and `ageMs` old (default 30 days). */
export async function copyIcebergFixture(name: IcebergFixture, options: { ageMs?: number } = {}): Promise<FixtureCopy> {
  const parent = await mkdtemp(join(tmpdir(), `lw-iceberg-${name}-`));
  const dir = join(parent, name);
  await cp(fixturePath(name), dir, { recursive: true });
  const when = new Date(Date.now() - (options.ageMs ?? 30 * 24 * 3600 * 1000));
  await makeWritable(dir, when);
  return { dir, remove: () => rm(parent, { recursive: true, force: true }) };
}

async function makeWritable(dir: string, when: Date): Promise<void> {
  await chmod(dir, 0o755);
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) await makeWritable(path, when);
    else {
      await chmod(path, 0o644);
      await utimes(path, when, when);
    }
  }
}

/** Every file under `dir`, as keys relative to it, sorted. */
export async function listFiles(dir: string, prefix = ""): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(join(dir, prefix), { withFileTypes: true })) {
    const key = prefix === "" ? entry.name : `${prefix}/${entry.name}`;
    if (entry.isDirectory()) out.push(...(await listFiles(dir, key)));
    else out.push(key);
  }
  return out.sort();
}

/** True when `dir/key` exists as a file. */
export async function fileExists(dir: string, key: string): Promise<boolean> {
  return stat(join(dir, key)).then(
    (s) => s.isFile(),
    () => false,
  );
}
