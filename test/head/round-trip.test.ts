/**
 * Head round trip on real LanceDB datasets: for every version of a history with appends,
 * deletes (deletion files), an index, an overwrite and an update, the state read from the
 * head equals the state read from the manifest, in both codecs and both naming schemes.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lanceFormat } from "../../lib/formats/lance/lance-format.ts";
import type { TableSnapshot } from "../../lib/formats/table-format.ts";
import { readStoredHead } from "../../lib/head/stored-head.ts";
import { writeTableHead } from "../../lib/head/write-table-head.ts";
import { openStore } from "../../lib/store/index.ts";
import type { ObjectStore } from "../../lib/store/object-store.ts";
import { buildLanceDataset, makeTempDir, removeDir } from "../support/lance-datasets.ts";
import type { LanceDataset, ManifestNaming } from "../support/lance-datasets.ts";

/** Everything a reader uses, minus what legitimately differs by how it was found (listing vs HEAD metadata). */
function comparable(snapshot: TableSnapshot) {
  return {
    record: snapshot.record,
    liveFiles: snapshot.liveFiles,
    referencedFiles: snapshot.referencedFiles,
    schema: snapshot.schema,
    config: snapshot.config,
    raw: Buffer.from(snapshot.raw).toString("base64"),
    versionFile: { version: snapshot.versionFile.version, key: snapshot.versionFile.key, size: snapshot.versionFile.size },
  };
}

async function headSnapshot(store: ObjectStore) {
  const stored = await readStoredHead(store);
  if (stored.state !== "readable") throw new Error(`head not readable: ${stored.state === "unreadable" ? stored.problem : "missing"}`);
  return stored.content;
}

describe.each<[ManifestNaming, "arrow" | "json"]>([
  ["v2", "arrow"],
  ["v2", "json"],
  ["v1", "arrow"],
])("head round trip, %s names, %s codec", (naming, codec) => {
  let dir: string;
  let dataset: LanceDataset;
  let store: ObjectStore;

  beforeAll(async () => {
    dir = await makeTempDir(`lw-head-rt-${naming}-`);
    dataset = await buildLanceDataset({ dbUri: dir, naming });
    store = openStore(dataset.tableUri);
  });
  afterAll(async () => {
    dataset?.close();
    await removeDir(dir);
  });

  it("equals the manifest's state at every version", async () => {
    const kinds = new Set<string>();
    for (const written of dataset.written) {
      const result = await writeTableHead(store, { version: written.version, codec, checkpointVersion: null });
      expect(result.action).toBe(written.version === 1 ? "created" : "replaced");
      const content = await headSnapshot(store);
      const manifest = await lanceFormat.readSnapshot(store, await lanceFormat.findVersionFile(store, written.version));
      expect(comparable(content.snapshot)).toEqual(comparable(manifest));
      expect(content.tableVersion).toBe(written.version);
      expect(content.format).toBe("lance");
      const liveRows = content.snapshot.liveFiles.reduce((sum, f) => sum + f.physicalRows - f.deletedRows, 0);
      expect(liveRows).toBe(written.rowCount);
      kinds.add(written.operation);
      for (const file of manifest.referencedFiles) kinds.add(file.role);
      if (manifest.liveFiles.some((f) => f.deletionFile !== null)) kinds.add("has-deletions");
    }
    // The history really exercised what the head must carry.
    expect([...kinds]).toEqual(expect.arrayContaining(["Append", "Delete", "Overwrite", "CreateIndex", "index", "has-deletions"]));
  });

  it("carries every version since the (absent) checkpoint, built incrementally", async () => {
    const content = await headSnapshot(store);
    expect(content.recentVersions.after).toBeNull();
    expect(content.recentVersions.records.map((r) => r.version)).toEqual(dataset.written.map((w) => w.version));
    const fromManifests = await Promise.all(dataset.written.map(async (w) => (await lanceFormat.readSnapshot(store, await lanceFormat.findVersionFile(store, w.version))).record));
    expect(content.recentVersions.records).toEqual(fromManifests);
  });

  it("inlines the footers of the newest fragments, byte for byte the tails of their data files", async () => {
    const content = await headSnapshot(store);
    expect(content.footers.length).toBeGreaterThan(0);
    const newest = [...content.snapshot.liveFiles].sort((a, b) => b.fragmentId - a.fragmentId).flatMap((f) => f.paths);
    expect(content.footers.map((f) => f.path)).toEqual(newest.slice(0, content.footers.length));
    expect(content.footersOmitted).toBe(newest.length - content.footers.length);
    for (const footer of content.footers) {
      const file = await readFile(join(dataset.tableUri, ...footer.path.split("/")));
      expect(footer.fileSize).toBe(file.length);
      expect(Buffer.from(footer.bytes).equals(file.subarray(footer.offset))).toBe(true);
      expect(Buffer.from(footer.bytes.subarray(-4)).toString()).toBe("LANC");
    }
  });
});

describe("recent versions against a checkpoint boundary", () => {
  let dir: string;
  let dataset: LanceDataset;

  beforeAll(async () => {
    dir = await makeTempDir("lw-head-ckpt-");
    dataset = await buildLanceDataset({
      dbUri: dir,
      steps: [
        { op: "create", rows: 5 },
        { op: "append", rows: 5 },
        { op: "append", rows: 5 },
        { op: "append", rows: 5 },
      ],
    });
  });
  afterAll(async () => {
    dataset?.close();
    await removeDir(dir);
  });

  it("holds only versions after the checkpoint and reuses the previous head's records", async () => {
    const store = openStore(dataset.tableUri);
    await writeTableHead(store, { version: 2, checkpointVersion: 1 });
    store.stats.reset();
    const result = await writeTableHead(store, { version: 4, checkpointVersion: 1 });
    // Version 3 came from its manifest (the gap), version 2 from the previous head.
    expect(result.built?.manifestsRead).toBe(1);
    const content = await headSnapshot(store);
    expect(content.recentVersions).toMatchObject({ after: 1 });
    expect(content.recentVersions.records.map((r) => r.version)).toEqual([2, 3, 4]);
  });
});
