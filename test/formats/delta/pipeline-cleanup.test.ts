/**
 * `cleanup` on Delta tables through the pipeline (runCleanup and the CLI, as the Lambda runs it)
 * deletes exactly what Delta's rules say: VACUUM by tombstones, log cleanup below the kept
 * checkpoint, checkpointProtection. Each case writes its expected deleted set from the rules
 * (with the live files DuckDB finds, not lakewarden); afterwards every version that should stay
 * readable replays (DuckDB) to the same live files as before and every file it names exists.
 */
import { existsSync, utimesSync, writeFileSync } from "node:fs";
import { copyFile, readFile, rm, truncate, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BufferIO } from "../../../lib/cli/io.ts";
import { runCli } from "../../../lib/cli/run-cli.ts";
import { deltaFormat } from "../../../lib/formats/delta/delta-format.ts";
import { createPin } from "../../../lib/pins/pins.ts";
import { runCleanup } from "../../../lib/maintenance/run-cleanup.ts";
import { measureStorage } from "../../../lib/measure/measure-storage.ts";
import { LocalStore } from "../../../lib/store/local-store.ts";
import { copyFixture } from "../../support/fixtures.ts";
import { oracleChangeDataFiles, oracleCommits, oracleLiveFiles } from "./duckdb-oracle.ts";
import type { OracleLiveFile } from "./duckdb-oracle.ts";
import { appendCommit, latestProtocolAndMetadata, listKeys, setAllTimes, setLogTimes } from "./log-surgery.ts";
import { dvKeysOf, vacuumAllExpired } from "./vacuum-rules.ts";

const DAY = 86_400_000;
const pad = (v: number) => String(v).padStart(20, "0");
const range = (from: number, to: number) => Array.from({ length: Math.max(0, to - from) }, (_, i) => from + i);

async function cli(...argv: string[]) {
  const io = new BufferIO();
  const code = await runCli(argv, io);
  return { code, stdout: io.stdout, stderr: io.stderr };
}

interface Report {
  status: string;
  policy: Record<string, { value: unknown; source: string }> | null;
  versions_removed: number[];
  protection: { boundary: number; result: string; reason: string } | null;
  files: { key: string; kind: string; action: string; reason: string }[];
  files_kept_reported: number;
  errors: string[];
  /** As runCleanup returns it (camelCase inside) or as the CLI prints it (snake_case). */
  reference_check: { ok: boolean; missing_before_run?: unknown[]; missingBeforeRun?: unknown[] } | null;
}

/** The post-delete check found every file kept versions need, none missing before the run either. */
function expectCheckClean(report: Report): void {
  expect(report.reference_check?.ok).toBe(true);
  expect(report.reference_check?.missing_before_run ?? report.reference_check?.missingBeforeRun).toEqual([]);
}

const deletedBy = (report: Report) =>
  report.files
    .filter((f) => f.action === "delete")
    .map((f) => f.key)
    .sort();
const withoutOwnFiles = (keys: readonly string[]) => keys.filter((k) => !k.startsWith("_lakewarden/"));

async function logBytes(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const key of await listKeys(dir)) if (key.startsWith("_delta_log/")) out.set(key, (await readFile(join(dir, key))).toString("base64"));
  return out;
}

/** Versions DuckDB can rebuild from the files there: from commit 0, or from the oldest checkpoint. */
async function rebuildable(dir: string): Promise<number[]> {
  const names = (await listKeys(dir)).filter((k) => k.startsWith("_delta_log/")).map((k) => k.slice("_delta_log/".length));
  const commits = names
    .filter((n) => /^\d{20}\.json$/.test(n))
    .map((n) => Number(n.slice(0, 20)))
    .sort((a, b) => a - b);
  const checkpoints = names.filter((n) => /^\d{20}\.checkpoint\./.test(n)).map((n) => Number(n.slice(0, 20)));
  const first = commits.includes(0) ? 0 : Math.min(...checkpoints);
  return commits.filter((v) => v >= first);
}

/** Every rebuildable version's live files (DuckDB). */
async function replayAll(dir: string, versions: readonly number[]): Promise<Map<number, OracleLiveFile[]>> {
  const out = new Map<number, OracleLiveFile[]>();
  for (const v of versions) out.set(v, (await oracleLiveFiles(dir, v)).files);
  return out;
}

const namedBy = (files: readonly OracleLiveFile[]) => [...files.map((f) => f.path), ...dvKeysOf(files.map((f) => f.dvId))];

/**
 * From the rules: a version stays readable when its commits are kept (at or above the kept
 * checkpoint) and every file it names survives VACUUM. Those versions must replay as before,
 * with every file they name present; the latest is always one of them.
 */
async function assertReadableAfter(dir: string, before: Map<number, OracleLiveFile[]>, options: { from: number; deleted: readonly string[]; latest: number }): Promise<number[]> {
  const deleted = new Set(options.deleted);
  const readable = [...before.entries()].filter(([v, files]) => v >= options.from && namedBy(files).every((k) => !deleted.has(k))).map(([v]) => v);
  expect(readable).toContain(options.latest);
  for (const v of readable) {
    const after = (await oracleLiveFiles(dir, v)).files;
    expect(after, `version ${v}`).toEqual(before.get(v));
    for (const key of namedBy(after)) expect(existsSync(join(dir, key)), `${key} (version ${v})`).toBe(true);
  }
  return readable;
}

describe("Delta cleanup through the pipeline: VACUUM", () => {
  // Data files 60 days old, the log young (so no log cleanup): `cleanup` is VACUUM alone.
  it.each([
    "simple_table",
    "basic-dv-with-checkpoint",
    "table-with-dv-small",
    "checkpoint-cdf-table",
    "table_with_partitioning_mapping",
    "cdc_ict_table",
    "checkpoint-v2-table",
    "table_with_deletion_logs",
    "delta-0.2.0",
  ])("%s: the CLI deletes VACUUM's set file by file and leaves _delta_log/ byte for byte", async (name) => {
    const dir = await copyFixture("delta", name);
    const now = Date.now();
    await setAllTimes(dir, new Date(now - 60 * DAY));
    await setLogTimes(dir, () => new Date(now - 3_600_000));
    const versions = await rebuildable(dir);
    const latest = versions.at(-1)!;
    const before = await replayAll(dir, versions);
    const log = await logBytes(dir);
    const keys = await listKeys(dir);
    // Rules: every tombstone in these tables is long expired, so VACUUM keeps only the live
    // files of the latest version, their DV files, the log and hidden paths; lakewarden keeps
    // the change data the latest commit wrote too (the retained version's change feed).
    const expected = await vacuumAllExpired(dir, before.get(latest)!, await oracleChangeDataFiles(dir, latest));

    const run = await cli("cleanup", dir, "--json");
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as Report;
    expect(report.status).toBe("completed");
    expect(report.versions_removed).toEqual([]);
    expect(deletedBy(report)).toEqual(expected);
    expect(withoutOwnFiles(await listKeys(dir))).toEqual(keys.filter((k) => !expected.includes(k)));
    expect(await logBytes(dir)).toEqual(log);
    expectCheckClean(report);
    await assertReadableAfter(dir, before, { from: 0, deleted: expected, latest });
  });

  it("a tombstone within the retention keeps its file, so the version before the remove stays readable too", async () => {
    const dir = await copyFixture("delta", "simple_table");
    const now = new Date("2027-03-01T12:00:00Z");
    await setAllTimes(dir, new Date(now.getTime() - 60 * DAY));
    const live = await oracleLiveFiles(dir);
    const latest = Math.max(...(await oracleCommits(dir)).map((c) => c.version));
    const removed = live.files[0]!.path;
    await appendCommit(
      dir,
      latest + 1,
      [{ commitInfo: { operation: "DELETE", timestamp: now.getTime() - DAY } }, { remove: { path: removed, deletionTimestamp: now.getTime() - DAY, dataChange: true } }],
      new Date(now.getTime() - DAY),
    );
    const versions = await rebuildable(dir);
    const before = await replayAll(dir, versions);
    // Rules: the new tombstone is one day old, within the default 7 days: its file stays.
    const expected = await vacuumAllExpired(dir, before.get(latest + 1)!, [removed]);
    expect(expected).not.toContain(removed);

    const report = (await runCleanup(new LocalStore(dir), { format: deltaFormat, now: () => now })) as unknown as Report;
    expect(report.status).toBe("completed");
    expect(deletedBy(report)).toEqual(expected);
    expect(existsSync(join(dir, removed))).toBe(true);
    const readable = await assertReadableAfter(dir, before, { from: 0, deleted: expected, latest: latest + 1 });
    expect(readable).toContain(latest);
  });
});

describe("Delta cleanup through the pipeline: files younger than VACUUM's retention", () => {
  it("are kept and reported with why (as on Lance): the dry run lists them, `storage` counts them within the safety window, the run leaves them", async () => {
    const dir = await copyFixture("delta", "simple_table");
    const now = new Date();
    await setAllTimes(dir, new Date(now.getTime() - 60 * DAY));
    const live = (await oracleLiveFiles(dir)).files;
    // Two files no version names: one as old as the table, one written an hour ago (a commit in progress, maybe).
    const [old, young] = ["part-00000-old-stray.snappy.parquet", "part-00000-young-stray.snappy.parquet"];
    await copyFile(join(dir, live[0]!.path), join(dir, old));
    await utimes(join(dir, old), new Date(now.getTime() - 60 * DAY), new Date(now.getTime() - 60 * DAY));
    await copyFile(join(dir, live[0]!.path), join(dir, young));
    await utimes(join(dir, young), new Date(now.getTime() - 3_600_000), new Date(now.getTime() - 3_600_000));
    // Rules: every tombstone is expired, so VACUUM takes every unnamed file but the young one.
    const expected = await vacuumAllExpired(dir, live, [young]);
    expect(expected).toContain(old);

    const dry = (await runCleanup(new LocalStore(dir), { format: deltaFormat, now: () => now, dryRun: true })) as unknown as Report;
    expect(deletedBy(dry)).toEqual(expected);
    const kept = dry.files.filter((f) => f.action === "keep");
    expect(kept.map((f) => [f.key, f.kind])).toEqual([[young, "data"]]);
    expect(kept[0]!.reason).toMatch(/^VACUUM keeps it: unreferenced, last modified .*, within the VACUUM retention 7 days: may belong to a commit in progress$/);
    expect(dry.files_kept_reported).toBe(1);
    const text = await cli("cleanup", dir, "--dry-run");
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(new RegExp(`^\\s+keep\\s+data\\s+.*${young.replace(/\./g, "\\.")}\\s+VACUUM keeps it: `, "m"));

    const storage = await measureStorage(new LocalStore(dir), { format: deltaFormat, now });
    const size = (await readFile(join(dir, young))).length;
    expect(storage.parts.other.by_reason.within_safety_window).toEqual({ files: 1, bytes: size });

    const report = (await runCleanup(new LocalStore(dir), { format: deltaFormat, now: () => now })) as unknown as Report;
    expect(report.status).toBe("completed");
    expect(deletedBy(report)).toEqual(expected);
    expect(report.files.filter((f) => f.action === "keep").map((f) => f.key)).toEqual([young]);
    expect(existsSync(join(dir, young))).toBe(true);
    expect(existsSync(join(dir, old))).toBe(false);
  });
});

describe("Delta cleanup through the pipeline: lakewarden's settings never shorten the table's retentions", () => {
  // As the Lambda runs it: its deployment defaults (7 days, here 1 day for the safety window) arrive as settings.
  const settings = { olderThanMs: 7 * DAY, safetyWindowMs: DAY };

  it("delta.deletedFileRetentionDuration = 30 days keeps a 10-day-old tombstone's file, whatever the safety window", async () => {
    const dir = await copyFixture("delta", "simple_table");
    const now = new Date("2027-03-01T12:00:00Z");
    await setAllTimes(dir, new Date(now.getTime() - 60 * DAY));
    const { metaData } = await latestProtocolAndMetadata(dir);
    const live = await oracleLiveFiles(dir);
    const latest = Math.max(...(await oracleCommits(dir)).map((c) => c.version));
    const removed = live.files[0]!.path;
    await appendCommit(
      dir,
      latest + 1,
      [
        { commitInfo: { operation: "DELETE" } },
        { metaData: { ...metaData, configuration: { ...(metaData.configuration as Record<string, string>), "delta.deletedFileRetentionDuration": "interval 30 days" } } },
        { remove: { path: removed, deletionTimestamp: now.getTime() - 10 * DAY, dataChange: true } },
      ],
      new Date(now.getTime() - 10 * DAY),
    );
    const after = await oracleLiveFiles(dir);
    // Rules: the table's 30 days, not the 1-day setting: the tombstone holds its file.
    const expected = await vacuumAllExpired(dir, after.files, [removed]);
    const report = (await runCleanup(new LocalStore(dir), { format: deltaFormat, now: () => now, settings })) as unknown as Report;
    expect(report.status).toBe("completed");
    expect(deletedBy(report)).toEqual(expected);
    expect(existsSync(join(dir, removed))).toBe(true);
    // The report says what decided: the table's retentions, which the settings could not shorten.
    expect(report.policy?.safety_window).toEqual({
      value: "30d",
      source: "Delta VACUUM: table property delta.deletedFileRetentionDuration; option 1d only lengthens it, never shortens it",
    });
    expect(report.policy?.older_than).toEqual({
      value: "30d",
      source: "Delta log cleanup: delta.logRetentionDuration's default (not set on the table); option 7d only lengthens it, never shortens it",
    });
  });

  it("delta.logRetentionDuration = 60 days keeps every commit younger than that, whatever older-than says", async () => {
    const dir = await copyFixture("delta", "table_with_deletion_logs");
    const BASE = Date.parse("2026-01-01T06:00:00Z");
    const { metaData } = await latestProtocolAndMetadata(dir);
    await appendCommit(dir, 21, [
      { commitInfo: { operation: "SET TBLPROPERTIES" } },
      { metaData: { ...metaData, configuration: { ...(metaData.configuration as Record<string, string>), "delta.logRetentionDuration": "interval 60 days" } } },
    ]);
    await setAllTimes(dir, new Date(BASE));
    await setLogTimes(dir, (v) => new Date(BASE + v * DAY));
    // 40 days after the last commit: 7 days would take commits 0-19; the table's 60 days takes none.
    const now = new Date(BASE + 21 * DAY + 40 * DAY);
    const expected = await vacuumAllExpired(dir, (await oracleLiveFiles(dir)).files);
    const report = (await runCleanup(new LocalStore(dir), { format: deltaFormat, now: () => now, settings })) as unknown as Report;
    expect(report.status).toBe("completed");
    expect(report.versions_removed).toEqual([]);
    expect(deletedBy(report)).toEqual(expected);
    expect(report.policy?.older_than).toEqual({
      value: "60d",
      source: "Delta log cleanup: table property delta.logRetentionDuration; option 7d only lengthens it, never shortens it",
    });
    // A longer setting does lengthen it, and the report says so.
    const longer = (await runCleanup(new LocalStore(dir), { format: deltaFormat, now: () => now, settings: { olderThanMs: 90 * DAY }, dryRun: true })) as unknown as Report;
    expect(longer.policy?.older_than).toEqual({ value: "90d", source: "option, which lengthens 60d (Delta log cleanup: table property delta.logRetentionDuration)" });
    // Unset, the table's value is the default the policy starts from: it alone decides.
    const unset = (await runCleanup(new LocalStore(dir), { format: deltaFormat, now: () => now, dryRun: true })) as unknown as Report;
    expect(unset.policy?.older_than).toEqual({ value: "60d", source: "Delta log cleanup: table property delta.logRetentionDuration" });
  });
});

describe("Delta cleanup through the pipeline: log cleanup", () => {
  // table_with_deletion_logs: commits 0-20 one day apart, checkpoints 10 and 20, a .crc per version.
  const BASE = Date.parse("2026-01-01T06:00:00Z");
  /** A `now` whose log cutoff (midnight UTC, 30 days back) falls after commit `c` and before c+1. */
  const nowForCutoffCommit = (c: number, retentionDays = 30) => new Date(BASE + (c + 1) * DAY + retentionDays * DAY + 6 * 3_600_000);

  const cases: { name: string; cutoffCommit: number; properties?: Record<string, string>; retentionDays?: number; keptCheckpoint: number | null; deletedCheckpoints: number[] }[] =
    [
      { name: "cutoff between the checkpoints: checkpoint 10 is kept, commits and .crc 0-9 go", cutoffCommit: 14, keptCheckpoint: 10, deletedCheckpoints: [] },
      { name: "cutoff at the latest checkpoint: 0-19 and checkpoint 10 go", cutoffCommit: 20, keptCheckpoint: 20, deletedCheckpoints: [10] },
      {
        name: "delta.logRetentionDuration = 2 days moves the cutoff",
        cutoffCommit: 14,
        retentionDays: 2,
        properties: { "delta.logRetentionDuration": "interval 2 days" },
        keptCheckpoint: 10,
        deletedCheckpoints: [],
      },
      {
        name: "delta.enableExpiredLogCleanup = false: no log file goes, VACUUM still runs",
        cutoffCommit: 20,
        properties: { "delta.enableExpiredLogCleanup": "false" },
        keptCheckpoint: null,
        deletedCheckpoints: [],
      },
    ];

  it.each(cases)("$name", async (c) => {
    const dir = await copyFixture("delta", "table_with_deletion_logs");
    const now = nowForCutoffCommit(c.cutoffCommit, c.retentionDays);
    let latest = 20;
    if (c.properties) {
      const { metaData } = await latestProtocolAndMetadata(dir);
      await appendCommit(dir, 21, [
        { commitInfo: { operation: "SET TBLPROPERTIES", readVersion: 20 } },
        { metaData: { ...metaData, configuration: { ...(metaData.configuration as Record<string, string>), ...c.properties } } },
      ]);
      latest = 21;
    }
    await setAllTimes(dir, new Date(BASE));
    await setLogTimes(dir, (v) => (v <= 20 ? new Date(BASE + v * DAY) : new Date(now.getTime() - 3_600_000)));
    const commits = await oracleCommits(dir);
    const before = await replayAll(dir, range(0, latest + 1));

    const kept = c.keptCheckpoint ?? 0;
    const expected = [
      ...range(0, kept).flatMap((v) => [`_delta_log/${pad(v)}.json`, `_delta_log/${pad(v)}.crc`]),
      ...c.deletedCheckpoints.map((v) => `_delta_log/${pad(v)}.checkpoint.parquet`),
      ...(await vacuumAllExpired(dir, before.get(latest)!)),
    ].sort();

    const report = (await runCleanup(new LocalStore(dir), { format: deltaFormat, now: () => now })) as unknown as Report;
    expect(report.status).toBe("completed");
    expect(report.versions_removed).toEqual(range(0, kept));
    expect(deletedBy(report)).toEqual(expected);
    // Log files go before data files, commits before checkpoints.
    const order = report.files.filter((f) => f.action === "delete").map((f) => f.kind);
    if (c.deletedCheckpoints.length > 0) expect(order.lastIndexOf("commit")).toBeLessThan(order.indexOf("checkpoint"));
    expectCheckClean(report);
    const readable = await assertReadableAfter(dir, before, { from: kept, deleted: expected, latest });
    // Kept in the log, but VACUUM took a file they name: cleaned up too.
    const unreadable = [...before.keys()].filter((v) => v >= kept && !readable.includes(v));

    // History survives: `versions` lists every commit, the removed ones and those VACUUM made unreadable as cleaned up.
    const versions = await cli("versions", dir, "--json");
    expect(versions.code).toBe(0);
    const records = JSON.parse(versions.stdout) as { version: number; timestamp_millis: number; operation_type: string | null; is_cleaned_up: boolean }[];
    expect(records.map((r) => [r.version, r.timestamp_millis, r.operation_type])).toEqual(commits.map((x) => [x.version, x.modifiedMillis, x.operation]));
    expect(records.filter((r) => r.is_cleaned_up).map((r) => r.version)).toEqual([...range(0, kept), ...unreadable]);
  });

  it.each([
    { name: "--retain-versions 8 keeps versions 13-20 readable: the kept checkpoint is 10, not 20", retain: 8, pin: null },
    { name: "a reader pin on version 15 keeps it readable: the kept checkpoint is 10, and the files 15 names stay", retain: undefined, pin: 15 },
  ])("$name", async (c) => {
    const dir = await copyFixture("delta", "table_with_deletion_logs");
    await setAllTimes(dir, new Date(BASE));
    await setLogTimes(dir, (v) => new Date(BASE + v * DAY));
    const now = nowForCutoffCommit(20);
    const store = new LocalStore(dir);
    if (c.pin !== null) await createPin(store, { version: c.pin, ttlMs: 3_600_000, now });
    const before = await replayAll(dir, range(0, 21));
    // Rules: Delta alone would keep checkpoint 20; lakewarden keeps the newest checkpoint at or
    // below the oldest version that must stay readable (13, or the pinned 15): checkpoint 10.
    // VACUUM spares the files of the versions that stay readable for lakewarden's own reasons.
    const mustStay = c.pin !== null ? [c.pin, 20] : range(13, 21);
    const spared = mustStay.flatMap((v) => namedBy(before.get(v)!));
    const expected = [...range(0, 10).flatMap((v) => [`_delta_log/${pad(v)}.json`, `_delta_log/${pad(v)}.crc`]), ...(await vacuumAllExpired(dir, before.get(20)!, spared))].sort();

    const report = (await runCleanup(store, { format: deltaFormat, now: () => now, ...(c.retain ? { settings: { retainVersions: c.retain } } : {}) })) as unknown as Report;
    expect(report.status).toBe("completed");
    expect(report.versions_removed).toEqual(range(0, 10));
    expect(deletedBy(report)).toEqual(expected);
    const readable = await assertReadableAfter(dir, before, { from: 10, deleted: expected, latest: 20 });
    for (const v of mustStay) expect(readable).toContain(v);
  });

  it("a dry run reports every file with its reason and changes nothing", async () => {
    const dir = await copyFixture("delta", "table_with_deletion_logs");
    await setAllTimes(dir, new Date(BASE));
    await setLogTimes(dir, (v) => new Date(BASE + v * DAY));
    const keys = await listKeys(dir);
    const report = (await runCleanup(new LocalStore(dir), { format: deltaFormat, dryRun: true, now: () => nowForCutoffCommit(20) })) as unknown as Report;
    expect(report.status).toBe("dry-run");
    const byKey = new Map(report.files.map((f) => [f.key, f.reason]));
    expect(byKey.get(`_delta_log/${pad(3)}.json`)).toMatch(/commit below the kept checkpoint 20/);
    expect(byKey.get(`_delta_log/${pad(10)}.checkpoint.parquet`)).toMatch(/checkpoint below the kept checkpoint 20/);
    expect([...byKey.entries()].filter(([k]) => !k.startsWith("_delta_log/")).every(([, reason]) => reason.startsWith("VACUUM: not referenced by the latest version"))).toBe(true);
    expect(await listKeys(dir)).toEqual(keys);
  });

  it("a run stopped between delete batches is finished by the next one: the same files in the end, no gap in versions", async () => {
    const dir = await copyFixture("delta", "table_with_deletion_logs");
    await setAllTimes(dir, new Date(BASE));
    await setLogTimes(dir, (v) => new Date(BASE + v * DAY));
    const now = nowForCutoffCommit(20);
    const before = await replayAll(dir, range(0, 21));
    const expected = [
      ...range(0, 20).flatMap((v) => [`_delta_log/${pad(v)}.json`, `_delta_log/${pad(v)}.crc`]),
      `_delta_log/${pad(10)}.checkpoint.parquet`,
      ...(await vacuumAllExpired(dir, before.get(20)!)),
    ].sort();
    const keys = await listKeys(dir);

    const abort = new AbortController();
    let deleting = false;
    const progress = {
      stage: (name: string) => {
        deleting = name === "deleting files";
      },
      advance: (count: number) => {
        if (deleting && count > 0) abort.abort();
      },
      finish: () => {},
    };
    const first = (await runCleanup(new LocalStore(dir), {
      format: deltaFormat,
      now: () => now,
      deleteBatchSize: 3,
      deleteConcurrency: 1,
      signal: abort.signal,
      progress,
    })) as unknown as Report;
    expect(first.status).not.toBe("completed");
    const left = withoutOwnFiles(await listKeys(dir));
    expect(left.length).toBeGreaterThan(keys.length - expected.length);
    expect(left.length).toBeLessThan(keys.length);
    // The history of the versions being removed was archived before their first file went.
    const midway = JSON.parse((await cli("versions", dir, "--json")).stdout) as { version: number }[];
    expect(midway.map((r) => r.version)).toEqual(range(0, 21));

    const second = (await runCleanup(new LocalStore(dir), { format: deltaFormat, now: () => now })) as unknown as Report;
    expect(second.status).toBe("completed");
    expect(withoutOwnFiles(await listKeys(dir))).toEqual(keys.filter((k) => !expected.includes(k)));
    await assertReadableAfter(dir, before, { from: 20, deleted: expected, latest: 20 });
    const records = JSON.parse((await cli("versions", dir, "--json")).stdout) as { version: number; is_cleaned_up: boolean }[];
    expect(records.map((r) => [r.version, r.is_cleaned_up])).toEqual(range(0, 21).map((v) => [v, v < 20]));
  });
});

describe("Delta cleanup through the pipeline: a commit lands while it plans", () => {
  it("the run plans again on the new latest state: a file the new commit adds is kept, though old and absent from the state first read", async () => {
    const dir = await copyFixture("delta", "simple_table");
    const now = new Date("2027-03-01T12:00:00Z");
    const old = new Date(now.getTime() - 60 * DAY);
    await setAllTimes(dir, old);
    const latest = Math.max(...(await oracleCommits(dir)).map((c) => c.version));
    const added = "part-99999-landed-while-planning.snappy.parquet";
    let landed = false;
    const progress = {
      stage: (name: string) => {
        if (name !== "listing files" || landed) return;
        landed = true;
        // A writer's data file first (its time old, as a copied file can be), then its commit.
        writeFileSync(join(dir, added), "x");
        utimesSync(join(dir, added), old, old);
        writeFileSync(
          join(dir, "_delta_log", `${pad(latest + 1)}.json`),
          `${JSON.stringify({ commitInfo: { operation: "WRITE" } })}\n${JSON.stringify({ add: { path: added, size: 1, modificationTime: old.getTime(), dataChange: true, partitionValues: {} } })}\n`,
        );
      },
      advance: () => {},
      finish: () => {},
    };
    const report = (await runCleanup(new LocalStore(dir), { format: deltaFormat, now: () => now, progress })) as unknown as Report & { replans: string[] };
    expect(landed).toBe(true);
    expect(report.status).toBe("completed");
    expect(report.replans.join("; ")).toMatch(/version \d+ was committed/);
    expect(deletedBy(report)).not.toContain(added);
    expect(existsSync(join(dir, added))).toBe(true);
    // From the rules, on the state after the commit: everything visible but its live files goes.
    const live = await oracleLiveFiles(dir);
    expect(live.files.map((f) => f.path)).toContain(added);
    expect(await vacuumAllExpired(dir, live.files)).toEqual([]);
    for (const file of live.files) expect(existsSync(join(dir, file.path)), file.path).toBe(true);
  });
});

describe("checkpointProtection through the CLI", () => {
  /**
   * Commit times relative to the real clock (the CLI reads it): commits 0 to `cutoffCommit` are
   * older than the log cutoff (midnight UTC 30 days back), later ones younger; commit 21 sets V.
   */
  async function protectedTable(options: { cutoffCommit: number; v: number | null; removeCrcs?: number[] }): Promise<string> {
    const dir = await copyFixture("delta", "table_with_deletion_logs");
    if (options.v !== null) {
      const { protocol, metaData } = await latestProtocolAndMetadata(dir);
      await appendCommit(dir, 21, [
        { commitInfo: { operation: "DROP FEATURE", readVersion: 20 } },
        { protocol: { ...protocol, writerFeatures: [...(protocol.writerFeatures as string[]), "checkpointProtection"] } },
        {
          metaData: { ...metaData, configuration: { ...(metaData.configuration as Record<string, string>), "delta.requireCheckpointProtectionBeforeVersion": String(options.v) } },
        },
      ]);
    } else {
      await appendCommit(dir, 21, [{ commitInfo: { operation: "WRITE", readVersion: 20 } }]);
    }
    const now = Date.now();
    const cutoff = Math.floor((now - 30 * DAY) / DAY) * DAY;
    await setAllTimes(dir, new Date(cutoff - 60 * DAY));
    await setLogTimes(dir, (v) =>
      v <= options.cutoffCommit
        ? new Date(cutoff - (options.cutoffCommit - v) * DAY - 3_600_000)
        : v <= 20
          ? new Date(cutoff + (v - options.cutoffCommit) * 3_600_000)
          : new Date(now - 3_600_000),
    );
    for (const v of options.removeCrcs ?? []) await rm(join(dir, "_delta_log", `${pad(v)}.crc`));
    return dir;
  }

  const cases: {
    name: string;
    cutoffCommit: number;
    v: number | null;
    flag?: number;
    removeCrcs?: number[];
    keptCheckpoint: number | null;
    deletedCheckpoints: number[];
    result: string;
  }[] = [
    { name: "V below the kept checkpoint: all history below V goes in one run", cutoffCommit: 14, v: 5, keptCheckpoint: 10, deletedCheckpoints: [], result: "removed-all" },
    {
      name: "V between the checkpoints, cutoff above it: all history below V at once (checkpoint 10 too)",
      cutoffCommit: 20,
      v: 15,
      keptCheckpoint: 20,
      deletedCheckpoints: [10],
      result: "removed-all",
    },
    {
      name: "V above the kept checkpoint, every removed protocol known: partial, checkpoint 10 below V survives",
      cutoffCommit: 20,
      v: 21,
      keptCheckpoint: 20,
      deletedCheckpoints: [],
      result: "partial",
    },
    {
      name: "V above the kept checkpoint, a .crc missing: no log file goes",
      cutoffCommit: 20,
      v: 21,
      removeCrcs: [5],
      keptCheckpoint: null,
      deletedCheckpoints: [],
      result: "kept-all",
    },
    {
      name: "--protect-before maps onto the same rule (no table feature), a .crc missing: no log file goes",
      cutoffCommit: 20,
      v: null,
      flag: 21,
      removeCrcs: [5],
      keptCheckpoint: null,
      deletedCheckpoints: [],
      result: "kept-all",
    },
    {
      name: "--protect-before at or below the kept checkpoint: all history below it goes",
      cutoffCommit: 20,
      v: null,
      flag: 15,
      keptCheckpoint: 20,
      deletedCheckpoints: [10],
      result: "removed-all",
    },
  ];

  it.each(cases)("$name", async (c) => {
    const dir = await protectedTable(c);
    const before = await replayAll(dir, range(0, 22));
    const kept = c.keptCheckpoint ?? 0;
    const removedCrcs = new Set(c.removeCrcs ?? []);
    const expected = [
      ...range(0, kept).map((v) => `_delta_log/${pad(v)}.json`),
      ...range(0, kept)
        .filter((v) => !removedCrcs.has(v))
        .map((v) => `_delta_log/${pad(v)}.crc`),
      ...c.deletedCheckpoints.map((v) => `_delta_log/${pad(v)}.checkpoint.parquet`),
      ...(await vacuumAllExpired(dir, before.get(21)!)),
    ].sort();

    const run = await cli("cleanup", dir, "--json", ...(c.flag !== undefined ? ["--protect-before", String(c.flag)] : []));
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as Report;
    expect(report.protection).toMatchObject({ boundary: c.v ?? c.flag, result: c.result });
    expect(report.versions_removed).toEqual(range(0, kept));
    expect(deletedBy(report)).toEqual(expected);
    // Checkpoints below the boundary survive whenever history below it is not removed whole.
    const boundary = (c.v ?? c.flag)!;
    if (c.result !== "removed-all") for (const v of [10, 20].filter((x) => x < boundary)) expect(existsSync(join(dir, "_delta_log", `${pad(v)}.checkpoint.parquet`))).toBe(true);
    await assertReadableAfter(dir, before, { from: kept, deleted: expected, latest: 21 });
  });
});

describe("Delta bad input through cleanup: one line, nothing deleted", () => {
  const OLD = new Date(Date.now() - 400 * DAY);

  it.each([
    ["an unsupported reader version", "simple_table_features", async (_dir: string) => {}, /reader version 5 is not supported/],
    ["an unsupported writer feature", "table_with_liquid_clustering", async (_dir: string) => {}, /writer feature/],
    [
      "a truncated commit",
      "simple_table",
      async (dir: string) => {
        const path = join(dir, "_delta_log", `${pad(4)}.json`);
        await truncate(path, (await readFile(path)).length - 40);
      },
      /00000000000000000004\.json: line \d+ is not valid JSON/,
    ],
    [
      "a missing checkpoint part with the commits before it gone",
      "multi-part-checkpoint",
      async (dir: string) => {
        await rm(join(dir, "_delta_log", `${pad(1)}.checkpoint.0000000002.0000000002.parquet`));
        await rm(join(dir, "_delta_log", `${pad(0)}.json`));
      },
      /no complete checkpoint at or below version 1/,
    ],
  ] as const)("%s", async (_what, fixture, damage, message) => {
    const dir = await copyFixture("delta", fixture);
    await damage(dir);
    await writeFile(join(dir, "orphan.parquet"), "x");
    await setAllTimes(dir, OLD);
    const keys = await listKeys(dir);
    const run = await cli("cleanup", dir, "--format", "delta");
    expect(run.code).not.toBe(0);
    expect(run.stderr.trim()).toMatch(message);
    expect(run.stderr.trim()).not.toContain("\n");
    expect(withoutOwnFiles(await listKeys(dir))).toEqual(keys);
  });

  it("a corrupt _last_checkpoint is only a hint (as Delta says): cleanup plans from the listing and deletes the same set as on an intact copy", async () => {
    const intact = await copyFixture("delta", "table_with_deletion_logs");
    const corrupt = await copyFixture("delta", "table_with_deletion_logs");
    await writeFile(join(corrupt, "_delta_log", "_last_checkpoint"), '{"version":20,"si');
    for (const dir of [intact, corrupt]) await setAllTimes(dir, OLD);
    const before = await replayAll(corrupt, range(0, 21));
    const expected = [
      ...range(0, 20).flatMap((v) => [`_delta_log/${pad(v)}.json`, `_delta_log/${pad(v)}.crc`]),
      `_delta_log/${pad(10)}.checkpoint.parquet`,
      ...(await vacuumAllExpired(corrupt, before.get(20)!)),
    ].sort();
    const reports = [];
    for (const dir of [intact, corrupt]) {
      const run = await cli("cleanup", dir, "--json");
      expect(run.code).toBe(0);
      reports.push(JSON.parse(run.stdout) as Report);
    }
    expect(deletedBy(reports[1]!)).toEqual(expected);
    expect(deletedBy(reports[0]!)).toEqual(expected);
    await assertReadableAfter(corrupt, before, { from: 20, deleted: expected, latest: 20 });
  });
});
