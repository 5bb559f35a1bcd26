/**
 * An Iceberg table whose current snapshot (or a ref's snapshot) names a file the store does not
 * hold: the metadata and the files disagree (a writer that spelled the path differently from the
 * file it wrote), and the file it meant looks like an old orphan. Cleanup must stop before any
 * write or delete with one line naming the path, the dry run alike, and delete nothing.
 */
import { copyFile, mkdir, rename, rm } from "node:fs/promises";
import { basename, join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { BufferIO } from "../../../lib/cli/io.ts";
import { runCli } from "../../../lib/cli/run-cli.ts";
import { DAY_MS } from "../../../lib/formats/iceberg/retention.ts";
import { appendSnapshot, copyIcebergFixture, fileExists, icebirdLiveFiles, listFiles, rewriteMetadata, snapshotsByTextPass } from "../../support/iceberg-fixtures.ts";
import { BUNNIES } from "../../support/iceberg-histories.ts";

async function cli(...argv: string[]) {
  const io = new BufferIO();
  const code = await runCli(argv, io);
  return { code, stdout: io.stdout, stderr: io.stderr };
}

/** Moves `key` to a name the metadata does not know: the file the writer wrote, under another spelling. */
async function misspell(dir: string, key: string): Promise<string> {
  const moved = join(key, "..", `renamed%20${basename(key)}`);
  await rename(join(dir, key), join(dir, moved));
  return moved;
}

async function expectRefused(dir: string, missing: string, moved: string): Promise<void> {
  const before = await listFiles(dir);
  for (const dryRun of [["--dry-run"], []]) {
    const run = await cli("cleanup", dir, ...dryRun);
    expect(run.code, run.stdout).not.toBe(0);
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
    expect(run.stderr).toContain(`"${missing}"`);
    expect(run.stderr).toMatch(/does not exist/);
    expect((await listFiles(dir)).filter((k) => !k.startsWith("_lakewarden/"))).toEqual(before.filter((k) => !k.startsWith("_lakewarden/")));
    expect(await fileExists(dir, moved)).toBe(true);
  }
}

describe("Iceberg cleanup when a snapshot a ref keeps names a file that does not exist", () => {
  it("stops before any write or delete when the current snapshot's data file is missing", async () => {
    const copy = await copyIcebergFixture("spark-bunnies", { ageMs: 30 * DAY_MS });
    onTestFinished(copy.remove);
    const live = (await icebirdLiveFiles(copy.dir, "v5.metadata.json")).map((f) => f.key).sort();
    expect(live.length).toBeGreaterThan(0);
    const moved = await misspell(copy.dir, live[0]!);
    await expectRefused(copy.dir, live[0]!, moved);
  });

  it("stops as well when only a tagged older snapshot names the missing file", async () => {
    const copy = await copyIcebergFixture("spark-bunnies", { ageMs: 30 * DAY_MS });
    onTestFinished(copy.remove);
    const first = (await snapshotsByTextPass(join(copy.dir, "metadata/v5.metadata.json")))[0]!;
    const current = new Set((await icebirdLiveFiles(copy.dir, "v5.metadata.json")).map((f) => f.key));
    const onlyFirst = (await icebirdLiveFiles(copy.dir, "v5.metadata.json", 0))
      .map((f) => f.key)
      .filter((k) => !current.has(k))
      .sort();
    expect(onlyFirst.length).toBeGreaterThan(0);
    await rewriteMetadata(copy.dir, (json) => {
      json.refs = { ...(json.refs as object), "keep-first": { "snapshot-id": BigInt(first.id), type: "tag" } } as never;
    });
    const moved = await misspell(copy.dir, onlyFirst[0]!);
    await expectRefused(copy.dir, onlyFirst[0]!, moved);
  });

  it("asks the store for a file outside the listed folders: found, the run goes on; gone, it stops", async () => {
    const copy = await copyIcebergFixture("spark-bunnies", { ageMs: 30 * DAY_MS });
    onTestFinished(copy.remove);
    // Under the table root but outside data/ and metadata/, so the cleanup listing never holds it.
    const outside = "elsewhere/f-00001.parquet";
    await mkdir(join(copy.dir, "elsewhere"));
    await copyFile(join(copy.dir, "data/00000-1-6cd7611f-0ceb-4cf3-8b8e-8c856356df3e-00001.parquet"), join(copy.dir, outside));
    await appendSnapshot(copy.dir, { files: [{ path: `${BUNNIES}/${outside}`, recordCount: 20, sizeInBytes: 3560 }], timestampMs: Date.now() - 3_600_000 });
    const found = await cli("cleanup", copy.dir, "--dry-run");
    expect(found.code, found.stderr).toBe(0);
    await rm(join(copy.dir, outside));
    const gone = await cli("cleanup", copy.dir, "--dry-run");
    expect(gone.code).not.toBe(0);
    expect(gone.stderr).toContain(`"${outside}", which does not exist`);
  });

  it("runs as before when every file the refs' snapshots name exists", async () => {
    const copy = await copyIcebergFixture("spark-bunnies", { ageMs: 30 * DAY_MS });
    onTestFinished(copy.remove);
    const run = await cli("cleanup", copy.dir, "--dry-run");
    expect(run.code, run.stderr).toBe(0);
  });
});
