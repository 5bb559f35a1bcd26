/**
 * Delta UniForm (issue 20): a Delta table whose `delta.universalFormat.enabledFormats` names
 * iceberg keeps Iceberg metadata for its own data under `metadata/`, which Delta's VACUUM hides.
 * The table is built from a fixture copy at test time: a commit that sets the property (as
 * `ALTER TABLE ... SET TBLPROPERTIES` would) and a `metadata/` folder holding an Iceberg table's
 * metadata (copied from the Iceberg fixtures). Every file is 400 days old, so VACUUM would take
 * every file the latest version does not name. The folder must stay whether the format is named
 * (`--format delta`), pinned (`_lakewarden/format`) or detected; and a pin is re-checked against
 * what the folder holds now: a pinned format that no longer detects, or a folder that now also
 * looks like another format with no UniForm to explain it, is one clear error and nothing is deleted.
 */
import { existsSync } from "node:fs";
import { cp, mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BufferIO } from "../../../lib/cli/io.ts";
import { runCli } from "../../../lib/cli/run-cli.ts";
import { copyFixture, fixtureSource } from "../../support/fixtures.ts";
import { oracleCommits, oracleLiveFiles } from "./duckdb-oracle.ts";
import { appendCommit, latestProtocolAndMetadata, listKeys, setAllTimes } from "./log-surgery.ts";
import { vacuumAllExpired } from "./vacuum-rules.ts";

const DAY = 86_400_000;
const PIN = "_lakewarden/format";

async function cli(...argv: string[]) {
  const io = new BufferIO();
  const code = await runCli(argv, io);
  return { code, stdout: io.stdout, stderr: io.stderr };
}

interface Report {
  status: string;
  files: { key: string; action: string }[];
  reference_check: { ok: boolean } | null;
}

const deletedBy = (report: Report) =>
  report.files
    .filter((f) => f.action === "delete")
    .map((f) => f.key)
    .sort();

/**
 * A copy of simple_table with an Iceberg `metadata/` folder beside its log; with `uniform`, a
 * last commit sets `delta.universalFormat.enabledFormats = iceberg` (and icebergCompatV2, which
 * UniForm requires). Returns the table and the keys under `metadata/`.
 */
async function tableWithIcebergMetadata(uniform: boolean): Promise<{ dir: string; metadata: string[] }> {
  const dir = await copyFixture("delta", "simple_table");
  if (uniform) {
    const latest = Math.max(...(await oracleCommits(dir)).map((c) => c.version));
    const { metaData } = await latestProtocolAndMetadata(dir);
    const configuration = {
      ...(metaData.configuration as Record<string, string> | undefined),
      "delta.enableIcebergCompatV2": "true",
      "delta.universalFormat.enabledFormats": "iceberg",
    };
    await appendCommit(dir, latest + 1, [
      { commitInfo: { operation: "SET TBLPROPERTIES", operationParameters: { properties: JSON.stringify(configuration) }, timestamp: Date.now() - 400 * DAY } },
      { metaData: { ...metaData, configuration } },
    ]);
  }
  await mkdir(join(dir, "metadata"));
  await cp(join(fixtureSource("iceberg", "spark-bunnies"), "metadata"), join(dir, "metadata"), { recursive: true });
  await setAllTimes(dir, new Date(Date.now() - 400 * DAY));
  const metadata = (await listKeys(dir)).filter((k) => k.startsWith("metadata/"));
  expect(metadata.some((k) => k.endsWith(".metadata.json"))).toBe(true);
  return { dir, metadata };
}

describe("Delta UniForm: the Iceberg metadata folder is never a VACUUM candidate", () => {
  const ways: { name: string; setup: (dir: string) => Promise<void>; argv: string[] }[] = [
    { name: "--format delta", setup: async () => {}, argv: ["--format", "delta"] },
    { name: "_lakewarden/format pins delta", setup: (dir) => pinDelta(dir), argv: [] },
    { name: "detected (a Delta log and Iceberg metadata, explained by UniForm)", setup: async () => {}, argv: [] },
  ];
  it.each(ways)("$name: the dry run and the run leave metadata/ whole; the rest of VACUUM's set goes", async ({ setup, argv }) => {
    const { dir, metadata } = await tableWithIcebergMetadata(true);
    await setup(dir);
    // Rules: every tombstone is expired, so VACUUM takes every file the latest version does not name, but hidden ones.
    const expected = await vacuumAllExpired(dir, (await oracleLiveFiles(dir)).files, metadata);
    expect(expected.length).toBeGreaterThan(0);

    const dry = await cli("cleanup", dir, ...argv, "--dry-run", "--json");
    expect(dry.stderr).toBe("");
    expect(dry.code).toBe(0);
    expect(deletedBy(JSON.parse(dry.stdout) as Report)).toEqual(expected);
    const run = await cli("cleanup", dir, ...argv, "--json");
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as Report;
    expect(report.status).toBe("completed");
    expect(report.reference_check?.ok).toBe(true);
    expect(deletedBy(report)).toEqual(expected);
    for (const key of metadata) expect(existsSync(join(dir, key)), key).toBe(true);
  });
});

async function pinDelta(dir: string): Promise<void> {
  await mkdir(join(dir, "_lakewarden"), { recursive: true });
  await writeFile(join(dir, PIN), "delta\n");
}

describe("a stored format pin is re-checked against what the folder holds now", () => {
  it("pinned delta, and Iceberg metadata appeared beside the log with no UniForm to explain it: one clear error, nothing deleted", async () => {
    const { dir } = await tableWithIcebergMetadata(false);
    await pinDelta(dir);
    const before = await listKeys(dir);
    const run = await cli("cleanup", dir);
    expect(run.code).not.toBe(0);
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
    expect(run.stderr).toMatch(
      /_lakewarden\/format: pins delta, but the folder now also looks like an iceberg table \(metadata\/\); say which with --format delta\|iceberg, or delete _lakewarden\/format to detect again/,
    );
    expect(await listKeys(dir)).toEqual(before);
  });

  it("pinned iceberg on a folder that holds a Delta table only: one clear error naming both, nothing deleted", async () => {
    const dir = await copyFixture("delta", "simple_table");
    await setAllTimes(dir, new Date(Date.now() - 400 * DAY));
    await mkdir(join(dir, "_lakewarden"));
    await writeFile(join(dir, PIN), "iceberg\n");
    const before = await listKeys(dir);
    const run = await cli("cleanup", dir);
    expect(run.code).not.toBe(0);
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
    expect(run.stderr).toMatch(
      /_lakewarden\/format: pins iceberg, but the folder holds no iceberg version files under metadata\/ now and looks like a delta table \(_delta_log\/\); say which with --format iceberg\|delta/,
    );
    expect(await listKeys(dir)).toEqual(before);
  });
});
