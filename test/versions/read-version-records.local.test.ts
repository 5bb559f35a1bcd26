/**
 * readVersionRecords against LanceDB's own listVersions() on real local datasets, in both
 * version-file naming schemes.
 */
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lanceFormat } from "../../lib/formats/lance/lance-format.ts";
import { NotATableError } from "../../lib/formats/errors.ts";
import { openStore } from "../../lib/store/index.ts";
import { readVersionRecords } from "../../lib/versions/read-version-records.ts";
import { buildLanceDataset, makeTempDir, removeDir, type LanceDataset, type ManifestNaming } from "../support/lance-datasets.ts";
import { expectRecordsMatchLanceDb } from "./lancedb-comparison.ts";

describe.each<ManifestNaming>(["v2", "v1"])("readVersionRecords on a local %s table", (naming) => {
  let dir: string;
  let dataset: LanceDataset;

  beforeAll(async () => {
    dir = await makeTempDir(`lw-versions-${naming}-`);
    dataset = await buildLanceDataset({ dbUri: dir, naming });
  });
  afterAll(async () => {
    dataset?.close();
    await removeDir(dir);
  });

  it("writes the naming scheme it was asked for", async () => {
    const names = (await readdir(join(dataset.tableUri, "_versions"))).filter((n) => n.endsWith(".manifest"));
    const pattern = naming === "v2" ? /^\d{20}\.manifest$/ : /^\d{1,19}\.manifest$/;
    expect(names.length).toBe(dataset.written.length);
    for (const name of names) expect(name).toMatch(pattern);
  });

  it("matches LanceDB's listVersions() field by field, tags included", async () => {
    const records = await readVersionRecords(openStore(dataset.tableUri), lanceFormat);
    await expectRecordsMatchLanceDb(records, dataset.table);
    expect(records.filter((r) => r.is_tagged).map((r) => r.version)).toEqual([...new Set(Object.values(dataset.tags))].sort((a, b) => a - b));
  });

  it("reports each version's transaction as written", async () => {
    const records = await readVersionRecords(openStore(dataset.tableUri), lanceFormat);
    expect(records.map((r) => ({ version: r.version, operation_type: r.operation_type }))).toEqual(
      dataset.written.map((w) => ({ version: w.version, operation_type: w.operation })),
    );
    for (const record of records) {
      expect(record.transaction_uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(record.read_version).toBe(record.version - 1);
      expect(record.is_cleaned_up).toBe(false);
      expect(record.total_rows).toBe(dataset.written.find((w) => w.version === record.version)!.rowCount);
    }
    expect(records.some((r) => (r.total_deletion_files ?? 0) > 0)).toBe(true);
  });

  it("reads every version with one GET per manifest and no transaction-file reads", async () => {
    const store = openStore(dataset.tableUri);
    const records = await readVersionRecords(store, lanceFormat);
    // 1 LIST of _versions/, 1 LIST of _refs/ (tags and branches), 1 GET per tag file, 1 GET per manifest.
    expect(store.stats.snapshot()).toMatchObject({
      get: records.length + Object.keys(dataset.tags).length,
      list: 2,
      head: 0,
    });
  });

  it("takes informally about as long as listVersions()", async () => {
    const store = openStore(dataset.tableUri);
    let started = performance.now();
    const records = await readVersionRecords(store, lanceFormat);
    const ours = performance.now() - started;
    started = performance.now();
    const versions = await dataset.table.listVersions();
    const theirs = performance.now() - started;
    expect(records.length).toBe(versions.length);
    console.log(`[timing ${naming}] readVersionRecords ${ours.toFixed(1)} ms, listVersions ${theirs.toFixed(1)} ms`);
  });
});

describe("readVersionRecords on a directory that is not a table", () => {
  it("throws NotATableError naming the location", async () => {
    const dir = await makeTempDir("lw-not-a-table-");
    try {
      const store = openStore(dir);
      const error = await readVersionRecords(store, lanceFormat).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(NotATableError);
      expect((error as Error).message).toContain(store.uri);
      expect((error as Error).message).toMatch(/no version files under _versions\//);
    } finally {
      await removeDir(dir);
    }
  });
});
