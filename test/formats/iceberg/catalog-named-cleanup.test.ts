/**
 * A table whose metadata files are catalog-named only (NNNNN-uuid.metadata.json, as Glue, Hive or a
 * REST catalog write them): the catalog holds the pointer, and the highest-numbered file may be a
 * commit it never accepted (a writer that died, or whose commit state was unknown, after writing
 * the file). Cleanup without --metadata-location is refused with one line saying what to pass,
 * dry run alike, nothing written or deleted; reading is refused alike
 * (test/cli/catalog-named-readers.test.ts).
 */
import { copyFile, utimes } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { BufferIO } from "../../../lib/cli/io.ts";
import { runCli } from "../../../lib/cli/run-cli.ts";
import { UnsupportedFeatureError } from "../../../lib/formats/errors.ts";
import { removeOrphanFiles } from "./standalone-runners.ts";
import { DAY_MS } from "../../../lib/formats/iceberg/retention.ts";
import { LocalStore } from "../../../lib/store/local-store.ts";
import { copyIcebergFixture, fileExists, listFiles } from "../../support/iceberg-fixtures.ts";

const ACCEPTED = "metadata/00001-aaf0d033-d06b-43c7-be60-67f83abd4aca.metadata.json";
/** A commit the catalog never took: written, never swapped in. */
const UNACCEPTED = "metadata/00002-7c1d2e3f-0000-4000-8000-000000000000.metadata.json";

async function cli(...argv: string[]) {
  const io = new BufferIO();
  const code = await runCli(argv, io);
  return { code, stdout: io.stdout, stderr: io.stderr };
}

async function athena(): Promise<string> {
  const copy = await copyIcebergFixture("athena-example", { ageMs: 30 * DAY_MS });
  onTestFinished(copy.remove);
  return copy.dir;
}

const tableFiles = async (dir: string) => (await listFiles(dir)).filter((k) => !k.startsWith("_lakewarden/"));

describe("Iceberg cleanup on a table with catalog-named metadata only", () => {
  it.each([
    ["the catalog's own files", false],
    ["a newer file the catalog never accepted", true],
  ])("is refused without --metadata-location (%s), naming the newest file and the flag", async (_, unaccepted) => {
    const dir = await athena();
    if (unaccepted) {
      await copyFile(join(dir, ACCEPTED), join(dir, UNACCEPTED));
      const old = new Date(Date.now() - 20 * DAY_MS);
      await utimes(join(dir, UNACCEPTED), old, old);
    }
    const newest = unaccepted ? UNACCEPTED : ACCEPTED;
    const before = await tableFiles(dir);
    for (const dryRun of [["--dry-run"], []]) {
      const run = await cli("cleanup", dir, ...dryRun);
      expect(run.code, run.stdout).not.toBe(0);
      expect(run.stderr.trim().split("\n")).toHaveLength(1);
      expect(run.stderr).toContain(newest);
      expect(run.stderr).toContain("pass --metadata-location");
      expect(await tableFiles(dir)).toEqual(before);
    }
  });

  it("runs with --metadata-location, keeping the newer file it did not plan on", async () => {
    const dir = await athena();
    await copyFile(join(dir, ACCEPTED), join(dir, UNACCEPTED));
    const run = await cli("cleanup", dir, "--metadata-location", ACCEPTED, "--json");
    expect(run.code, run.stderr).toBe(0);
    expect(await fileExists(dir, ACCEPTED)).toBe(true);
    expect(await fileExists(dir, UNACCEPTED)).toBe(true);
  });

  it("orphan removal alike: refused without the catalog's file, and with it the unaccepted file is not taken", async () => {
    const dir = await athena();
    await copyFile(join(dir, ACCEPTED), join(dir, UNACCEPTED));
    const before = await tableFiles(dir);
    await expect(removeOrphanFiles(new LocalStore(dir))).rejects.toThrow(UnsupportedFeatureError);
    await expect(removeOrphanFiles(new LocalStore(dir))).rejects.toThrow(/pass --metadata-location/);
    expect(await tableFiles(dir)).toEqual(before);
    const report = await removeOrphanFiles(new LocalStore(dir), { metadataKey: ACCEPTED });
    expect(report.metadataKey).toBe(ACCEPTED);
    expect(await fileExists(dir, UNACCEPTED)).toBe(true);
  });
});
