/**
 * Checks on real tables through LanceDB itself: what every cleanup test asserts afterwards
 * (LanceDB opens the latest, every tagged and every kept version and counts the same rows).
 */
import { cp, readdir } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import * as lancedb from "@lancedb/lancedb";

/** Every file under `root`, as sorted `/`-separated paths relative to it. */
export async function listTree(root: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) await walk(path);
      else out.push(relative(root, path).split(sep).join("/"));
    }
  };
  await walk(root);
  return out.sort();
}

/** A byte-for-byte copy of a directory tree, modification times included. */
export function copyTree(from: string, to: string): Promise<void> {
  return cp(from, to, { recursive: true, preserveTimestamps: true });
}

export interface VersionContent {
  /** Rows a full scan returns. */
  rows: number;
  /** Sum of `id` over those rows: the data itself, not just metadata. */
  idSum: number;
  /** countRows with a predicate (goes through the scalar index when there is one). */
  filtered: number;
}

export interface TableContents {
  latest: number;
  versions: Map<number, VersionContent>;
  tags: Record<string, number>;
}

async function readVersion(table: lancedb.Table, version: number): Promise<VersionContent> {
  await table.checkout(version);
  const rows = await table.query().select(["id"]).toArray();
  const idSum = rows.reduce((sum, row) => sum + Number(row.id), 0);
  const filtered = await table.countRows("id >= 0");
  return { rows: rows.length, idSum, filtered };
}

/** Opens the table with a fresh connection and reads every live version (and the tags). */
export async function readContents(dbUri: string, tableName = "t", storageOptions?: Record<string, string>): Promise<TableContents> {
  const db = await lancedb.connect(dbUri, storageOptions ? { storageOptions } : {});
  const table = await db.openTable(tableName);
  try {
    const listed = (await table.listVersions()).map((v) => v.version);
    const versions = new Map<number, VersionContent>();
    for (const version of listed) versions.set(version, await readVersion(table, version));
    const tags = Object.fromEntries(Object.entries(await (await table.tags()).list()).map(([name, t]) => [name, t.version]));
    await table.checkoutLatest();
    return { latest: await table.version(), versions, tags };
  } finally {
    table.close();
    db.close();
  }
}

/**
 * After a cleanup: the latest is the same, every version LanceDB still lists reads the same
 * rows as before, every tag still resolves to a readable version with the same rows.
 */
export function compareContents(before: TableContents, after: TableContents): string[] {
  const problems: string[] = [];
  if (after.latest !== before.latest) problems.push(`latest went from ${before.latest} to ${after.latest}`);
  if (!after.versions.has(after.latest)) problems.push(`latest version ${after.latest} not readable`);
  for (const [version, content] of after.versions) {
    const was = before.versions.get(version);
    if (!was) problems.push(`version ${version} did not exist before`);
    else if (JSON.stringify(was) !== JSON.stringify(content)) problems.push(`version ${version}: ${JSON.stringify(was)} before, ${JSON.stringify(content)} after`);
  }
  for (const [tag, version] of Object.entries(before.tags)) {
    if (after.tags[tag] !== version) problems.push(`tag ${tag} moved from ${version} to ${after.tags[tag]}`);
    if (!after.versions.has(version)) problems.push(`tagged version ${version} (${tag}) is gone`);
  }
  return problems;
}
