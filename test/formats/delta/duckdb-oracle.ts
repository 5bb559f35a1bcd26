/**
 * An independent reader of Delta logs for tests: DuckDB's built-in `read_ndjson_objects`,
 * `read_blob` and `read_parquet`, with the protocol's rules written out in SQL here, sharing no
 * code with lib/formats/delta/. It answers two questions about a table folder:
 *   - which commits the log holds, with operation, in-commit timestamp and file time;
 *   - which files are live at the latest version, replayed from the newest checkpoint
 *     (classic, multi-part, or V2 JSON with its Parquet sidecars) plus the commits after it.
 */
import { DuckDBInstance } from "@duckdb/node-api";
import type { DuckDBConnection } from "@duckdb/node-api";

export interface OracleCommit {
  version: number;
  operation: string | null;
  inCommitTimestamp: number | null;
  modifiedMillis: number;
}

export interface OracleLiveFile {
  /** URL-decoded path. */
  path: string;
  /** storageType + pathOrInlineDv (+ "@" + offset), "" without a DV. */
  dvId: string;
  size: number;
}

function sqlString(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

async function withConnection<T>(fn: (connection: DuckDBConnection) => Promise<T>): Promise<T> {
  const instance = await DuckDBInstance.create(":memory:");
  const connection = await instance.connect();
  try {
    return await fn(connection);
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

async function rows(connection: DuckDBConnection, sql: string): Promise<Record<string, unknown>[]> {
  const reader = await connection.runAndReadAll(sql);
  return reader.getRowObjectsJson() as Record<string, unknown>[];
}

const COMMIT_NAME = String.raw`(\d{20})\.json$`;

export async function oracleCommits(tableDir: string): Promise<OracleCommit[]> {
  const log = `${tableDir}/_delta_log`;
  return withConnection(async (c) => {
    const result = await rows(
      c,
      `WITH lines AS (
         SELECT filename, json FROM read_ndjson_objects(${sqlString(`${log}/*.json`)}, filename = true)
         WHERE regexp_matches(filename, ${sqlString(`/${COMMIT_NAME}`)})
       ),
       info AS (
         SELECT filename,
                json_extract_string(json, '$.commitInfo.operation') AS operation,
                json_extract(json, '$.commitInfo.inCommitTimestamp')::BIGINT AS ict
         FROM lines WHERE json_extract(json, '$.commitInfo') IS NOT NULL
       ),
       files AS (
         SELECT filename, epoch_ms(last_modified) AS modified FROM read_blob(${sqlString(`${log}/*.json`)})
         WHERE regexp_matches(filename, ${sqlString(`/${COMMIT_NAME}`)})
       )
       SELECT CAST(regexp_extract(files.filename, ${sqlString(COMMIT_NAME)}, 1) AS BIGINT) AS version,
              info.operation, info.ict, files.modified
       FROM files LEFT JOIN info USING (filename) ORDER BY version`,
    );
    return result.map((r) => ({
      version: Number(r.version),
      operation: (r.operation as string | null) ?? null,
      inCommitTimestamp: r.ict === null || r.ict === undefined ? null : Number(r.ict),
      modifiedMillis: Number(r.modified),
    }));
  });
}

/**
 * Live files of the latest version (or of `atVersion`). The checkpoint used is the newest version that has a
 * classic checkpoint, a complete multi-part set, or a V2 JSON checkpoint; `checkpointVersion`
 * says which one the oracle picked, so a test can show both readers started from the same one.
 */
/**
 * `fallBack`: a checkpoint that cannot be read is skipped for the next older one (or the commits
 * alone), as a reader that tolerates a damaged checkpoint does; without it the replay fails.
 */
export async function oracleLiveFiles(
  tableDir: string,
  atVersion?: number,
  options: { fallBack?: boolean } = {},
): Promise<{ checkpointVersion: number | null; files: OracleLiveFile[] }> {
  if (!options.fallBack) return replayFrom(tableDir, atVersion, () => true);
  const skipped = new Set<number>();
  for (;;) {
    try {
      return await replayFrom(tableDir, atVersion, (version) => !skipped.has(version));
    } catch (error) {
      const at = (error as { checkpointVersion?: number }).checkpointVersion;
      if (at === undefined || skipped.has(at)) throw error;
      skipped.add(at);
    }
  }
}

async function replayFrom(
  tableDir: string,
  atVersion: number | undefined,
  usableCheckpoint: (version: number) => boolean,
): Promise<{ checkpointVersion: number | null; files: OracleLiveFile[] }> {
  const log = `${tableDir}/_delta_log`;
  const { readdir } = await import("node:fs/promises");
  const names = await readdir(log);
  const commits = names.filter((n) => /^\d{20}\.json$/.test(n)).map((n) => Number(n.slice(0, 20)));
  const latest = atVersion ?? Math.max(...commits);
  // Candidate checkpoints per version, newest first.
  const checkpoints = new Map<number, { parquet: string[]; json: string[] }>();
  const parts = new Map<string, { version: number; expected: number; files: string[] }>();
  for (const name of names) {
    let m = /^(\d{20})\.checkpoint\.parquet$/.exec(name);
    if (m) {
      const v = Number(m[1]);
      checkpoints.set(v, { parquet: [`${log}/${name}`], json: [] });
      continue;
    }
    m = /^(\d{20})\.checkpoint\.(\d{10})\.(\d{10})\.parquet$/.exec(name);
    if (m) {
      const key = `${m[1]}/${m[3]}`;
      const group = parts.get(key) ?? { version: Number(m[1]), expected: Number(m[3]), files: [] };
      group.files.push(`${log}/${name}`);
      parts.set(key, group);
      continue;
    }
    m = /^(\d{20})\.checkpoint\.[^.]+\.json$/.exec(name);
    if (m && !checkpoints.has(Number(m[1]))) checkpoints.set(Number(m[1]), { parquet: [], json: [`${log}/${name}`] });
  }
  for (const group of parts.values()) {
    if (group.files.length === group.expected && !checkpoints.has(group.version)) checkpoints.set(group.version, { parquet: group.files, json: [] });
  }
  const usable = [...checkpoints.keys()].filter((v) => v <= latest && usableCheckpoint(v)).sort((a, b) => b - a);
  const checkpointVersion = usable[0] ?? null;

  return withConnection(async (c) => {
    if (checkpointVersion !== null) {
      // The checkpoint read alone first, so a failure names it (the caller may fall back).
      const cp = checkpoints.get(checkpointVersion)!;
      try {
        if (cp.parquet.length > 0) await rows(c, `SELECT count(*) FROM read_parquet([${cp.parquet.map(sqlString).join(", ")}], union_by_name = true)`);
        else {
          const sidecars = await rows(
            c,
            `SELECT json_extract_string(json, '$.sidecar.path') AS p FROM read_ndjson_objects(${sqlString(cp.json[0]!)}) WHERE json_extract(json, '$.sidecar') IS NOT NULL`,
          );
          if (sidecars.length > 0) await rows(c, `SELECT count(*) FROM read_parquet([${sidecars.map((r) => sqlString(`${log}/_sidecars/${r.p as string}`)).join(", ")}])`);
        }
      } catch (error) {
        throw Object.assign(new Error(`checkpoint ${checkpointVersion} cannot be read: ${(error as Error).message}`), { checkpointVersion });
      }
    }
    const sources: string[] = [];
    if (checkpointVersion !== null) {
      const cp = checkpoints.get(checkpointVersion)!;
      if (cp.parquet.length > 0) {
        sources.push(parquetAdds(cp.parquet.map(sqlString).join(", "), checkpointVersion));
      } else {
        // V2 JSON checkpoint: adds inline, or in the sidecars its `sidecar` actions name.
        const sidecars = await rows(
          c,
          `SELECT json_extract_string(json, '$.sidecar.path') AS p FROM read_ndjson_objects(${sqlString(cp.json[0]!)}) WHERE json_extract(json, '$.sidecar') IS NOT NULL`,
        );
        sources.push(jsonAdds(`read_ndjson_objects(${sqlString(cp.json[0]!)})`, String(checkpointVersion)));
        if (sidecars.length > 0) {
          const files = sidecars.map((r) => sqlString(`${log}/_sidecars/${r.p as string}`)).join(", ");
          sources.push(parquetAdds(files, checkpointVersion));
        }
      }
    }
    const after = commits.filter((v) => v <= latest && (checkpointVersion === null || v > checkpointVersion)).map((v) => sqlString(`${log}/${String(v).padStart(20, "0")}.json`));
    if (after.length > 0) {
      const from = `read_ndjson_objects([${after.join(", ")}], filename = true)`;
      const version = `CAST(regexp_extract(filename, ${sqlString(COMMIT_NAME)}, 1) AS BIGINT)`;
      sources.push(jsonAdds(from, version));
      sources.push(`SELECT ${version} AS version, 'remove' AS kind, json_extract_string(json, '$.remove.path') AS path, NULL AS size,
                 json_extract_string(json, '$.remove.deletionVector.storageType') AS st,
                 json_extract_string(json, '$.remove.deletionVector.pathOrInlineDv') AS pdv,
                 json_extract(json, '$.remove.deletionVector.offset')::BIGINT AS off
               FROM ${from} WHERE json_extract(json, '$.remove') IS NOT NULL`);
    }
    const result = await rows(
      c,
      `WITH actions AS (${sources.join(" UNION ALL ")}),
       keyed AS (
         SELECT version, kind, url_decode(path) AS path, size,
                COALESCE(st || pdv || COALESCE('@' || CAST(off AS VARCHAR), ''), '') AS dv_id
         FROM actions
       ),
       last AS (
         SELECT *, row_number() OVER (PARTITION BY path, dv_id ORDER BY version DESC, kind = 'add' DESC) AS rn FROM keyed
       )
       SELECT path, dv_id, size FROM last WHERE rn = 1 AND kind = 'add' ORDER BY path, dv_id`,
    );
    return {
      checkpointVersion,
      files: result.map((r) => ({ path: r.path as string, dvId: r.dv_id as string, size: Number(r.size) })),
    };
  });
}

function jsonAdds(from: string, version: string): string {
  return `SELECT ${version} AS version, 'add' AS kind, json_extract_string(json, '$.add.path') AS path,
            json_extract(json, '$.add.size')::BIGINT AS size,
            json_extract_string(json, '$.add.deletionVector.storageType') AS st,
            json_extract_string(json, '$.add.deletionVector.pathOrInlineDv') AS pdv,
            json_extract(json, '$.add.deletionVector.offset')::BIGINT AS off
          FROM ${from} WHERE json_extract(json, '$.add') IS NOT NULL`;
}

/** Adds of Parquet checkpoint files, through JSON so that columns an old writer did not write (deletionVector) read as NULL. */
function parquetAdds(fileList: string, version: number): string {
  return jsonAdds(`(SELECT json_object('add', to_json(add)) AS json FROM read_parquet([${fileList}], union_by_name = true) WHERE add IS NOT NULL)`, String(version));
}

/** Whether the latest protocol and metaData in the commits enable in-commit timestamps (writer feature + property). */
export async function oracleIctEnabled(tableDir: string): Promise<boolean> {
  const log = `${tableDir}/_delta_log`;
  return withConnection(async (c) => {
    const result = await rows(
      c,
      `WITH lines AS (
         SELECT CAST(regexp_extract(filename, ${sqlString(COMMIT_NAME)}, 1) AS BIGINT) AS version, json
         FROM read_ndjson_objects(${sqlString(`${log}/*.json`)}, filename = true)
         WHERE regexp_matches(filename, ${sqlString(`/${COMMIT_NAME}`)})
       )
       SELECT
         (SELECT list_contains(CAST(json_extract(json, '$.protocol.writerFeatures') AS VARCHAR[]), 'inCommitTimestamp')
            FROM lines WHERE json_extract(json, '$.protocol') IS NOT NULL ORDER BY version DESC LIMIT 1) AS feature,
         (SELECT json_extract_string(json, '$.metaData.configuration."delta.enableInCommitTimestamps"')
            FROM lines WHERE json_extract(json, '$.metaData') IS NOT NULL ORDER BY version DESC LIMIT 1) AS property`,
    );
    return result[0]?.feature === true && result[0]?.property === "true";
  });
}

/** The change-data files (URL-decoded paths) the `cdc` actions of commit `version` name. */
export async function oracleChangeDataFiles(tableDir: string, version: number): Promise<string[]> {
  const commit = `${tableDir}/_delta_log/${String(version).padStart(20, "0")}.json`;
  return withConnection(async (c) => {
    const result = await rows(
      c,
      `SELECT url_decode(json_extract_string(json, '$.cdc.path')) AS path FROM read_ndjson_objects(${sqlString(commit)}) WHERE json_extract(json, '$.cdc') IS NOT NULL ORDER BY path`,
    );
    return result.map((r) => r.path as string);
  });
}

/** The rows in Parquet files, read whole by DuckDB (throws on a file it cannot read). */
export async function oracleParquetRows(paths: readonly string[]): Promise<number> {
  if (paths.length === 0) return 0;
  return withConnection(async (c) => {
    const result = await rows(c, `SELECT count(*)::BIGINT AS n FROM read_parquet([${paths.map(sqlString).join(", ")}], union_by_name = true)`);
    return Number(result[0]!.n);
  });
}
