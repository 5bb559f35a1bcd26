/**
 * A table whose catalog names the current metadata file: `--metadata-location` reads the table at
 * that file; cleanup then expires no snapshot (lakewarden never commits through a catalog) and
 * still removes orphans.
 */
import { readdir, writeFile, utimes } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BufferIO } from "../../../lib/cli/io.ts";
import { runCli } from "../../../lib/cli/run-cli.ts";
import { copyFixture } from "../../support/fixtures.ts";
import { rewriteMetadata, snapshotsByTextPass } from "../../support/iceberg-fixtures.ts";

async function cli(...argv: string[]) {
  const io = new BufferIO();
  const code = await runCli(argv, io);
  return { code, stdout: io.stdout, stderr: io.stderr };
}

const FIRST = "metadata/00000-eedf51e6-8c09-463b-8850-844ee6ec1de0.metadata.json";
const CURRENT = "metadata/00001-aaf0d033-d06b-43c7-be60-67f83abd4aca.metadata.json";

describe("--metadata-location", () => {
  it("reads the table at the metadata file a catalog names, as a key or as a URI", async () => {
    const dir = await copyFixture("iceberg", "athena-example");
    // The table's first metadata file, written at its creation, holds no snapshot yet.
    const atFirst = await cli("versions", dir, "--metadata-location", FIRST, "--json");
    // An empty history, as for any table with no snapshot yet (test/engines/iceberg-no-snapshot.test.ts).
    expect(atFirst.code, atFirst.stderr).toBe(0);
    expect(JSON.parse(atFirst.stdout)).toEqual([]);
    const atCurrent = await cli("versions", dir, "--metadata-location", `file://${join(dir, CURRENT)}`, "--json");
    expect(atCurrent.code, atCurrent.stderr).toBe(0);
    const expected = (await snapshotsByTextPass(join(dir, CURRENT))).map((s) => s.id);
    expect(
      JSON.parse(atCurrent.stdout)
        .map((r: { version_id: string }) => r.version_id)
        .sort(),
    ).toEqual(expected.sort());
    expect(expected.length).toBeGreaterThan(0);
    const outside = await cli("versions", dir, "--metadata-location", "s3://elsewhere/t/metadata/x.metadata.json");
    expect(outside.code).toBe(2);
    expect(outside.stderr).toMatch(/--metadata-location .* not a file under the table/);
    const lance = await cli("versions", dir, "--format", "lance", "--metadata-location", CURRENT);
    expect(lance.code).toBe(2);
    expect(lance.stderr).toMatch(/a lance table has no commit pointer a catalog owns/);
  });

  it("cleanup expires no snapshot through a catalog-owned table, says why, and still removes an old orphan", async () => {
    const dir = await copyFixture("iceberg", "athena-example");
    const stray = join(dir, "data", "stray-orphan.parquet");
    await writeFile(stray, "not referenced by any snapshot");
    const old = new Date(Date.now() - 30 * 86_400_000);
    await utimes(stray, old, old);
    const run = await cli("cleanup", dir, "--metadata-location", CURRENT, "--older-than", "0s", "--allow-short-retention", "--json");
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report.versions_removed).toEqual([]);
    for (const line of report.versions.filter((v: { keep: boolean; reason: string }) => /catalog/.test(v.reason))) {
      expect(line.reason).toMatch(/the catalog owns this table's commits .* lakewarden expires no snapshot/);
    }
    expect(report.files.filter((f: { action: string }) => f.action === "delete").map((f: { key: string }) => f.key)).toContain("data/stray-orphan.parquet");
  });

  it("cleanup writes no ref-dropping commit either: an expired ref of a catalog-owned table stays", async () => {
    const dir = await copyFixture("iceberg", "spark-bunnies");
    const current = (await snapshotsByTextPass(join(dir, "metadata/v5.metadata.json"))).at(-1)!;
    const pointer = await rewriteMetadata(dir, (json) => {
      json.refs = { ...(json.refs as object), stale: { "snapshot-id": BigInt(current.id), type: "tag", "max-ref-age-ms": 1 } } as never;
    });
    const before = (await readdir(join(dir, "metadata"))).sort();
    for (const dryRun of [["--dry-run"], []]) {
      const run = await cli("cleanup", dir, "--metadata-location", pointer, ...dryRun, "--json");
      expect(run.code, run.stderr).toBe(0);
      const report = JSON.parse(run.stdout);
      expect(report.versions_removed).toEqual([]);
      expect(report.removal_commit).toBeNull();
    }
    expect((await readdir(join(dir, "metadata"))).sort()).toEqual(before);
  });
});
