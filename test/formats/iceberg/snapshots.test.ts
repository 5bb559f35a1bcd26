/**
 * Snapshots, references and live files on every fixture table, against independent readers:
 * ids, parents and timestamps against a text pre-pass parse of the metadata; the current
 * snapshot's live files against icebird (with every file checked on disk); the two broken
 * fixtures refused with one line.
 */
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CorruptFileError, UnsupportedFeatureError } from "../../../lib/formats/errors.ts";
import { reachableFiles } from "../../../lib/formats/iceberg/reachable.ts";
import { icebergRefs } from "../../../lib/formats/iceberg/refs.ts";
import { IcebergFileReader, readSnapshotFiles } from "../../../lib/formats/iceberg/snapshot-files.ts";
import { openIcebergTable } from "../../../lib/formats/iceberg/table-state.ts";
import { icebergPathResolver } from "../../../lib/formats/iceberg/table-paths.ts";
import { snapshotRecords } from "../../../lib/formats/iceberg/versions.ts";
import { openStore } from "../../../lib/store/index.ts";
import {
  appendSnapshot,
  BROKEN_FIXTURES,
  copyIcebergFixture,
  fileExists,
  fixtureOpenOptions,
  fixturePath,
  ICEBERG_FIXTURES,
  icebirdLiveFiles,
  rewriteMetadata,
  snapshotsByTextPass,
  type FixtureCopy,
} from "../../support/iceberg-fixtures.ts";

const copies: FixtureCopy[] = [];
afterAll(async () => {
  await Promise.all(copies.map((c) => c.remove()));
});

describe("versions: one record per snapshot", () => {
  for (const name of ICEBERG_FIXTURES) {
    it(`${name}: ids, parents, timestamps and operations as the metadata holds them`, async () => {
      const store = openStore(fixturePath(name));
      // Athena's catalog-named table is read at its catalog's pointer.
      const table = await openIcebergTable(store, fixtureOpenOptions(name));
      const records = snapshotRecords(table.read.metadata, store.uriOf(table.metadataKey));
      const expected = await snapshotsByTextPass(join(fixturePath(name), table.metadataKey));
      expect(expected.length).toBeGreaterThan(0);
      const byId = new Map(records.map((r) => [r.version_id, r]));
      expect([...byId.keys()].sort()).toEqual(expected.map((s) => s.id).sort());
      for (const s of expected) {
        const r = byId.get(s.id)!;
        expect(r.parent_ids).toEqual(s.parent === null ? [] : [s.parent]);
        expect(r.timestamp_millis).toBe(s.timestampMs);
        expect(r.operation_type).toBe(s.operation);
        const total = s.summary["total-data-files"];
        expect(r.total_data_files).toBe(total === undefined ? null : Number(total));
        expect(r.transaction_properties).toEqual(s.summary);
      }
      // Ascending, distinct, safe versions; a child always after its parent.
      const versions = records.map((r) => r.version);
      expect(versions).toEqual([...versions].sort((a, b) => a - b));
      expect(new Set(versions).size).toBe(versions.length);
      for (const r of records) {
        expect(Number.isSafeInteger(r.version)).toBe(true);
        const parent = r.parent_ids[0];
        if (parent !== undefined && byId.has(parent)) expect(byId.get(parent)!.version).toBeLessThan(r.version);
      }
    });
  }

  it("keeps an id above 2^53 exact from metadata to record to refs", async () => {
    const c = await copyIcebergFixture("spark-bunnies");
    copies.push(c);
    const id = 9158179788527662767n;
    await appendSnapshot(c.dir, {
      snapshotId: id,
      files: [{ path: "s3a://hyperparam-iceberg/spark/bunnies/data/00000-1-6cd7611f-0ceb-4cf3-8b8e-8c856356df3e-00001.parquet", recordCount: 20, sizeInBytes: 3560 }],
      refs: { "tag-big": { "snapshot-id": id, type: "tag" } },
    });
    const table = await openIcebergTable(openStore(c.dir));
    const records = snapshotRecords(table.read.metadata, "x");
    expect(records.at(-1)!.version_id).toBe("9158179788527662767");
    expect(String(Number(id))).not.toBe("9158179788527662767");
    const refs = icebergRefs(table.read.metadata, table.ordered);
    expect(refs.tags).toEqual([expect.objectContaining({ name: "tag-big", versionId: "9158179788527662767", branch: null })]);
    const text = await snapshotsByTextPass(join(c.dir, table.metadataKey));
    expect(text.at(-1)!.id).toBe("9158179788527662767");
  });
});

describe("refs", () => {
  it("tags and branches with their retention; main is the table's lineage, not a listed branch", async () => {
    const c = await copyIcebergFixture("spark-bunnies");
    copies.push(c);
    await rewriteMetadata(c.dir, (json) => {
      json.refs = {
        ...(json.refs as object),
        "audit-tag": { "snapshot-id": 7505300640432048841n, type: "tag", "max-ref-age-ms": 86400000 },
        dev: { "snapshot-id": 469881615898633426n, type: "branch", "min-snapshots-to-keep": 2, "max-snapshot-age-ms": 3600000 },
      } as never;
    });
    const table = await openIcebergTable(openStore(c.dir));
    const refs = icebergRefs(table.read.metadata, table.ordered);
    expect(refs.tags).toEqual([
      { name: "audit-tag", version: 1, versionId: "7505300640432048841", branch: null, retention: { maxRefAgeMs: 86400000, maxSnapshotAgeMs: null, minSnapshotsToKeep: null } },
    ]);
    expect(refs.branches).toEqual([
      {
        name: "dev",
        parentBranch: null,
        parentVersion: 2,
        parentVersionId: "469881615898633426",
        retention: { maxRefAgeMs: null, maxSnapshotAgeMs: 3600000, minSnapshotsToKeep: 2 },
      },
    ]);
  });
});

describe("live files of the current snapshot equal icebird's", () => {
  for (const name of ICEBERG_FIXTURES.filter((n) => !BROKEN_FIXTURES.includes(n))) {
    it(name, async () => {
      const dir = fixturePath(name);
      const store = openStore(dir);
      const table = await openIcebergTable(store, fixtureOpenOptions(name));
      const { metadata } = table.read;
      const current = metadata.snapshots.find((s) => s.id === metadata.currentSnapshotId)!;
      const files = await readSnapshotFiles(new IcebergFileReader(store), metadata, current, table.resolve, store.uriOf(table.metadataKey));
      const keyOf = (path: string): string | null => {
        const resolved = table.resolve(path);
        return resolved.kind === "key" ? resolved.key : null;
      };
      const ours = files.manifests
        .flatMap((m) => m.live)
        .map((l) => ({ key: keyOf(l.path)!, content: l.content, recordCount: l.recordCount, sizeInBytes: l.fileSizeInBytes }))
        .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
      const theirs = await icebirdLiveFiles(dir, table.metadataKey.slice("metadata/".length));
      expect(theirs.length).toBeGreaterThan(0);
      expect(ours).toEqual(theirs);
      for (const f of ours) expect(await fileExists(dir, f.key), f.key).toBe(true);
      expect(files.unresolved).toEqual([]);
    });
  }
});

describe("broken tables are refused with one line", () => {
  it("equality_deletes-mytable: a referenced manifest list is missing", async () => {
    const store = openStore(fixturePath("equality_deletes-mytable"));
    const table = await openIcebergTable(store);
    const error = await reachableFiles(new IcebergFileReader(store), table.read.metadata, table.metadataKey, table.resolve, true).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CorruptFileError);
    const message = (error as Error).message;
    expect(message.split("\n")).toHaveLength(1);
    const missing = table.read.metadata.snapshots.filter((s) => s.manifestList !== null);
    const absent: string[] = [];
    for (const s of missing) if (!(await fileExists(fixturePath("equality_deletes-mytable"), s.manifestList!.slice(table.read.metadata.location.length + 1)))) absent.push(s.id);
    expect(absent).toHaveLength(1);
    expect(message).toContain(`snapshot ${absent[0]}`);
    expect(message).toMatch(/does not exist/);
  });

  it("big_query_error: paths that are not under the table's gs:// location", async () => {
    const store = openStore(fixturePath("big_query_error"));
    const table = await openIcebergTable(store);
    expect(table.read.metadata.location.startsWith("gs://")).toBe(true);
    const error = await reachableFiles(new IcebergFileReader(store), table.read.metadata, table.metadataKey, table.resolve, true).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnsupportedFeatureError);
    expect((error as Error).message.split("\n")).toHaveLength(1);
    expect((error as Error).message).toMatch(/manifest list .* cannot be resolved/);
  });
});

describe("paths", () => {
  const resolve = icebergPathResolver("s3a://bucket/wh/t", "file:///tmp/copy/t");
  it("resolves the location's URIs (s3a as s3) to keys, and other places to outside or unresolvable", () => {
    expect(resolve("s3a://bucket/wh/t/data/a.parquet")).toEqual({ kind: "key", key: "data/a.parquet" });
    expect(resolve("s3://bucket/wh/t/data/a.parquet")).toEqual({ kind: "key", key: "data/a.parquet" });
    expect(resolve("file:///tmp/copy/t/metadata/m.avro")).toEqual({ kind: "key", key: "metadata/m.avro" });
    expect(resolve("s3://other-bucket/elsewhere/a.parquet").kind).toBe("outside");
    expect(resolve("gs://bucket/wh/t/data/a.parquet")).toMatchObject({ kind: "unresolvable", reason: expect.stringMatching(/prefix mismatch/) });
    expect(resolve("s3://other-bucket/wh/t/data/a.parquet")).toMatchObject({ kind: "unresolvable", reason: expect.stringMatching(/prefix mismatch/) });
    expect(resolve("data/a.parquet")).toMatchObject({ kind: "unresolvable", reason: expect.stringMatching(/relative path/) });
    expect(resolve("s3://bucket/wh/t/data/../../x").kind).toBe("unresolvable");
  });
  it("resolves paths under a relative location onto the store", () => {
    const rel = icebergPathResolver("data/persistent/t", "file:///tmp/copy/t");
    expect(rel("data/persistent/t/data/x.parquet")).toEqual({ kind: "key", key: "data/x.parquet" });
    expect(rel("data/other/x.parquet").kind).toBe("unresolvable");
  });
});
