/**
 * On every fixture table, the versions lakewarden lists are exactly the commits in the log, with
 * the timestamp the protocol prescribes (in-commit timestamp where enabled, else the commit
 * file's modification time) and commitInfo's operation, all compared with DuckDB over the
 * commit files. Commit file times are set to distinct whole seconds on the copy (git keeps no
 * mtimes, and DuckDB's read_blob reports seconds).
 */
import { readdir, utimes } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { LocalStore } from "../../../lib/store/local-store.ts";
import { readDeltaVersions } from "../../../lib/formats/delta/versions.ts";
import { copyFixture, fixtureNames } from "../../support/fixtures.ts";
import { oracleCommits, oracleIctEnabled } from "./duckdb-oracle.ts";

const names = (await fixtureNames("delta")).filter((n) => n !== "simple_table_features");
const BASE_SECONDS = 1_700_000_000;

async function spreadCommitTimes(dir: string): Promise<void> {
  const log = join(dir, "_delta_log");
  for (const name of await readdir(log)) {
    const m = /^(\d{20})\.json$/.exec(name);
    if (!m) continue;
    const seconds = BASE_SECONDS + Number(m[1]) * 3600 + 7;
    await utimes(join(log, name), seconds, seconds);
  }
}

describe("Delta versions match DuckDB over the commit files", () => {
  it.each(names)("%s", async (name) => {
    const dir = await copyFixture("delta", name);
    await spreadCommitTimes(dir);
    const ours = await readDeltaVersions(new LocalStore(dir));
    const oracle = await oracleCommits(dir);
    const ict = await oracleIctEnabled(dir);
    expect(oracle.length).toBeGreaterThan(0);
    expect(ours.map((v) => v.version)).toEqual(oracle.map((c) => c.version));
    expect(ours.map((v) => v.operation)).toEqual(oracle.map((c) => c.operation));
    expect(ours.map((v) => v.timestampMillis)).toEqual(oracle.map((c) => (ict ? c.inCommitTimestamp : c.modifiedMillis)));
    expect(ours.every((v) => v.timestampSource === (ict ? "inCommitTimestamp" : "modificationTime"))).toBe(true);
  });

  it("cdc_ict_table takes in-commit timestamps, which differ from commitInfo.timestamp and the file time", async () => {
    const dir = await copyFixture("delta", "cdc_ict_table");
    await spreadCommitTimes(dir);
    const versions = await readDeltaVersions(new LocalStore(dir));
    expect(versions[1]!.timestampMillis).toBe(1683874206883);
    expect(versions[1]!.timestampSource).toBe("inCommitTimestamp");
  });

  it("checkpoints_vacuumed lists only the versions its log still holds (5 to 12)", async () => {
    const dir = await copyFixture("delta", "checkpoints_vacuumed");
    const versions = await readDeltaVersions(new LocalStore(dir));
    expect(versions.map((v) => v.version)).toEqual([5, 6, 7, 8, 9, 10, 11, 12]);
  });

  it("reads parameters as strings, metrics as numbers and the read version from commitInfo", async () => {
    const dir = await copyFixture("delta", "cdc_ict_table");
    const versions = await readDeltaVersions(new LocalStore(dir));
    const write = versions[1]!;
    expect(write.operation).toBe("WRITE");
    expect(write.operationParameters).toEqual({ mode: "Append", partitionBy: "[]" });
    expect(write.readVersion).toBe(0);
    expect(write.metrics).toMatchObject({ numFiles: 4, numOutputRows: 4, numOutputBytes: 2795 });
    expect(write.txnId).toBe("9906d50c-b00d-40c0-b7de-e538678b5ca9");
  });
});
