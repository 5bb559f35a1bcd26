/**
 * Delta through the TableFormat interface: the functions the CLI and the pipeline call.
 *   - `readHistory` (what `versions --json` prints, format found by the registry) lists exactly the commits in the log,
 *     with timestamps and operations as DuckDB reads them from the commit files;
 *   - `readSnapshot` of the latest version gives DuckDB's live files;
 *   - naming: detection, commit keys, roles, the format's own files;
 *   - cleanup through the pipeline (dry run) keeps every file a kept version needs.
 */
import { mkdir, readdir, utimes, writeFile } from "node:fs/promises";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { LocalStore } from "../../../lib/store/local-store.ts";
import { readHistory } from "../../../lib/head/timeline-source.ts";
import { runCleanup } from "../../../lib/maintenance/run-cleanup.ts";
import { deltaFormat } from "../../../lib/formats/delta/delta-format.ts";
import { UnsupportedFeatureError } from "../../../lib/formats/errors.ts";
import { deletionVectorLocation } from "../../../lib/formats/delta/deletion-vectors.ts";
import { copyFixture, fixtureNames } from "../../support/fixtures.ts";
import { oracleCommits, oracleIctEnabled, oracleLiveFiles } from "./duckdb-oracle.ts";
import { appendCommit, latestProtocolAndMetadata, listKeys, setAllTimes, setLogTimes } from "./log-surgery.ts";
import { vacuumAllExpired } from "./vacuum-rules.ts";

const names = (await fixtureNames("delta")).filter((n) => n !== "simple_table_features");
const DAY = 86_400_000;

function dvKey(dvId: string): string | null {
  if (!dvId.startsWith("u")) return null;
  const l = deletionVectorLocation({ storageType: "u", pathOrInlineDv: dvId.slice(1).replace(/@\d+$/, ""), sizeInBytes: 0, cardinality: 0 });
  return l.kind === "relative" ? l.path : null;
}

describe("Delta through the TableFormat interface", () => {
  it.each(names)("%s: versions and the latest live files match DuckDB", async (name) => {
    const dir = await copyFixture("delta", name);
    for (const file of await readdir(join(dir, "_delta_log"))) {
      const m = /^(\d{20})\.json$/.exec(file);
      if (m) await utimes(join(dir, "_delta_log", file), 1_700_000_000 + Number(m[1]) * 3600, 1_700_000_000 + Number(m[1]) * 3600);
    }
    const store = new LocalStore(dir);
    expect(await deltaFormat.detect(store)).toBe(true);
    // What `lakewarden versions --json` prints: the CLI's own function, the format found by the registry.
    const history = await readHistory(store);
    expect(history.format).toBe(deltaFormat);
    const records = history.records;
    const commits = await oracleCommits(dir);
    const ict = await oracleIctEnabled(dir);
    expect(records.map((r) => r.version)).toEqual(commits.map((c) => c.version));
    expect(records.map((r) => r.version_id)).toEqual(commits.map((c) => String(c.version)));
    expect(records.map((r) => r.operation_type)).toEqual(commits.map((c) => c.operation));
    expect(records.map((r) => r.timestamp_millis)).toEqual(commits.map((c) => (ict ? c.inCommitTimestamp : c.modifiedMillis)));

    const latest = await deltaFormat.latestVersionFile(store);
    expect(latest?.version).toBe(commits[commits.length - 1]!.version);
    const snapshot = await deltaFormat.readSnapshot(store, latest!);
    const oracle = await oracleLiveFiles(dir);
    const sortKey = (f: { key: string; dv: string | null }) => `${f.key}\u0000${f.dv ?? ""}`;
    expect(snapshot.liveFiles.map((f) => ({ key: f.paths[0]!, size: f.size, dv: f.deletionFile })).sort((a, b) => (sortKey(a) < sortKey(b) ? -1 : 1))).toEqual(
      oracle.files.map((f) => ({ key: f.path, size: f.size, dv: dvKey(f.dvId) })).sort((a, b) => (sortKey(a) < sortKey(b) ? -1 : 1)),
    );
    expect(snapshot.unresolvedReferences).toEqual([]);
    // Every live data file and DV file is a reference of the version, and exists.
    const referenced = new Set(snapshot.referencedFiles.map((r) => r.path));
    for (const file of snapshot.liveFiles) {
      expect(referenced.has(file.paths[0]!)).toBe(true);
      if (file.deletionFile) expect(referenced.has(file.deletionFile)).toBe(true);
    }
    const keys = new Set(await listKeys(dir));
    // Log files it names exist (some fixtures hold only their log, not their data files).
    const logRoles = ["commit", "checkpoint", "sidecar", "statistics"];
    const logReferences = snapshot.referencedFiles.filter((r) => logRoles.includes(r.role));
    expect(logReferences.some((r) => r.role === "commit")).toBe(true);
    for (const reference of logReferences) expect(keys.has(reference.path), reference.path).toBe(true);
  });

  it("naming: commit keys, table roots, roles and the format's own files", async () => {
    expect(deltaFormat.parseVersionKey("_delta_log/00000000000000000012.json")).toBe(12);
    expect(deltaFormat.parseVersionKey("_delta_log/00000000000000000012.checkpoint.parquet")).toBeNull();
    expect(deltaFormat.tableRootOfCommitKey("lake/t/_delta_log/00000000000000000003.json")).toBe("lake/t");
    expect(deltaFormat.tableRootOfCommitKey("_delta_log/00000000000000000003.json")).toBe("");
    expect(deltaFormat.tableRootOfCommitKey("lake/t/_delta_log/00000000000000000003.00000000000000000005.compacted.json")).toBeNull();
    expect(deltaFormat.tableRootOfCommitKey("lake/t/_delta_log/00000000000000000003.checkpoint.abc.json")).toBeNull();
    expect(deltaFormat.classify("_delta_log/00000000000000000010.checkpoint.parquet")).toBe("checkpoint");
    expect(deltaFormat.classify("_delta_log/00000000000000000010.crc")).toBe("statistics");
    expect(deltaFormat.classify("_delta_log/_sidecars/x.parquet")).toBe("sidecar");
    expect(deltaFormat.classify("year=2024/part-0.parquet")).toBe("data");
    expect(deltaFormat.classify("deletion_vector_61d16c75-6994-46b7-a15b-8b538852e50e.bin")).toBe("delete");
    expect(deltaFormat.classify("_change_data/cdc-0.parquet")).toBe("change-data");
    for (const key of [
      "_delta_log/_last_checkpoint",
      "_delta_log/.00000000000000000000.json.crc",
      "_delta_log/_autostats/x.json",
      ".part-0.parquet.crc",
      "_hidden/x",
      "_delta_log/00000000000000000003.00000000000000000005.compacted.json",
    ]) {
      expect(deltaFormat.isBookkeepingFile!(key), key).toBe(true);
    }
    for (const key of ["_delta_log/00000000000000000003.json", "part-0.parquet", "_change_data/x.parquet", "_delta_log/_sidecars/x.parquet"]) {
      expect(deltaFormat.isBookkeepingFile!(key), key).toBe(false);
    }
    const empty = await mkdtemp(join(tmpdir(), "lw-delta-empty-"));
    try {
      await mkdir(join(empty, "_delta_log"));
      await writeFile(join(empty, "_delta_log", "_last_checkpoint"), "{}");
      expect(await deltaFormat.detect(new LocalStore(empty))).toBe(false);
      expect(await deltaFormat.latestVersionFile(new LocalStore(empty))).toBeNull();
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  });

  it("declared retention: delta.logRetentionDuration and delta.deletedFileRetentionDuration; expired log cleanup off is no retain count", () => {
    expect(deltaFormat.declaredRetention!({}, "t")).toMatchObject({ olderThanMs: 30 * DAY, safetyWindowMs: 7 * DAY });
    expect(deltaFormat.declaredRetention!({ "delta.logRetentionDuration": "interval 2 days", "delta.deletedFileRetentionDuration": "interval 1 day" }, "t")).toMatchObject({
      olderThanMs: 2 * DAY,
      safetyWindowMs: DAY,
      sources: { olderThanMs: "delta.logRetentionDuration", safetyWindowMs: "delta.deletedFileRetentionDuration" },
    });
    // enableExpiredLogCleanup = false is log cleanup's rule, not a retain count (which would keep every version's data from VACUUM too).
    expect(deltaFormat.declaredRetention!({ "delta.enableExpiredLogCleanup": "false" }, "t").retainVersions).toBeUndefined();
  });

  it("cleanup through the pipeline (dry run): old commits and their .crc below the kept checkpoint, and VACUUM's candidates", async () => {
    const dir = await copyFixture("delta", "table_with_deletion_logs");
    const base = Date.parse("2026-01-01T06:00:00Z");
    await setAllTimes(dir, new Date(base));
    await setLogTimes(dir, (v) => new Date(base + v * DAY));
    const now = new Date(base + 15 * DAY + 30 * DAY);
    const keys = await listKeys(dir);
    const report = await runCleanup(new LocalStore(dir), { format: deltaFormat, dryRun: true, now: () => now });
    // Rules: the cutoff (midnight UTC 30 days back) falls after commit 14; the newest checkpoint
    // at or below it is 10, so commits and .crc files 0-9 go; VACUUM (tombstones long expired)
    // takes every visible file neither live nor a live file's DV.
    const pad = (v: number) => String(v).padStart(20, "0");
    const live = await oracleLiveFiles(dir);
    const expected = [
      ...Array.from({ length: 10 }, (_, v) => [`_delta_log/${pad(v)}.json`, `_delta_log/${pad(v)}.crc`]).flat(),
      ...(await vacuumAllExpired(dir, live.files)),
    ].sort();
    expect(report.versions_removed).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(
      report.files
        .filter((f) => f.action === "delete")
        .map((f) => f.key)
        .sort(),
    ).toEqual(expected);
    expect(await listKeys(dir)).toEqual(keys);
  });

  it("checkpointProtection reaches the pipeline natively: V at or below the kept checkpoint takes all history below V; above it, only with every removed protocol known", async () => {
    for (const [v, removeCrc, expectedRemoved, result] of [
      [5, null, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], "removed-all"],
      [15, null, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], "partial"],
      [15, 3, [] as number[], "kept-all"],
    ] as const) {
      const dir = await copyFixture("delta", "table_with_deletion_logs");
      const { protocol, metaData } = await latestProtocolAndMetadata(dir);
      await appendCommit(dir, 21, [
        { commitInfo: { operation: "DROP FEATURE" } },
        { protocol: { ...protocol, writerFeatures: [...(protocol.writerFeatures as string[]), "checkpointProtection"] } },
        { metaData: { ...metaData, configuration: { ...(metaData.configuration as Record<string, string>), "delta.requireCheckpointProtectionBeforeVersion": String(v) } } },
      ]);
      if (removeCrc !== null) await rm(join(dir, "_delta_log", `${String(removeCrc).padStart(20, "0")}.crc`));
      const base = Date.parse("2026-01-01T06:00:00Z");
      await setAllTimes(dir, new Date(base));
      await setLogTimes(dir, (version) => new Date(base + version * DAY));
      const report = await runCleanup(new LocalStore(dir), { format: deltaFormat, dryRun: true, now: () => new Date(base + 15 * DAY + 30 * DAY) });
      expect(report.protection).toMatchObject({ boundary: v, result });
      expect(report.versions_removed).toEqual(expectedRemoved);
    }
  });

  it("cleanup through the pipeline refuses a table with a writer feature lakewarden does not support, before any delete", async () => {
    const dir = await copyFixture("delta", "table_with_liquid_clustering");
    await setAllTimes(dir, new Date("2020-01-01T00:00:00Z"));
    await writeFile(join(dir, "orphan.parquet"), "x");
    await utimes(join(dir, "orphan.parquet"), new Date("2020-01-01T00:00:00Z"), new Date("2020-01-01T00:00:00Z"));
    const keys = await listKeys(dir);
    await expect(runCleanup(new LocalStore(dir), { format: deltaFormat, now: () => new Date("2030-01-01T00:00:00Z") })).rejects.toThrow(UnsupportedFeatureError);
    expect((await listKeys(dir)).filter((k) => !k.startsWith("_lakewarden/"))).toEqual(keys);
  });
});
