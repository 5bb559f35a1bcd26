/**
 * Log cleanup keeps its boundary at a checkpoint proven readable (issue 20). A checkpoint whose
 * file, part or sidecar is damaged (truncated, random bytes, empty, missing) cannot be the one the
 * kept versions replay from: cleanup keeps the newest checkpoint that decodes whole and every
 * commit after it, or leaves the log alone, and says why in the plan. On the old code each case
 * deleted the commits below the damaged checkpoint and left the table unreadable.
 *
 * Every file is 400 days old, so Delta's 30-day log retention would clean up to the latest
 * checkpoint. Before the damage an independent reader (DuckDB) replays every version; afterwards
 * every version at or above the kept checkpoint replays to the same live files, passing over the
 * damaged checkpoint as a reader that falls back does, and the latest version's files all exist.
 */
import { existsSync } from "node:fs";
import { readFile, rm, stat, truncate, utimes, writeFile } from "node:fs/promises";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BufferIO } from "../../../lib/cli/io.ts";
import { runCli } from "../../../lib/cli/run-cli.ts";
import { copyFixture } from "../../support/fixtures.ts";
import { oracleLiveFiles } from "./duckdb-oracle.ts";
import type { OracleLiveFile } from "./duckdb-oracle.ts";
import { listKeys } from "./log-surgery.ts";
import { dvKeysOf } from "./vacuum-rules.ts";

const DAY = 86_400_000;
const LOG = "_delta_log/";
const namedBy = (files: readonly OracleLiveFile[]) => [...files.map((f) => f.path), ...dvKeysOf(files.map((f) => f.dvId))];

type Damage = "truncated" | "random bytes" | "empty" | "missing";

async function damage(path: string, how: Damage): Promise<void> {
  if (how === "missing") return rm(path);
  if (how === "empty") return truncate(path, 0);
  if (how === "truncated") return truncate(path, 2000);
  await writeFile(path, randomBytes((await stat(path)).size));
}

interface Case {
  fixture: string;
  /** The damaged file, relative to the table root. */
  file: string;
  how: Damage;
  /** The checkpoint version the damage makes unusable. */
  damaged: number;
  /** From the rules: the newest checkpoint left that decodes whole at or below the latest version (null: none). */
  kept: number | null;
  /** False when the listing itself shows the checkpoint cannot be used (gone, or a part absent): nothing to read, nothing to report. */
  reported?: false;
}

const BDV_40 = `${LOG}00000000000000000040.checkpoint.parquet`;
const MULTIPART_1 = `${LOG}00000000000000000001.checkpoint.0000000001.0000000002.parquet`;
const V2_8 = `${LOG}00000000000000000008.checkpoint.e5ac4dc4-be27-4106-8a55-609707487f83.json`;
const SIDECAR_8 = `${LOG}_sidecars/00000000000000000008.checkpoint.0000000001.0000000001.d55fb2cb-b8d3-4362-8572-c52142a9da1f.parquet`;

const cases: Case[] = [
  { fixture: "basic-dv-with-checkpoint", file: BDV_40, how: "truncated", damaged: 40, kept: 30 },
  { fixture: "basic-dv-with-checkpoint", file: BDV_40, how: "random bytes", damaged: 40, kept: 30 },
  { fixture: "basic-dv-with-checkpoint", file: BDV_40, how: "empty", damaged: 40, kept: 30 },
  { fixture: "multi-part-checkpoint", file: MULTIPART_1, how: "truncated", damaged: 1, kept: null },
  { fixture: "checkpoint-v2-table", file: SIDECAR_8, how: "truncated", damaged: 8, kept: 6 },
  { fixture: "checkpoint-v2-table", file: SIDECAR_8, how: "missing", damaged: 8, kept: 6 },
  { fixture: "checkpoint-v2-table", file: V2_8, how: "truncated", damaged: 8, kept: 6 },
  // Handled before issue 20 too, kept here so the matrix covers every damage of each role.
  { fixture: "basic-dv-with-checkpoint", file: BDV_40, how: "missing", damaged: 40, kept: 30, reported: false },
  { fixture: "multi-part-checkpoint", file: MULTIPART_1, how: "missing", damaged: 1, kept: null, reported: false },
];

interface Report {
  status: string;
  files: { key: string; kind: string; action: string; reason: string }[];
  versions: { version: number; keep: boolean; reason: string }[];
  reference_check: { ok: boolean; missing_before_run: unknown[] } | null;
  errors: string[];
}

async function cli(...argv: string[]) {
  const io = new BufferIO();
  const code = await runCli(argv, io);
  return { code, stdout: io.stdout, stderr: io.stderr };
}

const deletedBy = (report: Report) =>
  report.files
    .filter((f) => f.action === "delete")
    .map((f) => f.key)
    .sort();

/** Log files of versions below `kept` (commits, .crc files, checkpoints): what log cleanup removes from the rules. */
function logBelow(keys: readonly string[], kept: number | null): string[] {
  if (kept === null) return [];
  return keys.filter((k) => k.startsWith(LOG) && /^\d{20}\.(json|crc|checkpoint\..*)$/.test(k.slice(LOG.length)) && Number(k.slice(LOG.length, LOG.length + 20)) < kept).sort();
}

/** Each version's live files on the undamaged table (DuckDB), once per fixture and range. */
const undamaged = new Map<string, Promise<Map<number, OracleLiveFile[]>>>();
function liveFilesBefore(dir: string, fixture: string, from: number, to: number): Promise<Map<number, OracleLiveFile[]>> {
  const id = `${fixture}/${from}-${to}`;
  let read = undamaged.get(id);
  if (!read) {
    read = (async () => {
      const out = new Map<number, OracleLiveFile[]>();
      for (let v = from; v <= to; v++) out.set(v, (await oracleLiveFiles(dir, v)).files);
      return out;
    })();
    undamaged.set(id, read);
  }
  return read;
}

async function setAllTimes(dir: string, time: Date): Promise<void> {
  for (const key of await listKeys(dir)) await utimes(join(dir, key), time, time);
}

describe("Delta log cleanup keeps its boundary at a checkpoint that decodes whole", () => {
  it.each(cases)("$fixture, $file $how: the boundary is checkpoint $kept, nothing a kept version needs is deleted", async (c) => {
    const dir = await copyFixture("delta", c.fixture);
    const commits = (await listKeys(dir)).filter((k) => /^_delta_log\/\d{20}\.json$/.test(k)).map((k) => Number(k.slice(LOG.length, LOG.length + 20)));
    const latest = Math.max(...commits);
    const from = c.kept ?? Math.min(...commits);
    const before = await liveFilesBefore(dir, c.fixture, from, latest);

    await damage(join(dir, c.file), c.how);
    await setAllTimes(dir, new Date(Date.now() - 400 * DAY));
    const keys = await listKeys(dir);
    const expectedLog = logBelow(keys, c.kept);

    const dry = await cli("cleanup", dir, "--dry-run", "--json");
    expect(dry.stderr).toBe("");
    expect(dry.code).toBe(0);
    const plan = JSON.parse(dry.stdout) as Report;
    expect(deletedBy(plan).filter((k) => k.startsWith(LOG))).toEqual(expectedLog);
    // The plan says why the damaged checkpoint is not the boundary, on the file it kept.
    const reported = plan.files.filter((f) => f.action === "keep" && f.kind === "checkpoint");
    if (c.reported === false) expect(reported).toEqual([]);
    else {
      expect(reported.length).toBeGreaterThan(0);
      for (const file of reported) expect(file.reason).toMatch(new RegExp(`^checkpoint ${c.damaged} cannot be used: `));
      const text = await cli("cleanup", dir, "--dry-run");
      expect(text.stdout).toMatch(new RegExp(`checkpoint ${c.damaged} cannot be used: .*${c.kept === null ? "no log cleanup" : `log cleanup keeps checkpoint ${c.kept}`}`));
    }

    const run = await cli("cleanup", dir, "--json");
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as Report;
    expect(report.status).toBe("completed");
    expect(report.errors).toEqual([]);
    expect(report.reference_check?.ok).toBe(true);
    expect(deletedBy(report)).toEqual(deletedBy(plan));
    const left = new Set(await listKeys(dir));
    for (const key of deletedBy(report)) expect(left.has(key), key).toBe(false);

    // Every version from the boundary on replays as before; the latest's files are all there.
    for (let v = from; v <= latest; v++) {
      expect((await oracleLiveFiles(dir, v, { fallBack: true })).files, `version ${v}`).toEqual(before.get(v));
    }
    for (const key of namedBy(before.get(latest)!)) expect(existsSync(join(dir, key)), key).toBe(true);
    // The damaged file is left as it was found: cleanup never touches what it cannot read.
    if (c.how !== "missing") expect(left.has(c.file)).toBe(true);
  });
});

describe("a checkpoint that decodes, but to what its writer did not write", () => {
  it("basic-dv-with-checkpoint, one byte of checkpoint 40's add.path page changed under an intact footer: refused in one line, nothing deleted", async () => {
    const dir = await copyFixture("delta", "basic-dv-with-checkpoint");
    const path = join(dir, BDV_40);
    const bytes = await readFile(path);
    const { parquetMetadata } = await import("hyparquet");
    const metadata = parquetMetadata(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) as ArrayBuffer);
    const chunk = metadata.row_groups[0]!.columns.find((c) => c.meta_data!.path_in_schema.join(".") === "add.path")!.meta_data!;
    // Snappy keeps literals as they are: "part-" in the page becomes "pbrt-", and the page still decompresses.
    const at = bytes.indexOf(Buffer.from("part-"), Number(chunk.data_page_offset));
    expect(at).toBeGreaterThan(0);
    expect(at).toBeLessThan(Number(chunk.data_page_offset) + Number(chunk.total_compressed_size));
    bytes[at + 1] = "b".charCodeAt(0);
    await writeFile(path, bytes);
    await setAllTimes(dir, new Date(Date.now() - 400 * DAY));
    const before = await listKeys(dir);

    for (const argv of [["--dry-run"], []]) {
      const run = await cli("cleanup", dir, ...argv);
      expect(run.code).not.toBe(0);
      expect(run.stderr.trim().split("\n")).toHaveLength(1);
      expect(run.stderr).toMatch(
        /the latest version \(46\) replays from checkpoint 40, which cannot be used: .*00000000000000000040\.checkpoint\.parquet: row group 0, column add\.path: page 0 at byte \d+: checksum mismatch; nothing deleted/,
      );
    }
    expect((await listKeys(dir)).filter((k) => !k.startsWith("_lakewarden/"))).toEqual(before);
  });
});
