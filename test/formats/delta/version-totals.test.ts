/**
 * Every version of a Delta table carries its numbers (live files, size, rows, deleted rows) from
 * the first `versions` on a fresh copy, with no head written and no cleanup run, and still after
 * `checkpoint` archives them; each number is compared with DuckDB replaying the same log
 * (read_ndjson over the commits, read_parquet over the checkpoint). A checkpoint that carries
 * only `stats_parsed` (no JSON `stats`) gives the rows from the struct; one with neither leaves
 * them unknown, never 0.
 */
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import { describe, expect, it } from "vitest";
import { BufferIO } from "../../../lib/cli/io.ts";
import { runCli } from "../../../lib/cli/run-cli.ts";
import { deltaFormat } from "../../../lib/formats/delta/delta-format.ts";
import { readHistory } from "../../../lib/head/timeline-source.ts";
import { runCheckpoint } from "../../../lib/maintenance/run-checkpoint.ts";
import { archiveVersions } from "../../../lib/checkpoint/archive.ts";
import type { VersionRecord } from "../../../lib/model/version-record.ts";
import { LocalStore } from "../../../lib/store/local-store.ts";
import { copyFixture } from "../../support/fixtures.ts";
import { oracleTotals } from "./duckdb-totals.ts";

/** The numbers of a record, in the oracle's terms. */
function numbers(record: VersionRecord) {
  return {
    files: record.total_data_files,
    size: record.total_files_size,
    dataFileRows: record.total_data_file_rows,
    deletedRows: record.total_deletion_file_rows,
    deletionFiles: record.total_deletion_files,
  };
}

async function expectOracleNumbers(dir: string, records: readonly VersionRecord[]): Promise<void> {
  expect(records.length).toBeGreaterThan(0);
  for (const record of records) {
    const oracle = await oracleTotals(dir, record.version);
    expect({ version: record.version, ...numbers(record) }).toEqual({ version: record.version, ...oracle });
    expect(record.total_fragments).toBe(oracle.files);
    expect(record.total_rows).toBe(oracle.dataFileRows === null ? null : oracle.dataFileRows - oracle.deletedRows);
  }
}

/** Rewrites every Parquet checkpoint of the copy with DuckDB, changing each add by `addExpression` (SQL over `add`). */
async function rewriteCheckpoints(dir: string, addExpression: string): Promise<string[]> {
  const log = join(dir, "_delta_log");
  const names = (await readdir(log)).filter((n) => /^\d{20}\.checkpoint\.parquet$/.test(n));
  const instance = await DuckDBInstance.create(":memory:");
  const connection = await instance.connect();
  try {
    for (const name of names) {
      const path = join(log, name);
      const tmp = `${path}.rewritten`;
      await connection.run(`COPY (SELECT * REPLACE (CASE WHEN add IS NULL THEN NULL ELSE ${addExpression} END AS add) FROM read_parquet('${path}')) TO '${tmp}' (FORMAT parquet)`);
      await connection.run(`COPY (SELECT * FROM read_parquet('${tmp}')) TO '${path}' (FORMAT parquet)`);
    }
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
  for (const name of await readdir(log)) if (name.endsWith(".rewritten")) await import("node:fs/promises").then((fs) => fs.rm(join(log, name)));
  return names;
}

describe("Delta version totals", () => {
  it.each(["basic-dv-with-checkpoint", "table_with_deletion_logs", "checkpoints_vacuumed", "multi-part-checkpoint", "checkpoint-v2-table"])(
    "%s: a fresh copy's history has every version's files, size and rows, as DuckDB replays them",
    async (name) => {
      const dir = await copyFixture("delta", name);
      const history = await readHistory(new LocalStore(dir));
      expect(history.sources.manifests).toBe(history.records.length);
      await expectOracleNumbers(dir, history.records);
    },
  );

  it("after `checkpoint`, the history read from lakewarden's checkpoint keeps the numbers", async () => {
    const dir = await copyFixture("delta", "table_with_deletion_logs");
    const store = new LocalStore(dir);
    const report = await runCheckpoint(store, { format: deltaFormat });
    expect(report.checkpoint.status).toBe("written");
    const history = await readHistory(new LocalStore(dir));
    expect(history.sources.checkpoint).toBe(history.records.length);
    expect(history.records.every((r) => r.total_rows !== null && r.total_files_size !== null)).toBe(true);
    await expectOracleNumbers(dir, history.records);
  });

  it("a checkpoint written without totals (by an older lakewarden) gets them from the next `checkpoint`", async () => {
    const dir = await copyFixture("delta", "table_with_deletion_logs");
    const store = new LocalStore(dir);
    // As an older lakewarden archived a fresh Delta table: records from the commit files alone.
    const files = await deltaFormat.listVersionFiles(store);
    const bare = await Promise.all(files.map((file) => deltaFormat.readRecord!(store, file)));
    expect(bare.every((r) => r.total_rows === null)).toBe(true);
    await archiveVersions(store, {
      previous: null,
      records: bare,
      liveVersions: new Set(files.map((f) => f.version)),
      taggedVersions: new Set(),
      tableFormat: "delta",
      now: new Date(),
    });
    expect((await readHistory(new LocalStore(dir))).records.every((r) => r.total_rows === null)).toBe(true);

    const report = await runCheckpoint(new LocalStore(dir), { format: deltaFormat });
    expect(report.checkpoint.status).toBe("replaced");
    const history = await readHistory(new LocalStore(dir));
    expect(history.sources.checkpoint).toBe(21);
    await expectOracleNumbers(dir, history.records);
  });

  it("`lakewarden versions` prints rows, size and files on every version of a fresh copy", async () => {
    const dir = await copyFixture("delta", "table_with_deletion_logs");
    const io = new BufferIO();
    expect(await runCli(["versions", dir], io)).toBe(0);
    const rows = io.stdout
      .trimEnd()
      .split("\n")
      .slice(1)
      .map((line) => line.split(/\s{2,}/));
    expect(rows.length).toBe(21);
    // version, timestamp, operation, fragments, rows, size, flags: none of the numbers is "-".
    for (const row of rows) expect(row.slice(3, 6).includes("-"), row.join(" | ")).toBe(false);
    const latest = await oracleTotals(dir, 20);
    expect(rows.at(-1)![4]).toBe(String(latest.dataFileRows! - latest.deletedRows));
  });

  it("a checkpoint with only stats_parsed gives the rows from the struct (versions, head files)", async () => {
    const dir = await copyFixture("delta", "checkpoints_vacuumed");
    // The log starts at checkpoint 5: versions 5 on are rebuilt from it, not from commits.
    const rewritten = await rewriteCheckpoints(dir, "struct_update(add, stats := NULL::VARCHAR)");
    expect(rewritten.length).toBeGreaterThan(0);
    const history = await readHistory(new LocalStore(dir));
    expect(history.records[0]!.version).toBe(5);
    expect(history.records[0]!.total_data_file_rows).not.toBeNull();
    await expectOracleNumbers(dir, history.records);

    const latest = await deltaFormat.readSnapshot(new LocalStore(dir), await deltaFormat.latestVersionFile(new LocalStore(dir)).then((f) => f!));
    const oracle = await oracleTotals(dir);
    expect(latest.liveFiles.reduce((sum, f) => sum + f.physicalRows, 0)).toBe(oracle.dataFileRows);
    expect(latest.record.total_data_file_rows).toBe(oracle.dataFileRows);
  });

  it("a checkpoint with neither stats nor stats_parsed leaves the rows unknown, not 0", async () => {
    const dir = await copyFixture("delta", "checkpoints_vacuumed");
    await rewriteCheckpoints(dir, "struct_update(add, stats := NULL::VARCHAR, stats_parsed := NULL)");
    const history = await readHistory(new LocalStore(dir));
    const fromCheckpoint = history.records.find((r) => r.version === 5)!;
    expect(fromCheckpoint.total_data_file_rows).toBeNull();
    expect(fromCheckpoint.total_rows).toBeNull();
    expect(fromCheckpoint.total_data_files).toBe((await oracleTotals(dir, 5)).files);
  });
});
