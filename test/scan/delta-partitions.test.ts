/**
 * The planner on Delta partition values as Databricks wrote them, column mapping turned on later
 * (table_with_partitioning_mapping: a random-prefix data folder for one partition): each file is
 * kept exactly for its own partition value, read here from the log's add actions directly. The
 * partition column was renamed under column mapping (logical `newid`, physical `id`): the filter
 * names the logical column, the add actions the physical one.
 */
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openTable } from "../../lib/index.ts";
import { copyFixture } from "../support/fixtures.ts";

/** Live adds' paths and partition values, by replaying the JSON log (no checkpoint in this table). */
async function liveAdds(dir: string): Promise<Map<string, Record<string, string | null>>> {
  const live = new Map<string, Record<string, string | null>>();
  const commits = (await readdir(join(dir, "_delta_log"))).filter((n) => n.endsWith(".json")).sort();
  for (const name of commits) {
    for (const line of (await readFile(join(dir, "_delta_log", name), "utf8")).split("\n").filter(Boolean)) {
      const action = JSON.parse(line) as { add?: { path: string; partitionValues: Record<string, string | null> }; remove?: { path: string } };
      if (action.add) live.set(decodeURIComponent(action.add.path), action.add.partitionValues);
      if (action.remove) live.delete(decodeURIComponent(action.remove.path));
    }
  }
  return live;
}

describe("Delta partition values", () => {
  it("a file is kept for its partition value and dropped for any other", async () => {
    const dir = await copyFixture("delta", "table_with_partitioning_mapping");
    const adds = await liveAdds(dir);
    const table = await openTable(dir);
    const planned = async (where: string) => (await table.plan({ filter: where })).files.map((f) => decodeURIComponent(f.paths[0]!)).sort();
    expect(await planned("newid IS NOT NULL")).toEqual([...adds.keys()].sort());
    const values = [...new Set([...adds.values()].map((p) => p.id))];
    expect(values.length).toBeGreaterThan(1);
    for (const value of values) {
      const expected = [...adds]
        .filter(([, p]) => p.id === value)
        .map(([path]) => path)
        .sort();
      expect(await planned(`newid = ${value}`), `newid = ${value}`).toEqual(expected);
      expect(await planned(`NOT newid != ${value}`)).toEqual(expected);
    }
    expect(await planned("newid = 12345")).toEqual([]);
    expect(await planned("newid IS NULL")).toEqual([]);
  });
});
