/**
 * `lakewarden versions`, `head write`, `head show` and `cleanup --dry-run` on a copy of a Delta
 * fixture, in-process (runCli + BufferIO), with no --format: the registry detects Delta. What
 * they print is compared with DuckDB's reading of the same files.
 */
import { utimes } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BufferIO } from "../../../lib/cli/io.ts";
import { runCli } from "../../../lib/cli/run-cli.ts";
import { copyFixture, fixtureNames } from "../../support/fixtures.ts";
import { oracleCommits, oracleLiveFiles } from "./duckdb-oracle.ts";
import { listKeys, setAllTimes } from "./log-surgery.ts";
import { vacuumAllExpired } from "./vacuum-rules.ts";

async function cli(...argv: string[]) {
  const io = new BufferIO();
  const code = await runCli(argv, io);
  return { code, stdout: io.stdout, stderr: io.stderr };
}

const DAY = 86_400_000;
const names = (await fixtureNames("delta")).filter((n) => n !== "simple_table_features");

describe("lakewarden on a Delta table", () => {
  it("versions --json, head write, head show --json and cleanup --dry-run --json", async () => {
    const dir = await copyFixture("delta", "table_with_deletion_logs");
    // Everything old, commit v at day v (whole seconds, so DuckDB's read_blob agrees).
    const base = Date.parse("2026-01-01T06:00:00Z");
    await setAllTimes(dir, new Date(base));
    for (let v = 0; v <= 20; v++) {
      const time = new Date(base + v * DAY);
      await utimes(join(dir, "_delta_log", `${String(v).padStart(20, "0")}.json`), time, time);
    }
    const commits = await oracleCommits(dir);
    const live = await oracleLiveFiles(dir);

    const versions = await cli("versions", dir, "--json");
    expect(versions.stderr).toBe("");
    expect(versions.code).toBe(0);
    const records = JSON.parse(versions.stdout) as { version: number; timestamp_millis: number; operation_type: string | null; version_id: string }[];
    expect(records.map((r) => [r.version, r.version_id, r.timestamp_millis, r.operation_type])).toEqual(
      commits.map((c) => [c.version, String(c.version), c.modifiedMillis, c.operation]),
    );

    const write = await cli("head", "write", dir, "--json");
    expect(write.code).toBe(0);
    expect(JSON.parse(write.stdout)).toMatchObject({ action: "created", version: 20 });

    const show = await cli("head", "show", dir, "--json");
    expect(show.code).toBe(0);
    const shown = JSON.parse(show.stdout) as { version: number; source: string; files: { paths: string[]; size: number; deletion_file: string | null }[] };
    expect(shown).toMatchObject({ version: 20, source: "head" });
    expect(shown.files.map((f) => [f.paths[0], f.size]).sort()).toEqual(live.files.map((f) => [f.path, f.size]).sort());
    expect(shown.files.every((f) => f.deletion_file?.startsWith("deletion_vector_"))).toBe(true);

    const keys = await listKeys(dir);
    const cleanup = await cli("cleanup", dir, "--dry-run", "--json");
    expect(cleanup.code).toBe(0);
    const report = JSON.parse(cleanup.stdout) as { format: string; status: string; files: { key: string; action: string }[] };
    expect(report).toMatchObject({ format: "delta", status: "dry-run" });
    // Now is long after every commit: every version but the latest is older than 30 days; the
    // latest (20) replays from checkpoint 20, so every commit, .crc and checkpoint below 20 may go.
    const planned = report.files.filter((f) => f.action === "delete").map((f) => f.key);
    expect(planned).toContain("_delta_log/00000000000000000000.json");
    expect(planned).not.toContain("_delta_log/00000000000000000020.json");
    expect(planned).not.toContain("_delta_log/00000000000000000020.checkpoint.parquet");
    for (const file of live.files) expect(planned).not.toContain(file.path);
    // From the rules: log cleanup takes commits and .crc files 0-19 and checkpoint 10; VACUUM
    // (every tombstone long expired) takes every visible file that is neither live nor a live
    // file's DV (here the DV file version 20 tombstoned); a dry run changes nothing.
    const pad = (v: number) => String(v).padStart(20, "0");
    const expected = [
      ...Array.from({ length: 20 }, (_, v) => [`_delta_log/${pad(v)}.json`, `_delta_log/${pad(v)}.crc`]).flat(),
      `_delta_log/${pad(10)}.checkpoint.parquet`,
      ...(await vacuumAllExpired(dir, live.files)),
    ].sort();
    expect(expected.filter((k) => !k.startsWith("_delta_log/"))).toHaveLength(1);
    expect(planned.sort()).toEqual(expected);
    expect(await listKeys(dir)).toEqual(keys);
  });

  it("cleanup deletes what the plan said, the latest version still replays, and versions keeps the whole history (cleaned-up versions archived)", async () => {
    const dir = await copyFixture("delta", "table_with_deletion_logs");
    const base = Date.parse("2026-01-01T06:00:00Z");
    await setAllTimes(dir, new Date(base));
    for (let v = 0; v <= 20; v++) {
      const time = new Date(base + v * DAY);
      await utimes(join(dir, "_delta_log", `${String(v).padStart(20, "0")}.json`), time, time);
    }
    const commits = await oracleCommits(dir);
    const live = await oracleLiveFiles(dir);
    const plan = JSON.parse((await cli("cleanup", dir, "--dry-run", "--json")).stdout) as { files: { key: string; action: string }[] };
    const planned = plan.files
      .filter((f) => f.action === "delete")
      .map((f) => f.key)
      .sort();

    const run = await cli("cleanup", dir, "--json");
    expect(run.code).toBe(0);
    const keys = await listKeys(dir);
    for (const key of planned) expect(keys).not.toContain(key);
    expect((await oracleLiveFiles(dir)).files).toEqual(live.files);
    for (const file of live.files) expect(keys).toContain(file.path);

    const versions = await cli("versions", dir, "--json");
    expect(versions.code).toBe(0);
    const records = JSON.parse(versions.stdout) as { version: number; timestamp_millis: number; operation_type: string | null; is_cleaned_up: boolean }[];
    expect(records.map((r) => [r.version, r.timestamp_millis, r.operation_type])).toEqual(commits.map((c) => [c.version, c.modifiedMillis, c.operation]));
    expect(records.filter((r) => r.is_cleaned_up).map((r) => r.version)).toEqual(Array.from({ length: 20 }, (_, v) => v));
  });

  it.each(names)("%s: head write, then head show --json lists DuckDB's live files", async (name) => {
    const dir = await copyFixture("delta", name);
    const live = await oracleLiveFiles(dir);
    const write = await cli("head", "write", dir, "--json");
    expect(write.stderr).toBe("");
    expect(write.code).toBe(0);
    const show = await cli("head", "show", dir, "--json");
    expect(show.code).toBe(0);
    const shown = JSON.parse(show.stdout) as { source: string; files: { paths: string[]; size: number }[] };
    expect(shown.source).toBe("head");
    expect(shown.files.map((f) => `${f.paths[0]} ${f.size}`).sort()).toEqual(live.files.map((f) => `${f.path} ${f.size}`).sort());
  });
});
