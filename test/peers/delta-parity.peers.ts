/**
 * Delta parity, file by file: delta-rs's own maintenance (VACUUM with the table's retention, then
 * cleanup_metadata) and lakewarden's cleanup run on two copies of the same table, every file dated
 * 40 days back (commits one second apart), so both tools' retentions have expired for everything
 * but what a version still needs. The deleted sets are compared and every difference is put in
 * a class (docs/peers.md explains each); what stays readable is checked with DuckDB's replay of
 * the log (an independent reader): every live data file and deletion vector of the latest
 * version must exist after lakewarden's cleanup. `npm run test:peers`.
 */
import { access, mkdir, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { BufferIO } from "../../lib/cli/io.ts";
import { runCli } from "../../lib/cli/run-cli.ts";
import { oracleLiveFiles } from "../formats/delta/duckdb-oracle.ts";
import { listKeys } from "../formats/delta/log-surgery.ts";
import { dvKeysOf } from "../formats/delta/vacuum-rules.ts";
import { copyFixture } from "../support/fixtures.ts";
import { RESULTS_DIR, runPeerScript } from "./peer-scripts.ts";

/** Writer-made tables with deletion vectors, classic, multi-part and V2 checkpoints, change data, hidden files. */
const TABLES = [
  "table_with_deletion_logs",
  "basic-dv-with-checkpoint",
  "multi-part-checkpoint",
  "checkpoint-v2-table",
  "cdc_ict_table",
  "checkpoint-cdf-table",
  "simple_table",
  "table-with-dv-small",
  "delta-0.2.0",
  "table_with_liquid_clustering",
];

interface DeltaRsClean {
  vacuum: { ok?: string[]; error?: string };
  cleanup_metadata: { ok?: unknown; error?: string };
  deleted: string[];
}

/** What kind of file a table-relative key is, in the words of the parity table. */
function kindOf(key: string): string {
  const name = key.split("/").at(-1)!;
  if (key.startsWith("_delta_log/_sidecars/")) return "sidecar";
  if (key.startsWith("_delta_log/")) {
    if (name.startsWith(".")) return "hidden log file (.crc of Hadoop)";
    if (/^\d{20}\.json$/.test(name)) return "commit";
    if (/^\d{20}\.crc$/.test(name)) return "version checksum (.crc)";
    if (/\.checkpoint\./.test(name)) return "checkpoint";
    if (/\.compacted\.json$/.test(name)) return "log compaction";
    return "other log file";
  }
  if (key.startsWith("_change_data/") || key.includes("/_change_data/")) return "change data";
  if (name.startsWith("deletion_vector_")) return "deletion vector";
  if (name.startsWith(".")) return "hidden data-side file";
  return "data";
}

const DAY_MS = 86_400_000;
async function dateEverything(dir: string): Promise<void> {
  const base = Date.now() - 40 * DAY_MS;
  for (const key of await listKeys(dir)) {
    const m = /^_delta_log\/(\d{20})\./.exec(key);
    const time = new Date(base + (m ? Number(m[1]) * 1000 : 0));
    await utimes(join(dir, key), time, time);
  }
}

const exists = (path: string): Promise<boolean> =>
  access(path).then(
    () => true,
    () => false,
  );

/** Live files and deletion vectors of the latest version (DuckDB's replay) that are missing. */
async function missingLive(dir: string): Promise<string[]> {
  const { files } = await oracleLiveFiles(dir);
  const keys = [...files.map((f) => f.path), ...dvKeysOf(files.map((f) => f.dvId))];
  const missing: string[] = [];
  for (const key of keys) if (!(await exists(join(dir, key)))) missing.push(key);
  return missing;
}

interface Row {
  table: string;
  lakewarden: { deleted: number; exit: number; error?: string; missing_live: string[] };
  delta_rs: { deleted: number; vacuum_error?: string; cleanup_error?: string; missing_live: string[] | string };
  /** kind -> keys only one tool deleted. */
  only_lakewarden: Record<string, string[]>;
  only_delta_rs: Record<string, string[]>;
}
const rows: Row[] = [];

function byKind(keys: readonly string[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const key of keys) (out[kindOf(key)] ??= []).push(key);
  return out;
}

describe("Delta parity with delta-rs: VACUUM + cleanup_metadata against lakewarden's cleanup", () => {
  afterAll(async () => {
    await mkdir(RESULTS_DIR, { recursive: true });
    await writeFile(join(RESULTS_DIR, "delta-parity.json"), `${JSON.stringify(rows, null, 2)}\n`);
  });

  it.each(TABLES)("%s: the same table cleaned by each; lakewarden's copy keeps the latest version whole", async (table) => {
    const ours = await copyFixture("delta", table);
    const theirs = await copyFixture("delta", table);
    await dateEverything(ours);
    await dateEverything(theirs);
    const before = await listKeys(ours);

    const io = new BufferIO();
    const exit = await runCli(["cleanup", ours, "--json", "--retain-versions", "1"], io);
    const oursAfter = new Set(await listKeys(ours));
    const oursDeleted = before.filter((k) => !oursAfter.has(k));

    const peer = (await runPeerScript<DeltaRsClean>("deltars_peer.py", ["clean", theirs], 300_000)).result;
    const theirsDeleted = peer.deleted.filter((k) => !k.startsWith("_lakewarden/"));
    const theirsSet = new Set(theirsDeleted);
    const oursSet = new Set(oursDeleted);

    const row: Row = {
      table,
      lakewarden: { deleted: oursDeleted.length, exit, ...(exit === 0 ? {} : { error: io.stderr.trim().split("\n")[0] }), missing_live: exit === 0 ? await missingLive(ours) : [] },
      delta_rs: {
        deleted: theirsDeleted.length,
        ...(peer.vacuum.error ? { vacuum_error: peer.vacuum.error } : {}),
        ...(peer.cleanup_metadata.error ? { cleanup_error: peer.cleanup_metadata.error } : {}),
        missing_live: await missingLive(theirs).catch((error: Error) => `unreadable: ${error.message.split("\n")[0]}`),
      },
      only_lakewarden: byKind(oursDeleted.filter((k) => !theirsSet.has(k))),
      only_delta_rs: byKind(theirsDeleted.filter((k) => !oursSet.has(k))),
    };
    rows.push(row);
    console.log(
      `${table}: lakewarden ${row.lakewarden.deleted} (exit ${exit}), delta-rs ${row.delta_rs.deleted}; only lakewarden ${JSON.stringify(Object.fromEntries(Object.entries(row.only_lakewarden).map(([k, v]) => [k, v.length])))}, only delta-rs ${JSON.stringify(Object.fromEntries(Object.entries(row.only_delta_rs).map(([k, v]) => [k, v.length])))}`,
    );

    // lakewarden never leaves the latest version unreadable, whatever it deleted or refused.
    expect(row.lakewarden.missing_live).toEqual([]);
    // Nothing of lakewarden's own is in either comparison, and it never deletes what a kept version names.
    expect(oursDeleted.some((k) => k.startsWith("_lakewarden/"))).toBe(false);
  });
});
