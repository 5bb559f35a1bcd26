/**
 * An independent reader of a Delta version's totals for tests: the live files as the DuckDB
 * oracle replays them (duckdb-oracle.ts: which checkpoint, which files), and each live file's row
 * count and deletion-vector cardinality from the add that made it live in that same replay (the
 * checkpoint the oracle started from, then the commits after it, the latest add winning), read
 * with DuckDB's read_parquet and read_ndjson_objects. Rows come from the add's JSON `stats`, else
 * its `stats_parsed` struct; a file with neither has unknown rows, and so has the version.
 * Shares no code with lib/formats/delta/.
 */
import { readdir } from "node:fs/promises";
import { DuckDBInstance } from "@duckdb/node-api";
import { oracleLiveFiles } from "./duckdb-oracle.ts";

export interface OracleTotals {
  files: number;
  size: number;
  /** Null when any live file's row count is unknown. */
  dataFileRows: number | null;
  deletedRows: number;
  deletionFiles: number;
}

const sql = (text: string) => `'${text.replaceAll("'", "''")}'`;
const pad = (version: number) => String(version).padStart(20, "0");

/** One add's identity as the oracle writes it: decoded path, DV storage type + path (+ "@" offset). */
const ADD_COLUMNS = (json: string) => `
  url_decode(json_extract_string(${json}, '$.add.path')) AS path,
  COALESCE(json_extract_string(${json}, '$.add.deletionVector.storageType') || json_extract_string(${json}, '$.add.deletionVector.pathOrInlineDv')
           || COALESCE('@' || CAST(json_extract(${json}, '$.add.deletionVector.offset')::BIGINT AS VARCHAR), ''), '') AS dv_id,
  COALESCE(json_extract(json_extract_string(${json}, '$.add.stats'), '$.numRecords')::BIGINT,
           json_extract(${json}, '$.add.stats_parsed.numRecords')::BIGINT) AS num_records,
  json_extract(${json}, '$.add.deletionVector.cardinality')::BIGINT AS cardinality`;

export async function oracleTotals(tableDir: string, atVersion?: number): Promise<OracleTotals> {
  const live = await oracleLiveFiles(tableDir, atVersion);
  const log = `${tableDir}/_delta_log`;
  const names = await readdir(log);
  const commits = names.filter((n) => /^\d{20}\.json$/.test(n)).map((n) => Number(n.slice(0, 20)));
  const target = atVersion ?? Math.max(...commits);
  const cp = live.checkpointVersion;
  const sources: string[] = [];
  if (cp !== null) {
    const parquet = names.filter((n) => n.startsWith(`${pad(cp)}.checkpoint`) && n.endsWith(".parquet"));
    const json = names.filter((n) => n.startsWith(`${pad(cp)}.checkpoint.`) && n.endsWith(".json"));
    const fromParquet = (files: string[]) =>
      `SELECT -1 AS version, ${ADD_COLUMNS("j")} FROM (SELECT json_object('add', to_json(add)) AS j FROM read_parquet([${files.map(sql).join(", ")}], union_by_name = true) WHERE add IS NOT NULL)`;
    if (parquet.length > 0) sources.push(fromParquet(parquet.map((n) => `${log}/${n}`)));
    else if (json.length > 0) {
      sources.push(`SELECT -1 AS version, ${ADD_COLUMNS("json")} FROM read_ndjson_objects(${sql(`${log}/${json[0]!}`)}) WHERE json_extract(json, '$.add') IS NOT NULL`);
      const sidecars = (
        await query(
          `SELECT json_extract_string(json, '$.sidecar.path') AS p FROM read_ndjson_objects(${sql(`${log}/${json[0]!}`)}) WHERE json_extract(json, '$.sidecar') IS NOT NULL`,
        )
      ).map((r) => `${log}/_sidecars/${r.p as string}`);
      if (sidecars.length > 0) sources.push(fromParquet(sidecars));
    }
  }
  const after = commits.filter((v) => v <= target && (cp === null || v > cp)).map((v) => sql(`${log}/${pad(v)}.json`));
  if (after.length > 0) {
    sources.push(
      `SELECT CAST(regexp_extract(filename, '(\\d{20})\\.json$', 1) AS BIGINT) AS version, ${ADD_COLUMNS("json")}
       FROM read_ndjson_objects([${after.join(", ")}], filename = true) WHERE json_extract(json, '$.add') IS NOT NULL`,
    );
  }
  const adds =
    sources.length === 0
      ? []
      : await query(`SELECT path, dv_id, num_records, cardinality FROM (
      SELECT *, row_number() OVER (PARTITION BY path, dv_id ORDER BY version DESC) AS rn FROM (${sources.join(" UNION ALL ")})
    ) WHERE rn = 1`);
  const byId = new Map(adds.map((a) => [`${a.path as string}\u0000${a.dv_id as string}`, a]));
  let rows: number | null = 0;
  let deletedRows = 0;
  for (const file of live.files) {
    const add = byId.get(`${file.path}\u0000${file.dvId}`);
    if (!add) throw new Error(`oracle: no add for live file ${file.path} at version ${target}`);
    rows = rows === null || add.num_records === null ? null : rows + Number(add.num_records);
    deletedRows += add.cardinality === null ? 0 : Number(add.cardinality);
  }
  return {
    files: live.files.length,
    size: live.files.reduce((sum, f) => sum + f.size, 0),
    dataFileRows: rows,
    deletedRows,
    deletionFiles: live.files.filter((f) => f.dvId !== "").length,
  };
}

async function query(text: string): Promise<Record<string, unknown>[]> {
  const instance = await DuckDBInstance.create(":memory:");
  const connection = await instance.connect();
  try {
    return (await connection.runAndReadAll(text)).getRowObjectsJson() as Record<string, unknown>[];
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}
