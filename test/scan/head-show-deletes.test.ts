/**
 * `head show` lists every delete file the current version needs, with its role and the data files
 * it applies to, from the head and from the manifest fallback alike; checked against icebird's
 * reading of the manifests (an independent Avro reader) and Delta's deletion vectors in the log.
 */
import { afterAll, describe, expect, it } from "vitest";
import { runLakewarden } from "../cli/run-executable.ts";
import { copyIcebergFixture, icebirdLiveFiles, type FixtureCopy } from "../support/iceberg-fixtures.ts";
import { copyFixture } from "../support/fixtures.ts";

const copies: FixtureCopy[] = [];
afterAll(async () => {
  await Promise.all(copies.map((c) => c.remove()));
});

interface ShownDelete {
  path: string | null;
  role: string;
  rows: number | null;
  applies_to: string[];
}

async function show(dir: string): Promise<{ source: string; files: { paths: string[] }[]; delete_files: ShownDelete[] }> {
  const run = await runLakewarden(["head", "show", dir, "--json"]);
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout);
}

describe("head show lists delete files", () => {
  it("spark-bunnies (Iceberg position deletes): the manifests' delete files, from the manifest and from the head", async () => {
    const c = await copyIcebergFixture("spark-bunnies");
    copies.push(c);
    const oracle = await icebirdLiveFiles(c.dir, "v5.metadata.json");
    const expectedDeletes = oracle.filter((f) => f.content === 1).map((f) => f.key);
    const dataFiles = oracle.filter((f) => f.content === 0).map((f) => f.key);
    expect(expectedDeletes.length).toBeGreaterThan(0);

    const fromManifest = await show(c.dir);
    expect(fromManifest.source).toBe("manifest");
    expect((await runLakewarden(["head", "write", c.dir])).code).toBe(0);
    const fromHead = await show(c.dir);
    expect(fromHead.source).toBe("head");

    for (const shown of [fromManifest, fromHead]) {
      expect(shown.delete_files.map((d) => d.path).sort()).toEqual(expectedDeletes.sort());
      for (const d of shown.delete_files) {
        expect(d.role).toBe("position-deletes");
        expect(d.rows).toBe(Number(oracle.find((f) => f.key === d.path)!.recordCount));
        // The delete file (sequence number 2) is still live, but the one data file left was
        // rewritten at sequence number 3: a position delete applies only to data files with a
        // sequence number at most its own, so to none of them.
        expect(d.applies_to).toEqual([]);
      }
      expect(shown.files.flatMap((f) => f.paths).sort()).toEqual([...dataFiles].sort());
    }
    const text = await runLakewarden(["head", "show", c.dir]);
    expect(text.stdout).toMatch(/1 delete file:\n.*role.*\n.*position-deletes/);
  });

  it("a Delta table with deletion vectors: one deletion vector per add that has one, with its data file", async () => {
    const dir = await copyFixture("delta", "table-with-dv-small");
    const shown = await show(dir);
    expect(shown.delete_files.length).toBeGreaterThan(0);
    for (const d of shown.delete_files) {
      expect(d.role).toBe("deletion-vector");
      expect(d.applies_to).toHaveLength(1);
      expect(shown.files.flatMap((f) => f.paths)).toContain(d.applies_to[0]);
    }
  });

  it("a table without deletes lists none", async () => {
    const dir = await copyFixture("delta", "simple_table");
    expect((await show(dir)).delete_files).toEqual([]);
  });
});
