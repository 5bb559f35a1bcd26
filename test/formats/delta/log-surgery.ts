/**
 * Test helpers that change a fixture copy the way a writer would: append a commit (NDJSON written
 * here), set file times. Only for copies made by test/support/fixtures.ts.
 */
import { readdir, readFile, utimes, writeFile } from "node:fs/promises";
import { join, relative } from "node:path";

export function commitPath(dir: string, version: number): string {
  return join(dir, "_delta_log", `${String(version).padStart(20, "0")}.json`);
}

/** Writes commit `version` (create-only, like a Delta writer) with the given actions, one per line. */
export async function appendCommit(dir: string, version: number, actions: readonly object[], mtime?: Date): Promise<void> {
  const path = commitPath(dir, version);
  await writeFile(path, `${actions.map((a) => JSON.stringify(a)).join("\n")}\n`, { flag: "wx" });
  if (mtime) await utimes(path, mtime, mtime);
}

/** The latest protocol and metaData actions in the commit files (the fixtures used here have them in commits). */
export async function latestProtocolAndMetadata(dir: string): Promise<{ protocol: Record<string, unknown>; metaData: Record<string, unknown> }> {
  const log = join(dir, "_delta_log");
  const names = (await readdir(log)).filter((n) => /^\d{20}\.json$/.test(n)).sort();
  let protocol: Record<string, unknown> | undefined;
  let metaData: Record<string, unknown> | undefined;
  for (const name of names) {
    for (const line of (await readFile(join(log, name), "utf8")).split("\n")) {
      if (line.trim() === "") continue;
      const action = JSON.parse(line) as Record<string, Record<string, unknown>>;
      if (action.protocol) protocol = action.protocol;
      if (action.metaData) metaData = action.metaData;
    }
  }
  if (!protocol || !metaData) throw new Error(`no protocol/metaData in the commits of ${dir}`);
  return { protocol, metaData };
}

/** Every file under `dir`, as keys relative to it. */
export async function listKeys(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) out.push(relative(dir, join(entry.parentPath, entry.name)).split("\\").join("/"));
  }
  return out.sort();
}

/** Sets every file's modification time under `dir` (recursively) to `time`. */
export async function setAllTimes(dir: string, time: Date): Promise<void> {
  for (const key of await listKeys(dir)) await utimes(join(dir, key), time, time);
}

/** Sets commit v's (and its .crc's and checkpoint's) time to `timeOf(v)`. */
export async function setLogTimes(dir: string, timeOf: (version: number) => Date): Promise<void> {
  const log = join(dir, "_delta_log");
  for (const name of await readdir(log)) {
    const m = /^(\d{20})\./.exec(name);
    if (!m) continue;
    const time = timeOf(Number(m[1]));
    await utimes(join(log, name), time, time);
  }
}
