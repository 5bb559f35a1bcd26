/**
 * Snapshot histories built on a copy of the spark-bunnies fixture (s1 ← s2 ← s3 on main,
 * committed 2025-03-30) with appendSnapshot and rewriteMetadata, for expiry cases, and the
 * independent checks of a table after expiry: what icebird reads of every snapshot, and whether
 * each file it names exists.
 */
import { copyFile, readFile } from "node:fs/promises";
import { join } from "node:path";
import { expect } from "vitest";
import { appendSnapshot, fileExists, icebirdLiveFiles, icebirdMetadataFiles, rewriteMetadata, snapshotsByTextPass } from "./iceberg-fixtures.ts";

export const BUNNIES = "s3a://hyperparam-iceberg/spark/bunnies";
const LIVE_DATA = "data/00000-1-6cd7611f-0ceb-4cf3-8b8e-8c856356df3e-00001.parquet";
export const BUNNIES_IDS = { s1: "7505300640432048841", s2: "469881615898633426", s3: "2701171901096418979" };

/** Snapshot ids by the history's names for them (s1, s2, s3 and each commit's name). */
export type Ids = Record<string, string>;

export interface Commit {
  name: string;
  ageMs: number;
  branch?: string;
  /** The parent as `@name` (default: the head of the branch committed to). */
  parent?: string;
  /** Refs to set with this commit (the branch committed to takes its settings from here). */
  refs?: Record<string, Record<string, string | number>>;
}

export interface History {
  /** Commits on top of s1 ← s2 ← s3 (main), oldest first; each adds one data file. Snapshot ids in refs are `@name`. */
  commits: Commit[];
  /** Refs to set after the commits, and table properties, as a writer's separate metadata commit. */
  refs?: Record<string, Record<string, string | number>>;
  properties?: Record<string, string>;
}

const refTo = (ids: Ids, value: string | number): string | number | bigint => (typeof value === "string" && value.startsWith("@") ? BigInt(ids[value.slice(1)]!) : value);
function refsWith(ids: Ids, refs: Record<string, Record<string, string | number>>): Record<string, Record<string, string | number | bigint>> {
  return Object.fromEntries(Object.entries(refs).map(([name, ref]) => [name, Object.fromEntries(Object.entries(ref).map(([k, v]) => [k, refTo(ids, v)]))]));
}

/** Builds `history` on a bunnies copy at `dir`, commit times relative to `nowMs`; returns the ids and the current metadata file's name. */
export async function buildHistory(dir: string, history: History, nowMs: number): Promise<{ ids: Ids; metadata: string }> {
  const ids: Ids = { ...BUNNIES_IDS };
  for (const commit of history.commits) {
    const file = `data/${commit.name}-00001.parquet`;
    await copyFile(join(dir, LIVE_DATA), join(dir, file));
    const appended = await appendSnapshot(dir, {
      files: [{ path: `${BUNNIES}/${file}`, recordCount: 20, sizeInBytes: 3560 }],
      timestampMs: nowMs - commit.ageMs,
      ...(commit.branch ? { branch: commit.branch } : {}),
      ...(commit.parent ? { parentId: ids[commit.parent.slice(1)]! } : {}),
      ...(commit.refs ? { refs: refsWith(ids, commit.refs) } : {}),
    });
    ids[commit.name] = appended.snapshotId;
  }
  if (history.refs || history.properties) {
    await rewriteMetadata(dir, (json) => {
      if (history.refs) json.refs = { ...(json.refs as object), ...refsWith(ids, history.refs) } as never;
      if (history.properties) json.properties = { ...(json.properties as object), ...history.properties } as never;
    });
  }
  return { ids, metadata: await currentMetadataName(dir) };
}

export async function currentMetadataName(dir: string): Promise<string> {
  return `v${(await readFile(join(dir, "metadata/version-hint.text"), "utf8")).trim()}.metadata.json`;
}

/** Refs of a metadata file by name, read from its text (ids quoted before JSON.parse). */
export async function refNames(dir: string, metadata: string): Promise<string[]> {
  const text = (await readFile(join(dir, "metadata", metadata), "utf8")).replace(/("snapshot-id"\s*:\s*)(-?\d+)/g, '$1"$2"');
  return Object.keys((JSON.parse(text) as { refs?: object }).refs ?? {}).sort();
}

/** What snapshot `i` of `metadata` reaches, read by icebird: manifest list, manifests, data and delete files. */
export async function reach(dir: string, metadata: string, i: number): Promise<string[]> {
  return [...(await icebirdMetadataFiles(dir, metadata, i)), ...(await icebirdLiveFiles(dir, metadata, i)).map((f) => f.key)];
}

/** Every snapshot of the current metadata reads with icebird, and every file it names exists. */
export async function everySnapshotReads(dir: string): Promise<void> {
  const metadata = await currentMetadataName(dir);
  const snapshots = await snapshotsByTextPass(join(dir, "metadata", metadata));
  for (let i = 0; i < snapshots.length; i++) {
    for (const key of await reach(dir, metadata, i)) expect(await fileExists(dir, key), `${key} (snapshot ${snapshots[i]!.id})`).toBe(true);
  }
}
