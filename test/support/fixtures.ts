/**
 * Real tables written by other engines live outside the project, in `<repo>/../shared/fixtures/`
 * (see its README). They are never modified and never copied into the project: a test copies a
 * table to a fresh temporary folder, works on the copy, and the copy is removed after the test.
 *
 *   const dir = await copyFixture("delta", "table_with_deletion_logs");
 */
import { chmod, cp, mkdtemp, readdir, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { onTestFinished } from "vitest";

export type FixtureFormat = "delta" | "iceberg";

/** `<repo>/../shared/fixtures`, resolved from this file's location (test/support/ in the repo). */
export const FIXTURES_ROOT = fileURLToPath(new URL("../../../shared/fixtures/", import.meta.url));

export function fixtureSource(format: FixtureFormat, name: string): string {
  if (!/^[A-Za-z0-9._-]+$/.test(name) || name.startsWith(".")) throw new Error(`not a fixture name: "${name}"`);
  return join(FIXTURES_ROOT, format, name);
}

/** The names of the fixture tables of a format. */
export async function fixtureNames(format: FixtureFormat): Promise<string[]> {
  const entries = await readdir(join(FIXTURES_ROOT, format), { withFileTypes: true });
  return entries
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
}

/**
 * Copies a fixture table to a fresh temporary folder (made writable: the originals are
 * read-only). Returns the copy's path (the table root) and a function that removes it.
 */
export async function copyFixtureDir(format: FixtureFormat, name: string): Promise<{ dir: string; remove(): Promise<void> }> {
  const source = fixtureSource(format, name);
  await stat(source); // a clear ENOENT naming the fixture when it is missing
  const parent = await mkdtemp(join(tmpdir(), `lw-fixture-${name}-`));
  const dir = join(parent, name);
  await cp(source, dir, { recursive: true });
  await makeWritable(dir);
  return { dir, remove: () => rm(parent, { recursive: true, force: true }) };
}

/** copyFixtureDir inside a test: the copy is removed when the current test finishes. */
export async function copyFixture(format: FixtureFormat, name: string): Promise<string> {
  const { dir, remove } = await copyFixtureDir(format, name);
  onTestFinished(remove);
  return dir;
}

async function makeWritable(path: string): Promise<void> {
  const info = await stat(path);
  if (info.isDirectory()) {
    await chmod(path, 0o755);
    for (const entry of await readdir(path)) await makeWritable(join(path, entry));
  } else {
    await chmod(path, 0o644);
  }
}
