/**
 * The Iceberg properties that decide what cleanup may delete are read as iceberg-java reads them,
 * and a value it cannot read stops cleanup instead of falling back to a default:
 *   - `gc.enabled` is Java's Boolean.parseBoolean: only "true" (any case) enables; "off", "no",
 *     "0" disable it, so nothing is deleted;
 *   - `history.expire.*` are whole numbers, a ref's own settings whole numbers > 0 (Java fails on
 *     anything else): "ten", "7d" or a quoted "5" stops the run with one line naming it, nothing
 *     written or deleted (a fallback to the defaults would expire snapshots meant to be kept).
 * Each case: s1 ← s2 ← s3 (30 days old) ← a (9 days) ← b (1 hour) on a spark-bunnies copy, with an
 * old stray data file; the defaults alone would expire s1-a and delete the stray.
 */
import { copyFile, utimes } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { BufferIO } from "../../../lib/cli/io.ts";
import { runCli } from "../../../lib/cli/run-cli.ts";
import { DAY_MS } from "../../../lib/formats/iceberg/retention.ts";
import { copyIcebergFixture, listFiles } from "../../support/iceberg-fixtures.ts";
import { buildHistory, everySnapshotReads } from "../../support/iceberg-histories.ts";

const NOW = Date.now();

async function table(properties: Record<string, string>): Promise<string> {
  const copy = await copyIcebergFixture("spark-bunnies", { ageMs: 30 * DAY_MS });
  onTestFinished(copy.remove);
  await buildHistory(
    copy.dir,
    {
      commits: [
        { name: "a", ageMs: 9 * DAY_MS },
        { name: "b", ageMs: 3_600_000 },
      ],
      properties,
    },
    NOW,
  );
  const stray = join(copy.dir, "data/stray-00001.parquet");
  await copyFile(join(copy.dir, "data/a-00001.parquet"), stray);
  const old = new Date(NOW - 10 * DAY_MS);
  await utimes(stray, old, old);
  return copy.dir;
}

async function cleanup(dir: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const io = new BufferIO();
  const code = await runCli(["cleanup", dir, "--json"], io);
  return { code, stdout: io.stdout, stderr: io.stderr };
}

const ownFilesAside = (keys: readonly string[]) => keys.filter((k) => !k.startsWith("_lakewarden/"));

describe("Iceberg retention properties are read as iceberg-java reads them", () => {
  it("the defaults alone expire s1-a and delete the stray (what the cases below must not do)", async () => {
    const dir = await table({});
    const run = await cleanup(dir);
    expect(run.code, run.stderr).toBe(0);
    expect((await listFiles(dir)).includes("data/stray-00001.parquet")).toBe(false);
    expect((JSON.parse(run.stdout) as { versions_removed: number[] }).versions_removed).toHaveLength(4);
  });

  it.each(["off", "no", "0", "disabled"])("gc.enabled = %j disables gc, as in Java: nothing written or deleted", async (value) => {
    const dir = await table({ "gc.enabled": value });
    const before = await listFiles(dir);
    const run = await cleanup(dir);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/gc\.enabled/);
    expect(ownFilesAside(await listFiles(dir))).toEqual(before);
    await everySnapshotReads(dir);
  });

  it.each([
    ["history.expire.min-snapshots-to-keep", "ten"],
    ["history.expire.max-snapshot-age-ms", "7d"],
    ["history.expire.max-ref-age-ms", "-1"],
    ["write.metadata.previous-versions-max", "1.5"],
  ])("%s = %j stops cleanup with one line naming it: nothing written or deleted", async (key, value) => {
    const dir = await table({ [key]: value });
    const before = await listFiles(dir);
    const run = await cleanup(dir);
    expect(run.code).not.toBe(0);
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
    expect(run.stderr).toContain(key);
    expect(ownFilesAside(await listFiles(dir))).toEqual(before);
  });
  it.each([
    ["min-snapshots-to-keep", "5"],
    ["max-snapshot-age-ms", 1.5],
    ["max-ref-age-ms", -1],
  ] as const)("main's %s = %j (not a whole number, which iceberg-java's parser refuses) stops cleanup with one line: nothing written or deleted", async (field, value) => {
    const copy = await copyIcebergFixture("spark-bunnies", { ageMs: 30 * DAY_MS });
    onTestFinished(copy.remove);
    await buildHistory(
      copy.dir,
      {
        commits: [
          { name: "a", ageMs: 9 * DAY_MS },
          { name: "b", ageMs: 3_600_000 },
        ],
        refs: { main: { "snapshot-id": "@b", type: "branch", [field]: value } },
      },
      NOW,
    );
    const before = await listFiles(copy.dir);
    const run = await cleanup(copy.dir);
    expect(run.code).not.toBe(0);
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
    expect(run.stderr).toContain(field);
    expect(ownFilesAside(await listFiles(copy.dir))).toEqual(before);
  });
});
