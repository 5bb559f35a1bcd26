/**
 * `lakewarden versions` as a user runs it: the real executable against real LanceDB
 * datasets, compared field by field with LanceDB's own listVersions().
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildLanceDataset, makeTempDir, removeDir, type LanceDataset } from "../support/lance-datasets.ts";
import { startFauxqsServer, type FauxqsHandle } from "../support/fauxqs.ts";
import { expectRecordsMatchLanceDb } from "../versions/lancedb-comparison.ts";
import { lastLine, runLakewarden } from "./run-executable.ts";
import type { VersionRecord } from "../../lib/model/version-record.ts";
import { VERSION_RECORD_FIELDS } from "../../lib/model/version-record.ts";

async function versionsJson(table: string, env: Record<string, string> = {}): Promise<VersionRecord[]> {
  const result = await runLakewarden(["versions", table, "--json"], env);
  expect(result.stderr).toBe("");
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout) as VersionRecord[];
}

describe("lakewarden versions on local disk", () => {
  const datasets: LanceDataset[] = [];
  let dir: string;

  beforeAll(async () => {
    dir = await makeTempDir("cli-versions-");
    datasets.push(await buildLanceDataset({ dbUri: `${dir}/v2`, naming: "v2" }));
    datasets.push(await buildLanceDataset({ dbUri: `${dir}/v1`, naming: "v1" }));
  });
  afterAll(async () => {
    for (const dataset of datasets) dataset.close();
    await removeDir(dir);
  });

  it.each(["v2", "v1"])("matches LanceDB's listVersions() field by field (%s naming)", async (naming) => {
    const dataset = datasets.find((d) => d.naming === naming)!;
    const records = await versionsJson(dataset.tableUri);
    expect(records.length).toBe(dataset.written.length);
    for (const record of records) expect(Object.keys(record)).toEqual([...VERSION_RECORD_FIELDS]);
    await expectRecordsMatchLanceDb(records, dataset.table);
    expect(
      records
        .filter((r) => r.is_tagged)
        .map((r) => r.version)
        .sort(),
    ).toEqual(Object.values(dataset.tags).sort());
  });

  it("accepts a file:// URI and ends stderr with the request counts under --stats", async () => {
    const dataset = datasets[0]!;
    const result = await runLakewarden(["versions", `file://${dataset.tableUri}`, "--json", "--stats"]);
    expect(result.code).toBe(0);
    const stats = JSON.parse(lastLine(result.stderr)) as { requests: Record<string, number> };
    expect(Object.keys(stats.requests).sort()).toEqual(["delete", "get", "head", "list", "put"]);
    expect(stats.requests.get).toBeGreaterThanOrEqual(dataset.written.length);
    expect(stats.requests.put).toBe(0);
    expect(stats.requests.delete).toBe(0);
  });

  it("reads no manifest once a current head holds the versions", async () => {
    const dataset = datasets[0]!;
    const before = await versionsJson(dataset.tableUri);
    const written = await runLakewarden(["head", "write", dataset.tableUri]);
    expect(written.code).toBe(0);
    const result = await runLakewarden(["versions", dataset.tableUri, "--json", "--stats"]);
    expect(JSON.parse(result.stdout)).toEqual(before);
    const { requests } = JSON.parse(lastLine(result.stderr)) as { requests: Record<string, number> };
    // The head, plus one GET per tag file: no manifest is read, however many versions there are.
    expect(requests.get).toBe(1 + Object.keys(dataset.tags).length);
  });

  it("prints a readable table without --json", async () => {
    const result = await runLakewarden(["versions", datasets[0]!.tableUri]);
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^version\s+timestamp\s+operation/);
    expect(lines.length).toBe(datasets[0]!.written.length + 1);
    expect(result.stdout).toContain("tagged");
  });
});

describe("lakewarden versions on S3 (fauxqs)", () => {
  let server: FauxqsHandle;
  let dataset: LanceDataset;

  beforeAll(async () => {
    server = await startFauxqsServer({ buckets: ["lake"] });
    dataset = await buildLanceDataset({ dbUri: "s3://lake/db", storageOptions: { ...server.lanceStorageOptions } });
  });
  afterAll(async () => {
    dataset?.close();
    await server?.stop();
  });

  it("matches LanceDB's listVersions() field by field", async () => {
    const records = await versionsJson(dataset.tableUri, server.awsEnv);
    await expectRecordsMatchLanceDb(records, dataset.table);
  });
});
