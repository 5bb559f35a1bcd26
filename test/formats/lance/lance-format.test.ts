/**
 * lanceFormat (the TableFormat of Lance) on real LanceDB tables and on hand-made
 * `_versions/` folders for the naming corner cases.
 */
import { readFile, readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CorruptFileError, NotATableError } from "../../../lib/formats/errors.ts";
import { detectFormat, formatByName } from "../../../lib/formats/index.ts";
import { lanceFormat } from "../../../lib/formats/lance/lance-format.ts";
import { versionFileName } from "../../../lib/formats/lance/version-names.ts";
import type { FileReference } from "../../../lib/formats/table-format.ts";
import { NotFoundError, openStore, type ObjectStore } from "../../../lib/store/index.ts";
import { buildLanceDataset, makeTempDir, removeDir, type LanceDataset } from "../../support/lance-datasets.ts";

let dir: string;
let v2: LanceDataset;
let v1: LanceDataset;
const scratchDirs: string[] = [];

beforeAll(async () => {
  dir = await makeTempDir("lw-lance-format-");
  v2 = await buildLanceDataset({ dbUri: join(dir, "v2"), naming: "v2" });
  v1 = await buildLanceDataset({
    dbUri: join(dir, "v1"),
    naming: "v1",
    steps: [
      { op: "create", rows: 10 },
      { op: "append", rows: 10 },
      { op: "delete", where: "id = 4" },
      { op: "tag", name: "after-delete" },
    ],
  });
});
afterAll(async () => {
  v2?.close();
  v1?.close();
  await removeDir(dir);
  await Promise.all(scratchDirs.map(removeDir));
});

/** Every file under `root/sub`, relative to `root`, with "/" separators. */
async function filesUnder(root: string, sub: string): Promise<string[]> {
  const entries = await readdir(join(root, sub), { recursive: true, withFileTypes: true }).catch(() => []);
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) =>
      join(entry.parentPath, entry.name)
        .slice(root.length + 1)
        .split("\\")
        .join("/"),
    )
    .sort();
}

/** A scratch table folder holding empty objects at these keys. */
async function folderWith(keys: string[]): Promise<ObjectStore> {
  const scratch = await makeTempDir("lw-versions-folder-");
  scratchDirs.push(scratch);
  const store = openStore(scratch);
  for (const key of keys) await store.put(key, new Uint8Array([1]));
  return store;
}

const v2Key = (version: number) => `_versions/${versionFileName(version, "v2")}`;
const v1Key = (version: number) => `_versions/${versionFileName(version, "v1")}`;

describe("listing version files", () => {
  it("lists a V2 table's versions ascending, with the listing's sizes", async () => {
    const files = await lanceFormat.listVersionFiles(openStore(v2.tableUri));
    expect(files.map((f) => f.version)).toEqual(v2.written.map((w) => w.version));
    for (const file of files) {
      expect(file.key).toBe(v2Key(file.version));
      expect(file.size).toBe((await stat(join(v2.tableUri, file.key))).size);
      expect(file.etag).not.toBe("");
    }
  });

  it("lists a V1 table's versions ascending", async () => {
    const files = await lanceFormat.listVersionFiles(openStore(v1.tableUri));
    expect(files.map((f) => [f.version, f.key])).toEqual(v1.written.map((w) => [w.version, v1Key(w.version)]));
  });

  it("finds the latest V2 version with a single LIST", async () => {
    const store = openStore(v2.tableUri);
    const latest = await lanceFormat.latestVersionFile(store);
    expect(latest?.version).toBe(v2.written.at(-1)!.version);
    expect(store.stats.snapshot()).toEqual({ get: 0, head: 0, list: 1, put: 0, delete: 0 });
  });

  it("finds the latest V1 version by listing everything", async () => {
    const store = openStore(v1.tableUri);
    const latest = await lanceFormat.latestVersionFile(store);
    expect(latest?.version).toBe(v1.written.at(-1)!.version);
    expect(latest?.key).toBe(v1Key(latest!.version));
  });

  it("takes the max over both schemes in a mixed folder listed V1-first", async () => {
    // Listing order: 1.manifest, V2(4), V2(3), 2.manifest.
    const store = await folderWith([v1Key(1), v1Key(2), v2Key(3), v2Key(4)]);
    expect((await lanceFormat.latestVersionFile(store))?.key).toBe(v2Key(4));
    expect((await lanceFormat.listVersionFiles(store)).map((f) => f.key)).toEqual([v1Key(1), v1Key(2), v2Key(3), v2Key(4)]);
  });

  it("lists a version present under both names once, under its V2 name", async () => {
    const store = await folderWith([v1Key(1), v2Key(1), v1Key(2)]);
    expect((await lanceFormat.listVersionFiles(store)).map((f) => f.key)).toEqual([v2Key(1), v1Key(2)]);
  });

  it("trusts a first-listed V2 name, as Lance does", async () => {
    // A half-migrated folder whose newest version still has its V1 name.
    const store = await folderWith([v2Key(3), v2Key(4), v1Key(5)]);
    expect((await lanceFormat.latestVersionFile(store))?.version).toBe(4);
    expect((await lanceFormat.listVersionFiles(store)).at(-1)?.version).toBe(5);
  });

  it("ignores temp, staging, detached and hint files", async () => {
    const junk = [
      "_versions/.tmp_7.manifest_1234",
      "_versions/7.manifest-0b1c7f5e-7d43-4bd0-9a3f-b0b0d1a0b4a2",
      "_versions/d9223372036854775815.manifest",
      "_versions/latest_version_hint.json",
    ];
    const onlyJunk = await folderWith(junk);
    expect(await lanceFormat.latestVersionFile(onlyJunk)).toBeNull();
    expect(await lanceFormat.listVersionFiles(onlyJunk)).toEqual([]);
    const withVersions = await folderWith([...junk, v2Key(6), v2Key(5)]);
    expect((await lanceFormat.latestVersionFile(withVersions))?.version).toBe(6);
  });

  it("finds an empty or missing folder empty", async () => {
    const store = openStore(join(dir, "nothing-here"));
    expect(await lanceFormat.latestVersionFile(store)).toBeNull();
    expect(await lanceFormat.listVersionFiles(store)).toEqual([]);
  });
});

describe("findVersionFile", () => {
  it("resolves a V2 version with one HEAD", async () => {
    const store = openStore(v2.tableUri);
    const file = await lanceFormat.findVersionFile(store, 3);
    expect(file).toMatchObject({ version: 3, key: v2Key(3) });
    expect(store.stats.snapshot().head).toBe(1);
  });

  it("falls back to the V1 name", async () => {
    const store = openStore(v1.tableUri);
    expect(await lanceFormat.findVersionFile(store, 2)).toMatchObject({ version: 2, key: v1Key(2) });
  });

  it("throws NotFoundError for a version that does not exist", async () => {
    await expect(lanceFormat.findVersionFile(openStore(v2.tableUri), 999)).rejects.toThrow(NotFoundError);
  });
});

describe("classify", () => {
  it.each<[string, string | null]>([
    [v2Key(1), "commit"],
    [v1Key(12), "commit"],
    ["_versions/latest_version_hint.json", null],
    ["_versions/.tmp_x", null],
    ["_versions/d9223372036854775815.manifest", null],
    ["data/0110abc.lance", "data"],
    ["data/stem/0.blob", null],
    ["_deletions/0-2-5336894699785221688.arrow", "delete"],
    ["_deletions/3-4-17.bin", "delete"],
    ["_transactions/3-805549b9-746f-4f76-a6fd-57939f94b9bd.txn", "transaction"],
    ["_indices/1de0e0b3-022d-40de-b762-9627861314fc/page_data.lance", "index"],
    ["_refs/tags/first.json", null],
    ["_lakewarden/head", null],
    ["_latest.manifest", null],
  ])("%s → %s", (key, kind) => {
    expect(lanceFormat.classify(key)).toBe(kind);
  });

  it("names the folders Lance manages", () => {
    expect([...lanceFormat.managedPrefixes].sort()).toEqual(["_deletions/", "_indices/", "_transactions/", "_versions/", "data/"]);
  });
});

describe("readRefs", () => {
  it("reads LanceDB's tags", async () => {
    const refs = await lanceFormat.readRefs(openStore(v2.tableUri));
    expect(refs.tags).toEqual(
      Object.entries(v2.tags)
        .map(([name, version]) => ({ name, version, branch: null }))
        .sort((a, b) => a.name.localeCompare(b.name)),
    );
    expect(refs.branches).toEqual([]);
  });

  it("reads tags and branches as Lance writes them", async () => {
    const store = await folderWith([]);
    const json = (value: unknown) => new TextEncoder().encode(JSON.stringify(value, null, 2));
    await store.put("_refs/tags/old.json", json({ version: 2, manifestSize: 400 }));
    await store.put("_refs/tags/on-branch.json", json({ branch: "dev/x", version: 5, manifestSize: 400 }));
    await store.put("_refs/branches/dev%2Fx.json", json({ parentBranch: null, parentVersion: 3, createAt: 1, manifestSize: 9 }));
    expect(await lanceFormat.readRefs(store)).toEqual({
      tags: [
        { name: "old", version: 2, branch: null },
        { name: "on-branch", version: 5, branch: "dev/x" },
      ],
      branches: [{ name: "dev/x", parentBranch: null, parentVersion: 3 }],
    });
  });

  it.each([
    ["{ not json", /ref file is not valid JSON/],
    ['["version", 3]', /ref file is not a JSON object/],
    ['{"version": "3"}', /"version" must be a non-negative integer, got "3"/],
    ['{"version": 3, "branch": 7}', /"branch" must be a string or null, got 7/],
  ])("refuses a malformed tag file %s", async (content, problem) => {
    const store = await folderWith([]);
    await store.put("_refs/tags/bad.json", new TextEncoder().encode(content));
    const error = await lanceFormat.readRefs(store).then(
      () => null,
      (e: unknown) => e as Error,
    );
    expect(error).toBeInstanceOf(CorruptFileError);
    expect(error!.message.startsWith(`${store.uri}/_refs/tags/bad.json: `)).toBe(true);
    expect(error!.message).toMatch(problem);
  });
});

describe("readSnapshot", () => {
  it("references exactly the files LanceDB wrote, across all versions", async () => {
    const store = openStore(v2.tableUri);
    const files = await lanceFormat.listVersionFiles(store);
    const referenced: FileReference[] = [];
    for (const file of files) referenced.push(...(await lanceFormat.readSnapshot(store, file)).referencedFiles);
    const pathsOf = (role: FileReference["role"]) => [...new Set(referenced.filter((f) => f.role === role).map((f) => f.path))].sort();

    // No cleanup ran, so every file in these folders belongs to some version.
    expect(pathsOf("data")).toEqual(await filesUnder(v2.tableUri, "data"));
    expect(pathsOf("delete")).toEqual(await filesUnder(v2.tableUri, "_deletions"));
    expect(pathsOf("transaction")).toEqual(await filesUnder(v2.tableUri, "_transactions"));
    // Each index as its folder, and each file in it as the manifest lists it (with its size).
    const indexFiles = await filesUnder(v2.tableUri, "_indices");
    const indexDirs = [...new Set(indexFiles.map((p) => p.split("/").slice(0, 2).join("/") + "/"))];
    expect(pathsOf("index")).toEqual([...indexDirs, ...indexFiles].sort());
    for (const file of referenced.filter((f) => f.role === "index" && !f.path.endsWith("/"))) {
      expect(file.size).toBe((await stat(join(v2.tableUri, file.path))).size);
    }
    expect(pathsOf("delete").length).toBeGreaterThan(0);
    expect(pathsOf("index").length).toBeGreaterThan(0);
    for (const file of referenced.filter((f) => f.role === "data")) {
      expect(file.size).toBe((await stat(join(v2.tableUri, file.path))).size);
    }
  });

  it("describes the version: record, live files, schema, config and raw bytes", async () => {
    const store = openStore(v2.tableUri);
    const latest = (await lanceFormat.latestVersionFile(store))!;
    const snapshot = await lanceFormat.readSnapshot(store, latest);
    const record = snapshot.record;
    expect(record.version).toBe(latest.version);
    expect(snapshot.versionFile).toEqual(latest);
    expect(snapshot.raw).toEqual(new Uint8Array(await readFile(join(v2.tableUri, latest.key))));
    expect(snapshot.schema.map((f) => [f.name, f.parentId, f.nullable])).toEqual([
      ["id", -1, false],
      ["name", -1, true],
      ["score", -1, true],
    ]);
    expect(typeof snapshot.config).toBe("object");

    const live = snapshot.liveFiles;
    expect(live.length).toBe(record.total_fragments);
    expect(live.reduce((n, f) => n + f.paths.length, 0)).toBe(record.total_data_files);
    expect(live.reduce((n, f) => n + f.size, 0)).toBe(record.total_files_size);
    expect(live.reduce((n, f) => n + f.physicalRows - f.deletedRows, 0)).toBe(record.total_rows);
    expect(live.filter((f) => f.deletionFile !== null).length).toBe(record.total_deletion_files);
    const referenced = new Set(snapshot.referencedFiles.map((f) => f.path));
    for (const file of live) {
      for (const path of file.paths) expect(referenced.has(path)).toBe(true);
      if (file.deletionFile) expect(referenced.has(file.deletionFile)).toBe(true);
    }
  });
});

describe("format registry", () => {
  it("detects a Lance table", async () => {
    expect(await detectFormat(openStore(v1.tableUri))).toBe(lanceFormat);
    expect(formatByName("lance")).toBe(lanceFormat);
  });

  it("refuses a location that holds no table", async () => {
    const store = openStore(dir);
    const error = await detectFormat(store).then(
      () => null,
      (e: unknown) => e as Error,
    );
    expect(error).toBeInstanceOf(NotATableError);
    expect(error!.message).toBe(`${store.uri}: not a table: no version files under _versions/ (lance), metadata/ (iceberg), _delta_log/ (delta)`);
  });

  it("names the known formats for an unknown name", () => {
    expect(() => formatByName("orc")).toThrow('unknown table format "orc" (known: lance, iceberg, delta)');
  });
});
