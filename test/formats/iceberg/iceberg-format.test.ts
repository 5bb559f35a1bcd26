/**
 * icebergFormat (the TableFormat of Iceberg) on the fixture tables: detection, versions as
 * snapshots, the current snapshot's state for the head against icebird, refs, references,
 * the removal commit, footers.
 */
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parquetMetadata } from "hyparquet";
import { afterAll, describe, expect, it } from "vitest";
import { TableFormatError } from "../../../lib/formats/errors.ts";
import type { MetadataCommitRemoval } from "../../../lib/formats/table-format.ts";
import { FILES_SECTION } from "../../../lib/formats/iceberg/live-files.ts";
import { icebergFormat, icebergVersionRecords } from "../../../lib/formats/iceberg/iceberg-format.ts";
import { PreconditionFailedError, openStore } from "../../../lib/store/index.ts";
import {
  appendSnapshot,
  CATALOG_POINTERS,
  BROKEN_FIXTURES,
  copyIcebergFixture,
  fileExists,
  fixtureFormat,
  fixturePath,
  ICEBERG_FIXTURES,
  icebirdLiveFiles,
  listFiles as listFilesOf,
  rewriteMetadata,
  snapshotsByTextPass,
  type FixtureCopy,
} from "../../support/iceberg-fixtures.ts";

const cleanup: (() => Promise<void>)[] = [];
afterAll(async () => {
  await Promise.all(cleanup.map((f) => f()));
});
async function copy(name: Parameters<typeof copyIcebergFixture>[0]): Promise<FixtureCopy> {
  const c = await copyIcebergFixture(name);
  cleanup.push(c.remove);
  return c;
}

/** The current metadata file's name as the test sees it: the hint's vN, else the highest NNNNN- name. */
async function currentMetadataName(dir: string): Promise<string> {
  try {
    const hint = (await readFile(join(dir, "metadata/version-hint.text"), "utf8")).trim();
    return `v${hint}.metadata.json`;
  } catch {
    const { readdir } = await import("node:fs/promises");
    return (await readdir(join(dir, "metadata")))
      .filter((n) => /^\d+-.*\.metadata\.json$/.test(n))
      .sort()
      .at(-1)!;
  }
}

describe("detection and commit keys", () => {
  it("detects every fixture table, and not a folder without metadata files", async () => {
    for (const name of ICEBERG_FIXTURES) expect(await icebergFormat.detect(openStore(fixturePath(name))), name).toBe(true);
    const empty = await mkdtemp(join(tmpdir(), "lw-iceberg-empty-"));
    cleanup.push(() => rm(empty, { recursive: true, force: true }));
    await mkdir(join(empty, "metadata"));
    await writeFile(join(empty, "metadata/snap-1-1-x.avro"), "x");
    expect(await icebergFormat.detect(openStore(empty))).toBe(false);
    expect(await icebergFormat.latestVersionFile(openStore(empty))).toBeNull();
    expect(await icebergFormat.listVersionFiles(openStore(empty))).toEqual([]);
  });

  it("finds the table root of a metadata file key, and nothing for other keys", () => {
    expect(icebergFormat.tableRootOfCommitKey("wh/db/t/metadata/v3.metadata.json")).toBe("wh/db/t");
    expect(icebergFormat.tableRootOfCommitKey("wh/t/metadata/00004-1f2e3d4c-0000-4000-8000-000000000000.gz.metadata.json")).toBe("wh/t");
    expect(icebergFormat.tableRootOfCommitKey("metadata/v1.metadata.json")).toBe("");
    expect(icebergFormat.tableRootOfCommitKey("wh/t/metadata/snap-1-1-x.avro")).toBeNull();
    expect(icebergFormat.tableRootOfCommitKey("wh/t/metadata/5e0c3f43-uuid.metadata.json")).toBeNull();
    expect(icebergFormat.parseVersionKey("metadata/v3.metadata.json")).toBeNull();
    expect(icebergFormat.classify("metadata/snap-1-1-x.avro")).toBe("metadata");
    expect(icebergFormat.classify("data/a/b.parquet")).toBe("data");
    expect(icebergFormat.classify("metadata/notes.txt")).toBeNull();
    expect(icebergFormat.classify("metadata/8d6f0e4e-0000-4000-8000-000000000000.metadata.json")).toBe("metadata");
    expect(icebergFormat.isBookkeepingFile!("data/.x.parquet.crc")).toBe(true);
  });
});

describe("versions are the current metadata's snapshots", () => {
  for (const name of ICEBERG_FIXTURES) {
    it(`${name}: one version file per snapshot, latest = current snapshot, records from the metadata alone`, async () => {
      const dir = fixturePath(name);
      const store = openStore(dir);
      // Athena's catalog-named table is read at its catalog's pointer.
      const format = fixtureFormat(name);
      const expected = await snapshotsByTextPass(join(dir, "metadata", await currentMetadataName(dir)));
      const files = await format.listVersionFiles(store);
      expect(files.map((f) => f.id).sort()).toEqual(expected.map((s) => s.id).sort());
      expect(new Set(files.map((f) => f.key)).size).toBe(1);
      const currentText = (await readFile(join(dir, files[0]!.key), "utf8")).replace(/("current-snapshot-id"\s*:\s*)(-?\d+)/, '$1"$2"');
      const current = (JSON.parse(currentText) as { "current-snapshot-id": string })["current-snapshot-id"];
      expect((await format.latestVersionFile(store))?.id).toBe(current);
      const records = await icebergVersionRecords(store, CATALOG_POINTERS[name]);
      expect(records.map((r) => r.version_id)).toEqual(files.map((f) => f.id));
      expect(records.map((r) => r.version)).toEqual(files.map((f) => f.version));
      for (const r of records) {
        const s = expected.find((e) => e.id === r.version_id)!;
        expect([r.parent_ids, r.timestamp_millis]).toEqual([s.parent === null ? [] : [s.parent], s.timestampMs]);
      }
      expect(await format.findVersionFile(store, files.at(-1)!.version)).toEqual(files.at(-1));
    });
  }
});

describe("the current snapshot's state for the head", () => {
  for (const name of ICEBERG_FIXTURES.filter((n) => !BROKEN_FIXTURES.includes(n))) {
    it(`${name}: live files and the files section equal icebird's; raw is the metadata file; every reference exists`, async () => {
      const dir = fixturePath(name);
      const store = openStore(dir);
      const format = fixtureFormat(name);
      const latest = (await format.latestVersionFile(store))!;
      const snapshot = await format.readSnapshot(store, latest);
      const theirs = await icebirdLiveFiles(dir, await currentMetadataName(dir));
      expect(snapshot.liveFiles.map((f) => f.paths[0]).sort()).toEqual(theirs.filter((f) => f.content === 0).map((f) => f.key));
      expect(snapshot.liveFiles.map((f) => f.physicalRows).reduce((a, b) => a + b, 0)).toBe(Number(theirs.filter((f) => f.content === 0).reduce((a, f) => a + f.recordCount, 0n)));
      const section = snapshot.sections!.find((s) => s.name === FILES_SECTION)!;
      const rows = section.columns.path!.map((path, i) => ({
        key: path,
        content: section.columns.content![i],
        recordCount: BigInt(section.columns.record_count![i] as number),
        sizeInBytes: BigInt(section.columns.file_size_in_bytes![i] as number),
      }));
      expect(rows.sort((a, b) => (a.key! < b.key! ? -1 : 1))).toEqual(theirs);
      expect(Buffer.from(snapshot.raw).equals(await readFile(join(dir, latest.key)))).toBe(true);
      expect(snapshot.record.version_id).toBe(latest.id);
      expect(snapshot.unresolvedReferences).toEqual([]);
      expect(snapshot.referencedFiles.map((r) => r.path)).toContain(latest.key);
      for (const ref of snapshot.referencedFiles) expect(await fileExists(dir, ref.path), ref.path).toBe(true);
      expect(snapshot.schema.length).toBeGreaterThan(0);
      // Bounds and null counts by field id, where the writer recorded them.
      const nulls = section.columns.null_value_counts!.filter((v) => v !== null);
      if (nulls.length > 0) expect(Object.keys(JSON.parse(nulls[0] as string) as object).every((k) => /^\d+$/.test(k))).toBe(true);
    });
  }

  it("reads a data file's Parquet footer, which hyparquet decodes to the manifest's row count", async () => {
    const dir = fixturePath("spark-bunnies");
    const store = openStore(dir);
    const snapshot = await icebergFormat.readSnapshot(store, (await icebergFormat.latestVersionFile(store))!);
    const file = snapshot.liveFiles[0]!;
    const footer = await icebergFormat.readDataFileFooter!(store, file.paths[0]!);
    const bytes = footer.bytes;
    const meta = parquetMetadata(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer);
    expect(Number(meta.num_rows)).toBe(file.physicalRows);
    expect(footer.offset + bytes.length).toBe(footer.fileSize);
  });

  it("attaches a deletion vector (v3 fields) to the data file it names; icebird reads the same delete entry", async () => {
    const c = await copy("spark-bunnies");
    const bunnies = "s3a://hyperparam-iceberg/spark/bunnies";
    const target = "data/00000-1-6cd7611f-0ceb-4cf3-8b8e-8c856356df3e-00001.parquet";
    await copyFile(join(c.dir, target), join(c.dir, "data/appended-1.parquet"));
    await writeFile(join(c.dir, "data/dv-1.puffin"), Buffer.alloc(64));
    await appendSnapshot(c.dir, {
      files: [{ path: `${bunnies}/data/appended-1.parquet`, recordCount: 20, sizeInBytes: 3560 }],
      deletionVectors: [
        { path: `${bunnies}/data/dv-1.puffin`, referencedDataFile: `${bunnies}/${target}`, cardinality: 2, sizeInBytes: 64, contentOffset: 4, contentSizeInBytes: 40 },
      ],
    });
    const store = openStore(c.dir);
    const snapshot = await icebergFormat.readSnapshot(store, (await icebergFormat.latestVersionFile(store))!);
    const live = snapshot.liveFiles.find((f) => f.paths[0] === target)!;
    expect([live.deletionFile, live.deletedRows]).toEqual(["data/dv-1.puffin", 2]);
    expect(snapshot.liveFiles.find((f) => f.paths[0] === "data/appended-1.parquet")!.deletionFile).toBeNull();
    const section = snapshot.sections!.find((s) => s.name === FILES_SECTION)!;
    const i = section.columns.path!.indexOf("data/dv-1.puffin");
    expect([
      section.columns.content![i],
      section.columns.file_format![i],
      section.columns.referenced_data_file![i],
      section.columns.content_offset![i],
      section.columns.content_size_in_bytes![i],
    ]).toEqual([1, "PUFFIN", `${bunnies}/${target}`, 4, 40]);
    expect(snapshot.referencedFiles).toContainEqual({ path: "data/dv-1.puffin", role: "delete", size: 64 });
    const theirs = await icebirdLiveFiles(c.dir, await currentMetadataName(c.dir));
    expect(theirs.filter((f) => f.content === 1).map((f) => f.key)).toContain("data/dv-1.puffin");
    expect(section.columns.path!.slice().sort()).toEqual(theirs.map((f) => f.key));
  });

  it("refuses the snapshot whose manifest list is missing, in one line", async () => {
    const store = openStore(fixturePath("equality_deletes-mytable"));
    const files = await icebergFormat.listVersionFiles(store);
    const errors: string[] = [];
    for (const f of files) await icebergFormat.readSnapshot(store, f).catch((e: Error) => errors.push(e.message));
    expect(errors).toHaveLength(1);
    expect(errors[0]!.split("\n")).toHaveLength(1);
    expect(errors[0]).toMatch(/manifest list of snapshot \d+ .* does not exist/);
  });
});

describe("refs, retention and removal", () => {
  const expiry = icebergFormat.removal as MetadataCommitRemoval;
  it("removes versions by a metadata commit", () => {
    expect(icebergFormat.removal.kind).toBe("metadata-commit");
  });

  it("the table's history.expire.* settings are the spec's per-ref snapshot retention (removal.rules), not lakewarden's age and count policy", async () => {
    expect(icebergFormat.declaredRetention({ "history.expire.max-snapshot-age-ms": "1" }, "t")).toEqual({ sources: {} });
    const c = await copy("spark-bunnies");
    await rewriteMetadata(c.dir, (json) => {
      json.properties = { ...(json.properties as object), "history.expire.min-snapshots-to-keep": "2" } as never;
    });
    const store = openStore(c.dir);
    const files = await icebergFormat.listVersionFiles(store);
    const rules = await expiry.rules(store, files.at(-1)!, new Date());
    expect(rules.keep.get(3)).toEqual({ keptBy: "latest", reason: 'head of branch "main"' });
    expect(rules.keep.get(2)).toEqual({ keptBy: "retention", reason: 'on branch "main": among its newest 2 (min-snapshots-to-keep 2 (history.expire.min-snapshots-to-keep))' });
    expect([...rules.due.keys()]).toEqual([1]);
    expect(rules.due.get(1)).toMatch(/^expires by the table's snapshot retention: on branch "main", older than its max-snapshot-age-ms 5d \(Iceberg default\)/);
    expect(rules.notes).toEqual([]);
  });

  it("the expiry commit refuses to expire a snapshot the table's retention keeps, and drops the refs it expires", async () => {
    const c = await copy("spark-bunnies");
    await rewriteMetadata(c.dir, (json) => {
      json.refs = { ...(json.refs as object), old: { "snapshot-id": 469881615898633426n, type: "tag", "max-ref-age-ms": 1 } } as never;
      json.properties = { ...(json.properties as object), "history.expire.min-snapshots-to-keep": "2" } as never;
    });
    const store = openStore(c.dir);
    const files = await icebergFormat.listVersionFiles(store);
    const before = await listFilesOf(c.dir);
    await expect(expiry.commit(store, { remove: [2], base: files.at(-1)!, now: new Date() })).rejects.toThrow(
      /cannot expire snapshot 469881615898633426: the table's snapshot retention keeps it/,
    );
    expect(await listFilesOf(c.dir)).toEqual(before);
    const { key } = await expiry.commit(store, { remove: [1], base: files.at(-1)!, now: new Date() });
    const text = await readFile(join(c.dir, key), "utf8");
    expect(text).not.toContain('"old"');
    expect((await snapshotsByTextPass(join(c.dir, key))).map((s) => s.id)).toEqual(["469881615898633426", "2701171901096418979"]);
  });

  it("the expiry commit writes the next metadata without the removed snapshots, create-only on the base it planned on", async () => {
    const c = await copy("spark-bunnies");
    const store = openStore(c.dir);
    const files = await icebergFormat.listVersionFiles(store);
    const base = files[0]!;
    await expect(expiry.commit(store, { remove: [files.at(-1)!.version], base, now: new Date() })).rejects.toThrow(TableFormatError);
    const { key } = await expiry.commit(store, { remove: [files[0]!.version], base, now: new Date() });
    expect(key).toBe("metadata/v6.metadata.json");
    const after = await snapshotsByTextPass(join(c.dir, key));
    expect(after.map((s) => s.id)).toEqual(files.slice(1).map((f) => f.id));
    expect((await icebergFormat.listVersionFiles(store)).map((f) => f.id)).toEqual(files.slice(1).map((f) => f.id));
    // The plan's base is no longer current: refused.
    await expect(expiry.commit(store, { remove: [files[1]!.version], base, now: new Date() })).rejects.toThrow(PreconditionFailedError);
    expect(await fileExists(c.dir, "metadata/v7.metadata.json")).toBe(false);
    // Nothing but the commit: the files of the removed snapshot are still there for the pipeline to delete.
    expect(await fileExists(c.dir, "data/00000-1-9acc37f2-90ae-42f5-915c-a21c3cb99690-00001.parquet")).toBe(true);
  });
});
