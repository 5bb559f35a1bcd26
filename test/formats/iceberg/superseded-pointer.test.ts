/**
 * A commit pointer (`--metadata-location`, a Glue entry's `metadata_location`) that names a metadata
 * file another one supersedes is a stale pointer: cleaning by it deletes every file only the newer
 * metadata reaches, the current snapshot's included. Evidence of a newer file: a metadata file of a
 * higher sequence under metadata/, a version hint above the pointer's sequence, or a metadata file
 * whose metadata-log names the pointer. Refused with one line naming both files, dry run alike,
 * nothing deleted; `--allow-superseded-metadata` (the library's `at(key, { allowSuperseded })`) is
 * the user's explicit word. The Glue path has no override.
 */
import { copyFile, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { BufferIO } from "../../../lib/cli/io.ts";
import { runCli } from "../../../lib/cli/run-cli.ts";
import { formatAtCatalogPointer } from "../../../lib/formats/catalog.ts";
import { icebergFormat } from "../../../lib/formats/iceberg/iceberg-format.ts";
import { parseJsonLossless, stringifyJsonLossless, type JsonValue } from "../../../lib/formats/iceberg/lossless-json.ts";
import { DAY_MS } from "../../../lib/formats/iceberg/retention.ts";
import { runCleanup } from "../../../lib/maintenance/run-cleanup.ts";
import { LocalStore } from "../../../lib/store/local-store.ts";
import { copyIcebergFixture, fileExists, icebirdLiveFiles, listFiles } from "../../support/iceberg-fixtures.ts";

async function cli(...argv: string[]) {
  const io = new BufferIO();
  const code = await runCli(argv, io);
  return { code, stdout: io.stdout, stderr: io.stderr };
}

async function bunnies(): Promise<string> {
  const copy = await copyIcebergFixture("spark-bunnies", { ageMs: 400 * DAY_MS });
  onTestFinished(copy.remove);
  return copy.dir;
}

const tableFiles = async (dir: string) => (await listFiles(dir)).filter((k) => !k.startsWith("_lakewarden/"));

/** Every file icebird says the current snapshot (v5) reads, checked to exist. */
async function currentFilesPresent(dir: string): Promise<void> {
  const live = await icebirdLiveFiles(dir, "v5.metadata.json");
  expect(live.length).toBeGreaterThan(0);
  for (const file of live) expect(await fileExists(dir, file.key), file.key).toBe(true);
}

async function expectRefused(dir: string, argv: string[], pointer: string, newer: RegExp): Promise<void> {
  const before = await tableFiles(dir);
  for (const dryRun of [["--dry-run"], []]) {
    const run = await cli("cleanup", dir, ...argv, ...dryRun);
    expect(run.code, run.stdout).not.toBe(0);
    const lines = run.stderr.trim().split("\n");
    expect(lines, run.stderr).toHaveLength(1);
    expect(lines[0]).toContain(pointer);
    expect(lines[0]).toMatch(newer);
    expect(lines[0]).toMatch(/superseded/);
    expect(lines[0]).toMatch(/nothing (written or )?deleted/);
    expect(await tableFiles(dir)).toEqual(before);
  }
  await currentFilesPresent(dir);
}

describe("a superseded commit pointer", () => {
  it("--metadata-location naming a metadata file newer ones supersede is refused, naming both; nothing deleted", async () => {
    const dir = await bunnies();
    await expectRefused(dir, ["--metadata-location", "metadata/v3.metadata.json"], "metadata/v3.metadata.json", /metadata\/v5\.metadata\.json/);
  });

  it("a version hint above the pointer's sequence is evidence too", async () => {
    const dir = await bunnies();
    // The newer metadata files are gone (a listing that missed them), the hint still says 5.
    await rm(join(dir, "metadata/v4.metadata.json"));
    await rm(join(dir, "metadata/v5.metadata.json"));
    const before = await tableFiles(dir);
    const run = await cli("cleanup", dir, "--metadata-location", "metadata/v3.metadata.json");
    expect(run.code).not.toBe(0);
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
    expect(run.stderr).toMatch(/metadata\/v3\.metadata\.json .*superseded.*version hint .*5/);
    expect(await tableFiles(dir)).toEqual(before);
  });

  it("a metadata file whose metadata-log names the pointer supersedes it, whatever the names", async () => {
    const dir = await bunnies();
    const location = (JSON.parse(await readFile(join(dir, "metadata/v5.metadata.json"), "utf8")) as { location: string }).location;
    // An older state under a name with no sequence, and a newer one whose log names it.
    await copyFile(join(dir, "metadata/v3.metadata.json"), join(dir, "metadata/old-state.metadata.json"));
    const newer = parseJsonLossless(await readFile(join(dir, "metadata/v5.metadata.json"), "utf8")) as Record<string, JsonValue>;
    newer["metadata-log"] = [...(newer["metadata-log"] as JsonValue[]), { "timestamp-ms": 1, "metadata-file": `${location}/metadata/old-state.metadata.json` }];
    await writeFile(join(dir, "metadata/new-state.metadata.json"), stringifyJsonLossless(newer, 2));
    await expectRefused(dir, ["--metadata-location", "metadata/old-state.metadata.json"], "metadata/old-state.metadata.json", /metadata\/new-state\.metadata\.json/);
  });

  it("catalog-named: a higher-numbered file written on top of the pointer supersedes it; a stray copy does not", async () => {
    const copy = await copyIcebergFixture("athena-example", { ageMs: 400 * DAY_MS });
    onTestFinished(copy.remove);
    const dir = copy.dir;
    const accepted = "metadata/00001-aaf0d033-d06b-43c7-be60-67f83abd4aca.metadata.json";
    const json = parseJsonLossless(await readFile(join(dir, accepted), "utf8")) as Record<string, JsonValue>;
    const location = String(json.location).replace(/\/+$/, "");
    // A byte copy under a higher number (a commit the catalog never took, not written on top of 00001).
    await copyFile(join(dir, accepted), join(dir, "metadata/00002-0b1e6f00-0000-4000-8000-000000000001.metadata.json"));
    const stray = await cli("cleanup", dir, "--metadata-location", accepted, "--dry-run", "--json");
    expect(stray.code, stray.stderr).toBe(0);
    // The next commit, written on top of 00001: the catalog may hold it already.
    json["metadata-log"] = [...((json["metadata-log"] as JsonValue[]) ?? []), { "timestamp-ms": 1, "metadata-file": `${location}/${accepted}` }];
    const next = "metadata/00002-0b1e6f00-0000-4000-8000-000000000002.metadata.json";
    await writeFile(join(dir, next), stringifyJsonLossless(json, 2));
    const before = await tableFiles(dir);
    const run = await cli("cleanup", dir, "--metadata-location", accepted);
    expect(run.code).not.toBe(0);
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
    expect(run.stderr).toContain(accepted);
    expect(run.stderr).toContain(next);
    expect(await tableFiles(dir)).toEqual(before);
  });

  it("--allow-superseded-metadata is the user's explicit word: the run cleans by the named file", async () => {
    const dir = await bunnies();
    const run = await cli("cleanup", dir, "--metadata-location", "metadata/v3.metadata.json", "--allow-superseded-metadata", "--json");
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as { status: string };
    expect(report.status).toBe("completed");
    // The library says it the same way.
    const store = new LocalStore(dir);
    await expect(runCleanup(store, { format: icebergFormat.at!("metadata/v3.metadata.json", { allowSuperseded: true }), dryRun: true })).resolves.toMatchObject({
      status: "dry-run",
    });
  });

  it("the flag is refused where it means nothing: without --metadata-location, or with --glue-table", async () => {
    const dir = await bunnies();
    const alone = await cli("cleanup", dir, "--allow-superseded-metadata", "--dry-run");
    expect(alone.code).toBe(2);
    expect(alone.stderr).toMatch(/--allow-superseded-metadata .*--metadata-location/);
    const glue = await cli("cleanup", dir, "--allow-superseded-metadata", "--glue-table", "db.t", "--dry-run");
    expect(glue.code).toBe(2);
    expect(glue.stderr).toMatch(/--allow-superseded-metadata .*--metadata-location/);
    // Through a catalog the pointer is the table's current metadata (a newer file the catalog never took is not
    // refused); what is refused is a removal commit after the catalog's entry moved.
    expect(glue.stderr).not.toMatch(/always refused/);
    expect(glue.stderr).toMatch(/catalog's pointer is the current metadata.*refused if the entry moved/);
  });

  it("the current metadata file as the pointer cleans as before", async () => {
    const dir = await bunnies();
    const run = await cli("cleanup", dir, "--metadata-location", "metadata/v5.metadata.json", "--dry-run", "--json");
    expect(run.code, run.stderr).toBe(0);
  });

  it("a Glue entry whose metadata_location lags a commit is refused, with no override", async () => {
    const dir = await bunnies();
    const store = new LocalStore(dir);
    const before = await tableFiles(dir);
    const { format } = formatAtCatalogPointer(store, {
      label: 'Glue table "bunnies" in database "lake"',
      tableType: "EXTERNAL_TABLE",
      parameters: { table_type: "ICEBERG", metadata_location: `${store.uri}/metadata/v4.metadata.json` },
    });
    for (const dryRun of [true, false]) {
      await expect(runCleanup(store, { format, dryRun })).rejects.toThrow(/metadata\/v4\.metadata\.json .*superseded.* metadata\/v5\.metadata\.json/);
      expect(await tableFiles(dir)).toEqual(before);
    }
    await currentFilesPresent(dir);
  });
});
