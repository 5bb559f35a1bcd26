/**
 * A file-system table (v<N>.metadata.json) whose metadata/ also holds catalog-named metadata
 * (NNNNN-uuid.metadata.json, as Athena or Glue write after a table is registered there): the
 * catalog may own the table now, and its current metadata reaches files no v<N> file does. Cleanup
 * by the v<N> files would delete that metadata and the data only it reaches, so it is refused
 * with one line, nothing written or deleted; with --metadata-location naming the catalog's file,
 * cleanup keeps everything that file reaches.
 */
import { copyFile, rename, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { BufferIO } from "../../../lib/cli/io.ts";
import { runCli } from "../../../lib/cli/run-cli.ts";
import { DAY_MS } from "../../../lib/formats/iceberg/retention.ts";
import { appendSnapshot, copyIcebergFixture, listFiles } from "../../support/iceberg-fixtures.ts";
import { BUNNIES } from "../../support/iceberg-histories.ts";

const CATALOG_METADATA = "metadata/00006-1b4c0a0e-0000-4000-8000-000000000000.metadata.json";
const NEW_DATA = "data/new-00001.parquet";

async function cli(...argv: string[]) {
  const io = new BufferIO();
  const code = await runCli(argv, io);
  return { code, stdout: io.stdout, stderr: io.stderr };
}

/** spark-bunnies (v1-v5), then a catalog's commit on top of v5 written as 00006-uuid, every file 20 days old. */
async function registeredTable(): Promise<string> {
  const copy = await copyIcebergFixture("spark-bunnies", { ageMs: 30 * DAY_MS });
  onTestFinished(copy.remove);
  await copyFile(join(copy.dir, "data/00000-1-6cd7611f-0ceb-4cf3-8b8e-8c856356df3e-00001.parquet"), join(copy.dir, NEW_DATA));
  const appended = await appendSnapshot(copy.dir, { files: [{ path: `${BUNNIES}/${NEW_DATA}`, recordCount: 20, sizeInBytes: 3560 }], timestampMs: Date.now() - 20 * DAY_MS });
  await rename(join(copy.dir, appended.metadataKey), join(copy.dir, CATALOG_METADATA));
  await writeFile(join(copy.dir, "metadata/version-hint.text"), "5");
  const old = new Date(Date.now() - 20 * DAY_MS);
  for (const key of await listFiles(copy.dir)) await utimes(join(copy.dir, key), old, old);
  return copy.dir;
}

describe("Iceberg cleanup with catalog-named metadata beside v<N> files", () => {
  it("is refused with one line: nothing written or deleted", async () => {
    const dir = await registeredTable();
    const before = await listFiles(dir);
    for (const dryRun of [["--dry-run"], []]) {
      const run = await cli("cleanup", dir, ...dryRun);
      expect(run.code).not.toBe(0);
      expect(run.stderr.trim().split("\n")).toHaveLength(1);
      expect(run.stderr).toContain("00006-1b4c0a0e-0000-4000-8000-000000000000.metadata.json");
      expect(run.stderr).toContain("--metadata-location");
      expect((await listFiles(dir)).filter((k) => !k.startsWith("_lakewarden/"))).toEqual(before);
    }
  });

  it("with --metadata-location naming the catalog's file, what that file reaches stays", async () => {
    const dir = await registeredTable();
    const run = await cli("cleanup", dir, "--metadata-location", CATALOG_METADATA, "--json");
    expect(run.code, run.stderr).toBe(0);
    const left = await listFiles(dir);
    expect(left).toContain(CATALOG_METADATA);
    expect(left).toContain(NEW_DATA);
  });
});
