/**
 * readVersionRecords' options, which the timeline builds on: a starting version, files and
 * refs already in hand, bounded concurrency; and which tags flag a version.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lanceFormat } from "../../lib/formats/lance/lance-format.ts";
import type { Refs } from "../../lib/formats/table-format.ts";
import { openStore } from "../../lib/store/index.ts";
import { mainBranchTaggedVersions, readVersionRecords } from "../../lib/versions/read-version-records.ts";
import { buildLanceDataset, makeTempDir, removeDir, type LanceDataset } from "../support/lance-datasets.ts";

let dir: string;
let dataset: LanceDataset;

beforeAll(async () => {
  dir = await makeTempDir("lw-records-options-");
  dataset = await buildLanceDataset({
    dbUri: join(dir, "db"),
    steps: [
      { op: "create", rows: 5 },
      { op: "append", rows: 5 },
      { op: "append", rows: 5 },
      { op: "tag", name: "two", version: 2 },
      { op: "delete", where: "id = 7" },
    ],
  });
});
afterAll(async () => {
  dataset?.close();
  await removeDir(dir);
});

describe("readVersionRecords options", () => {
  it("reads only versions from `fromVersion` on", async () => {
    const records = await readVersionRecords(openStore(dataset.tableUri), lanceFormat, { fromVersion: 3 });
    expect(records.map((r) => r.version)).toEqual([3, 4]);
  });

  it("returns nothing (not an error) when `fromVersion` is past the latest", async () => {
    expect(await readVersionRecords(openStore(dataset.tableUri), lanceFormat, { fromVersion: 99 })).toEqual([]);
  });

  it("uses version files and refs it is given instead of listing them", async () => {
    const store = openStore(dataset.tableUri);
    const versionFiles = await lanceFormat.listVersionFiles(store);
    const refs: Refs = {
      tags: [
        { name: "main-tag", version: 3, branch: null },
        { name: "branch-tag", version: 4, branch: "dev" },
      ],
      branches: [],
    };
    store.stats.reset();
    const records = await readVersionRecords(store, lanceFormat, { versionFiles: versionFiles.slice(1), refs, concurrency: 1 });
    expect(store.stats.snapshot()).toMatchObject({ list: 0, get: versionFiles.length - 1 });
    expect(records.map((r) => [r.version, r.is_tagged])).toEqual([
      [2, false],
      [3, true],
      [4, false], // a tag of another branch pins that branch's lineage, not this version
    ]);
  });

  it("flags versions tagged on the main branch only", () => {
    expect(
      mainBranchTaggedVersions({
        tags: [
          { name: "a", version: 1, branch: null },
          { name: "b", version: 1, branch: null },
          { name: "c", version: 5, branch: "x" },
        ],
        branches: [],
      }),
    ).toEqual(new Set([1]));
  });

  it("rejects a concurrency that is not a positive integer", async () => {
    await expect(readVersionRecords(openStore(dataset.tableUri), lanceFormat, { concurrency: 0 })).rejects.toThrow(RangeError);
  });
});
