/**
 * `--retain-versions N` on a Delta table keeps the newest N versions readable, data included
 * (docs/cleanup.md: "the newest --retain-versions and pinned versions stay readable (log and data)"), even
 * when no log file is due and VACUUM's expired tombstones alone would let their files go. Proven
 * by an independent replay (DuckDB) of each retained version and the existence of every file it
 * names; everything else goes exactly as VACUUM decides.
 */
import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BufferIO } from "../../../lib/cli/io.ts";
import { runCli } from "../../../lib/cli/run-cli.ts";
import { copyFixture } from "../../support/fixtures.ts";
import { oracleChangeDataFiles, oracleCommits, oracleLiveFiles, oracleParquetRows } from "./duckdb-oracle.ts";
import type { OracleLiveFile } from "./duckdb-oracle.ts";
import { listKeys, setAllTimes, setLogTimes } from "./log-surgery.ts";
import { dvKeysOf, vacuumAllExpired } from "./vacuum-rules.ts";

const DAY = 86_400_000;
const namedBy = (files: readonly OracleLiveFile[]) => [...files.map((f) => f.path), ...dvKeysOf(files.map((f) => f.dvId))];

describe("Delta cleanup: --retain-versions keeps the data of the versions it retains", () => {
  // Data 60 days old, the log an hour old (no log file is due), every tombstone long expired.
  it.each(["simple_table", "basic-dv-with-checkpoint"])("%s: the newest 3 versions replay as before, the rest of VACUUM's set goes", async (name) => {
    const dir = await copyFixture("delta", name);
    const now = Date.now();
    await setAllTimes(dir, new Date(now - 60 * DAY));
    await setLogTimes(dir, () => new Date(now - 3_600_000));
    const latest = Math.max(...(await oracleCommits(dir)).map((c) => c.version));
    const retained = [latest - 2, latest - 1, latest];
    const before = new Map<number, OracleLiveFile[]>();
    for (const v of retained) before.set(v, (await oracleLiveFiles(dir, v)).files);
    const spared = retained.flatMap((v) => namedBy(before.get(v)!));
    const expected = await vacuumAllExpired(dir, before.get(latest)!, spared);
    // The case only proves something when VACUUM alone would take a retained version's file.
    expect((await vacuumAllExpired(dir, before.get(latest)!)).filter((k) => spared.includes(k))).not.toEqual([]);

    const io = new BufferIO();
    const code = await runCli(["cleanup", dir, "--retain-versions", "3", "--json"], io);
    expect(io.stderr).toBe("");
    expect(code).toBe(0);
    const report = JSON.parse(io.stdout) as { status: string; files: { key: string; action: string }[] };
    expect(report.status).toBe("completed");
    expect(
      report.files
        .filter((f) => f.action === "delete")
        .map((f) => f.key)
        .sort(),
    ).toEqual(expected);
    for (const v of retained) {
      const after = (await oracleLiveFiles(dir, v)).files;
      expect(after, `version ${v}`).toEqual(before.get(v));
      for (const key of namedBy(after)) expect(existsSync(join(dir, key)), `${key} (version ${v})`).toBe(true);
    }
    expect((await listKeys(dir)).filter((k) => expected.includes(k))).toEqual([]);
  });
});

describe("Delta cleanup: --retain-versions keeps the change data of the versions it retains", () => {
  // Every file 400 days old: VACUUM alone would take every change-data file (no add or tombstone names one).
  it.each(["cdc_ict_table", "checkpoint-cdf-table"])("%s: the _change_data/ files the retained commits' cdc actions name stay and read whole", async (name) => {
    const dir = await copyFixture("delta", name);
    await setAllTimes(dir, new Date(Date.now() - 400 * DAY));
    const commits = (await oracleCommits(dir)).map((c) => c.version);
    const retained = commits.slice(-5);
    const changeData = new Map<number, string[]>();
    for (const v of retained) changeData.set(v, await oracleChangeDataFiles(dir, v));
    const needed = [...changeData.values()].flat();
    expect(needed.length).toBeGreaterThan(0);
    const latest = (await oracleLiveFiles(dir)).files;
    const spared = [...needed];
    for (const v of retained) spared.push(...namedBy((await oracleLiveFiles(dir, v)).files));
    const expected = await vacuumAllExpired(dir, latest, spared);
    // The case only proves something when VACUUM alone would take a change-data file a retained commit names.
    expect((await vacuumAllExpired(dir, latest)).filter((k) => needed.includes(k))).not.toEqual([]);

    const io = new BufferIO();
    const code = await runCli(["cleanup", dir, "--retain-versions", "5", "--json"], io);
    expect(io.stderr).toBe("");
    expect(code).toBe(0);
    const report = JSON.parse(io.stdout) as { status: string; files: { key: string; action: string }[]; reference_check: { ok: boolean } };
    expect(report.status).toBe("completed");
    expect(report.reference_check.ok).toBe(true);
    expect(
      report.files
        .filter((f) => f.action === "delete")
        .map((f) => f.key)
        .sort(),
    ).toEqual(expected);
    for (const [v, files] of changeData) {
      for (const key of files) expect(existsSync(join(dir, key)), `${key} (version ${v})`).toBe(true);
      // A change-feed read of version v reads these files whole.
      if (files.length > 0) expect(await oracleParquetRows(files.map((k) => join(dir, k)))).toBeGreaterThan(0);
    }
  });

  it("change data a retained commit names but an earlier VACUUM already took does not stop the run, and is not reported missing", async () => {
    const dir = await copyFixture("delta", "cdc_ict_table");
    await setAllTimes(dir, new Date(Date.now() - 400 * DAY));
    const latest = Math.max(...(await oracleCommits(dir)).map((c) => c.version));
    const [gone, ...left] = await oracleChangeDataFiles(dir, latest);
    await rm(join(dir, gone!));

    const io = new BufferIO();
    const code = await runCli(["cleanup", dir, "--retain-versions", "5", "--json"], io);
    expect(io.stderr).toBe("");
    expect(code).toBe(0);
    const report = JSON.parse(io.stdout) as { status: string; reference_check: { ok: boolean; missing_before_run: unknown[] } };
    expect(report.status).toBe("completed");
    expect(report.reference_check).toMatchObject({ ok: true, missing_before_run: [] });
    for (const key of left) expect(existsSync(join(dir, key)), key).toBe(true);
  });
});
