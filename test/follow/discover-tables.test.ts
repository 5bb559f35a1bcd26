import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lanceFormat } from "../../lib/formats/lance/lance-format.ts";
import { discoverTables, isHiddenFolder } from "../../lib/follow/discover-tables.ts";
import { openStore } from "../../lib/store/open-store.ts";
import { buildLanceDataset, makeTempDir, removeDir } from "../support/lance-datasets.ts";

let lake: string;

beforeAll(async () => {
  lake = await makeTempDir("discover-");
  for (const [db, name] of [
    [lake, "top"],
    [join(lake, "a"), "one"],
    [join(lake, "a", "b", "c"), "deep"],
  ] as const) {
    (await buildLanceDataset({ dbUri: db, tableName: name, steps: [{ op: "create", rows: 3 }] })).close();
  }
  await mkdir(join(lake, "notes"), { recursive: true });
  await writeFile(join(lake, "notes", "readme.md"), "no table here");
});

afterAll(async () => {
  await removeDir(lake);
});

describe("discoverTables", () => {
  it("finds LanceDB tables at every depth within the limit, skipping internal folders", async () => {
    const store = openStore(lake);
    expect(await discoverTables(store, [lanceFormat], { maxDepth: 4 })).toEqual(["a/b/c/deep.lance", "a/one.lance", "top.lance"]);
    expect(await discoverTables(store, [lanceFormat], { maxDepth: 1 })).toEqual(["top.lance"]);
  });

  it("reports the root itself when the location is a table", async () => {
    expect(await discoverTables(openStore(join(lake, "top.lance")), [lanceFormat])).toEqual([""]);
  });

  it("treats _ and . folders as internal", () => {
    expect(isHiddenFolder("lake/__manifest")).toBe(true);
    expect(isHiddenFolder("lake/.staging/")).toBe(true);
    expect(isHiddenFolder("lake/orders.lance")).toBe(false);
  });
});
