/**
 * The head writer takes the previous head's rows for manifests it already read (immutable, matched
 * by path, length, adding snapshot and sequence number) and reads only new ones. On a table
 * pyiceberg writes (appends, deletes, overwrites, schema and partition evolution, tags, branches),
 * a head written after every snapshot from the one before it is byte for byte the head written
 * from scratch, and it reads fewer manifests. A previous head without the manifests section, or
 * one that disagrees with itself, makes the writer read every manifest.
 */
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { icebergFormat } from "../../../lib/formats/iceberg/iceberg-format.ts";
import type { TableSnapshot } from "../../../lib/formats/table-format.ts";
import { HEAD_KEY } from "../../../lib/head/stored-head.ts";
import { writeTableHead } from "../../../lib/head/write-table-head.ts";
import { LocalStore } from "../../../lib/store/local-store.ts";
import { icebergFolderTable } from "../../engines/engine-tables.ts";
import { runScript } from "../../engines/race.ts";
import { appendSnapshot, copyIcebergFixture } from "../../support/iceberg-fixtures.ts";
import { BUNNIES } from "../../support/iceberg-histories.ts";
import { makeTempDir, removeDir } from "../../support/lance-datasets.ts";

const COMMITS = 16;

let dir: string;
let uri: string;

beforeAll(async () => {
  dir = await makeTempDir("lw-head-manifest-reuse-");
  const table = icebergFolderTable(dir);
  uri = table.uri;
  await runScript(table, ["write", uri, "--state", join(dir, "state.json"), "--commits", String(COMMITS)]);
}, 240_000);
afterAll(async () => {
  await removeDir(dir);
});

/** A fresh store (no manifest cache carried over) that counts the manifests it is asked for. */
function countingStore(at: string = uri): { store: LocalStore; manifests: string[] } {
  const store = new LocalStore(at);
  const manifests: string[] = [];
  const get = store.get.bind(store);
  store.get = (key, range) => {
    if (key.startsWith("metadata/") && key.endsWith(".avro") && !key.slice("metadata/".length).startsWith("snap-")) manifests.push(key);
    return get(key, range);
  };
  return { store, manifests };
}

/** The head bytes for `version`: after the previous head (chained) or with none (scratch). */
async function headBytes(version: number, chained: boolean, at: string = uri): Promise<{ bytes: Uint8Array; manifests: string[] }> {
  if (!chained) await rm(join(at, HEAD_KEY), { force: true });
  const { store, manifests } = countingStore(at);
  const written = await writeTableHead(store, { format: icebergFormat, version, now: () => 1_700_000_000_000, footerReader: null, checkpointVersion: null });
  expect(written.action).not.toMatch(/^skipped/);
  return { bytes: (await store.get(HEAD_KEY)).body, manifests };
}

/**
 * For every snapshot in version order: its head from scratch, then its head written on top of the
 * previous snapshot's (chained) head; the two must be the same bytes. Returns the manifests each way read.
 */
async function chainAgainstScratch(at: string): Promise<{ versions: number; chainedReads: number; scratchReads: number }> {
  const versions = (await icebergFormat.listVersionFiles(new LocalStore(at))).map((file) => file.version);
  let chainedReads = 0;
  let scratchReads = 0;
  let previousChained: Uint8Array | null = null;
  for (const version of versions) {
    const scratch = await headBytes(version, false, at);
    if (previousChained) await new LocalStore(at).put(HEAD_KEY, previousChained);
    const chained = await headBytes(version, previousChained !== null, at);
    expect(Buffer.from(chained.bytes).equals(Buffer.from(scratch.bytes)), `head of version ${version}`).toBe(true);
    if (previousChained) {
      chainedReads += chained.manifests.length;
      scratchReads += scratch.manifests.length;
    }
    previousChained = chained.bytes;
  }
  return { versions: versions.length, chainedReads, scratchReads };
}

describe("iceberg head write: manifests of the previous head are not read again", () => {
  it("every snapshot's head, written after the previous one, equals the head written from scratch, byte for byte", async () => {
    const { chainedReads, scratchReads, versions } = await chainAgainstScratch(uri);
    expect(versions).toBeGreaterThan(8);
    // Most commits add one or two manifests and keep the rest: far fewer reads than from scratch.
    expect(chainedReads).toBeLessThan(scratchReads / 2);
  }, 120_000);

  it("the same on Spark's table with position deletes, with a deletion vector and an equality delete file appended", async () => {
    const copy = await copyIcebergFixture("spark-bunnies");
    try {
      const data = "s3a://hyperparam-iceberg/spark/bunnies/data/00000-1-6cd7611f-0ceb-4cf3-8b8e-8c856356df3e-00001.parquet";
      await appendSnapshot(copy.dir, { files: [{ path: `${BUNNIES}/data/extra-00001.parquet`, recordCount: 20, sizeInBytes: 3560 }] });
      await appendSnapshot(copy.dir, {
        files: [],
        deletionVectors: [{ path: `${BUNNIES}/data/dv-1.puffin`, referencedDataFile: data, cardinality: 2, sizeInBytes: 120, contentOffset: 4, contentSizeInBytes: 60 }],
      });
      await appendSnapshot(copy.dir, { files: [], deleteFiles: [{ path: `${BUNNIES}/data/eq-1.parquet`, content: 2, recordCount: 1, sizeInBytes: 900, equalityIds: [1] }] });
      const { versions, chainedReads, scratchReads } = await chainAgainstScratch(copy.dir);
      expect(versions).toBe(6);
      expect(chainedReads).toBeLessThan(scratchReads);
      // The deletion vector names its data file by the writer's URI; the live file, by key, carries it.
      const store = new LocalStore(copy.dir);
      const latest = await icebergFormat.readSnapshot(store, (await icebergFormat.latestVersionFile(store))!);
      expect(latest.liveFiles.find((f) => f.paths[0] === data.slice(`${BUNNIES}/`.length))).toMatchObject({ deletionFile: "data/dv-1.puffin", deletedRows: 2 });
    } finally {
      await copy.remove();
    }
  }, 120_000);

  it("reads every manifest when the previous head's manifests section is missing or disagrees with its files section", async () => {
    const store = new LocalStore(uri);
    const latest = (await icebergFormat.latestVersionFile(store))!;
    const [before] = (await icebergFormat.listVersionFiles(store)).filter((f) => f.version < latest.version).slice(-1);
    const previous = await icebergFormat.readSnapshot(store, before!);
    const scratch = await icebergFormat.readSnapshot(store, latest);
    const reads = async (given: TableSnapshot) => {
      const counting = countingStore();
      const read = await icebergFormat.readSnapshot(counting.store, latest, { previous: given });
      expect(read.sections).toEqual(scratch.sections);
      expect(read.liveFiles).toEqual(scratch.liveFiles);
      expect(read.referencedFiles).toEqual(scratch.referencedFiles);
      return counting.manifests.length;
    };
    const all = scratch.sections!.find((s) => s.name === "iceberg_manifests")!.columns.key!.length;
    expect(await reads(previous)).toBeLessThan(all);
    const withoutManifests = { ...previous, sections: previous.sections!.filter((s) => s.name !== "iceberg_manifests") };
    expect(await reads(withoutManifests)).toBe(all);
    const disagreeing = {
      ...previous,
      sections: previous.sections!.map((s) => (s.name === "iceberg_manifests" ? { ...s, columns: { ...s.columns, rows: s.columns.rows!.map((n) => Number(n) + 1) } } : s)),
    };
    expect(await reads(disagreeing)).toBe(all);
  });
});
