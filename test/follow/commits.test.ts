import { describe, expect, it } from "vitest";
import { groupCommitsByTable, parseCommitKey, type Commit } from "../../lib/follow/commits.ts";
import { versionKey } from "../../lib/formats/lance/version-names.ts";
import { lanceFormat } from "../../lib/formats/lance/lance-format.ts";

describe("parseCommitKey", () => {
  it("finds the table root and version in both Lance naming schemes", () => {
    expect(parseCommitKey(`lake/orders.lance/${versionKey(12, "v1")}`)).toEqual({
      format: lanceFormat,
      tableRoot: "lake/orders.lance",
      version: 12,
      versionKey: "_versions/12.manifest",
    });
    expect(parseCommitKey(`lake/orders.lance/${versionKey(3, "v2")}`)?.version).toBe(3);
  });

  it("accepts a table at the root and tables whose parent folders look like version folders", () => {
    expect(parseCommitKey("_versions/1.manifest")).toEqual({ format: lanceFormat, tableRoot: "", version: 1, versionKey: "_versions/1.manifest" });
    expect(parseCommitKey("_versions/t.lance/_versions/4.manifest")?.tableRoot).toBe("_versions/t.lance");
  });

  it("keeps spaces and unicode in the table root", () => {
    expect(parseCommitKey("my lake/ventes été.lance/_versions/2.manifest")?.tableRoot).toBe("my lake/ventes été.lance");
  });

  it("ignores keys that are not version files", () => {
    for (const key of [
      "lake/t.lance/data/0a1b.lance",
      "lake/t.lance/_versions/3.manifest-5f0c1d2e",
      "lake/t.lance/_versions/d12.manifest",
      "lake/t.lance/_versions/nested/3.manifest",
      "lake/t.lance/_lakewarden/head",
      "lake/other.manifest",
      "",
    ]) {
      expect(parseCommitKey(key), key).toBeNull();
    }
  });
});

describe("groupCommitsByTable", () => {
  const commit = (table: string, version: number, source: string, at?: number): Commit<string> => ({
    table,
    version,
    source,
    committedAt: at === undefined ? undefined : new Date(at),
  });

  it("keeps the newest version per table and every source once", () => {
    const groups = groupCommitsByTable([commit("a", 3, "m1", 30), commit("b", 1, "m2", 10), commit("a", 5, "m3", 50), commit("a", 4, "m1", 40)]);
    expect(groups).toEqual([
      { table: "a", newestVersion: 5, newestCommittedAt: new Date(50), sources: ["m1", "m3"] },
      { table: "b", newestVersion: 1, newestCommittedAt: new Date(10), sources: ["m2"] },
    ]);
  });

  it("gives the same newest versions whatever the order and however many duplicates", () => {
    const commits = [commit("a", 1, "m1"), commit("a", 2, "m2"), commit("b", 7, "m3"), commit("a", 2, "m4"), commit("b", 7, "m5")];
    const expected = new Map([
      ["a", 2],
      ["b", 7],
    ]);
    for (const order of [commits, [...commits].reverse(), [...commits, ...commits], [commits[3]!, commits[0]!, commits[4]!, commits[2]!, commits[1]!]]) {
      const newest = new Map(groupCommitsByTable(order).map((g) => [g.table, g.newestVersion]));
      expect(newest).toEqual(expected);
    }
  });
});

describe("commit files that name no single version (Iceberg metadata files)", () => {
  it("are commits of their table, with the version left to the latest", async () => {
    const { icebergFormat } = await import("../../lib/formats/iceberg/iceberg-format.ts");
    expect(parseCommitKey("warehouse/db/t/metadata/v3.metadata.json")).toMatchObject({ format: icebergFormat, tableRoot: "warehouse/db/t", version: null });
    expect(parseCommitKey("warehouse/db/t/data/part-0.parquet")).toBeNull();
  });

  it("group into one piece of work for the table's latest version", () => {
    const groups = groupCommitsByTable([
      { table: "t", version: 4, source: "a" },
      { table: "t", version: null, source: "b" },
      { table: "t", version: 9, source: "c" },
    ]);
    expect(groups).toEqual([{ table: "t", newestVersion: null, newestCommittedAt: undefined, sources: ["a", "b", "c"] }]);
  });
});
