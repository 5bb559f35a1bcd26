/**
 * Lance: the manifest keeps no per-fragment column statistics, so a plan lists every live
 * fragment whatever the filter (still checked against the schema), each with its deletion file;
 * `head show` lists those deletion files. LanceDB from npm writes the table.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openTable } from "../../lib/index.ts";
import { runLakewarden } from "../cli/run-executable.ts";
import { buildLanceDataset, makeTempDir, removeDir, type LanceDataset } from "../support/lance-datasets.ts";

let dir = "";
let dataset: LanceDataset;
beforeAll(async () => {
  dir = await makeTempDir("lw-scan-lance-");
  dataset = await buildLanceDataset({
    dbUri: dir,
    steps: [
      { op: "create", rows: 20 },
      { op: "append", rows: 10 },
      { op: "delete", where: "id % 4 = 1" },
    ],
  });
});
afterAll(async () => {
  dataset?.close();
  if (dir) await removeDir(dir);
});

describe("plans on a Lance table", () => {
  it("every fragment, with its deletion file, for any filter", async () => {
    const table = await openTable(dataset.tableUri);
    const state = await table.latest();
    const fragments = state.snapshot.liveFiles;
    expect(fragments.length).toBeGreaterThan(1);
    for (const where of [undefined, "id = 3", "id > 1000 AND name IS NULL"]) {
      const plan = await table.plan(where ? { filter: where } : {});
      expect(plan.files.map((f) => f.paths)).toEqual(fragments.map((f) => f.paths));
      expect(plan.files.map((f) => f.deletes.map((d) => d.path))).toEqual(fragments.map((f) => (f.deletionFile ? [f.deletionFile] : [])));
    }
    expect(fragments.some((f) => f.deletionFile)).toBe(true);
    await expect(table.plan({ filter: "nope = 1" })).rejects.toThrow(/unknown column "nope" at position 1/);
  });

  it("files --json gives full URIs; a bad --where is a usage error naming the position", async () => {
    const run = await runLakewarden(["files", dataset.tableUri, "--where", "id < 5", "--json"]);
    expect(run.code, run.stderr).toBe(0);
    const doc = JSON.parse(run.stdout) as { files: { uri: string; deletes: { uri: string; role: string }[] }[] };
    expect(doc.files.length).toBeGreaterThan(1);
    for (const f of doc.files) expect(f.uri).toMatch(/^file:\/\/\/.*\.lance$/);
    const bad = await runLakewarden(["files", dataset.tableUri, "--where", "id <"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^lakewarden: --where: expected a literal at position 5, found the end/);
    const shown = JSON.parse((await runLakewarden(["head", "show", dataset.tableUri, "--json"])).stdout) as { delete_files: { role: string }[] };
    expect(shown.delete_files.map((d) => d.role)).toContain("deletion-vector");
  });
});
