/**
 * Log cleanup and checkpointProtection, table-driven after the scenarios of Delta's own retention
 * suite (commits inside and outside the retention, checkpoints, the protected boundary V below,
 * at and above the cutoff), on copies of `table_with_deletion_logs` (commits 0-20, checkpoints
 * 10 and 20, a .crc per version) with commit times set one day apart. The expected deletions of
 * each case are written from the protocol's rules in the case itself. After every run, each
 * version that must stay readable replays (DuckDB) to the same live files as before, and every
 * file it names exists.
 */
import { existsSync } from "node:fs";
import { rm, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { LocalStore } from "../../../lib/store/local-store.ts";
import { runDeltaCleanup } from "./run-planners.ts";
import { deletionVectorLocation } from "../../../lib/formats/delta/deletion-vectors.ts";
import { copyFixture } from "../../support/fixtures.ts";
import { oracleLiveFiles } from "./duckdb-oracle.ts";
import { appendCommit, latestProtocolAndMetadata, listKeys, setLogTimes } from "./log-surgery.ts";

const DAY = 86_400_000;
const BASE = Date.parse("2026-01-01T06:00:00Z");
const commitTime = (v: number) => new Date(BASE + v * DAY);
/** A `now` whose cutoff (midnight UTC of now - retention) falls after commit `c` and before commit c+1. */
const nowForCutoffCommit = (c: number, retentionDays = 30) => new Date(BASE + (c + 1) * DAY + retentionDays * DAY + 6 * 3_600_000);
const range = (from: number, to: number) => Array.from({ length: Math.max(0, to - from) }, (_, i) => from + i);
const pad = (v: number) => String(v).padStart(20, "0");

interface Case {
  name: string;
  cutoffCommit: number;
  /** Table properties and checkpointProtection set by an appended commit 21 (recent). */
  properties?: Record<string, string>;
  protectV?: number;
  removeCrcs?: number[];
  retentionDays?: number;
  /** Expected, from the rules: */
  keptCheckpoint: number | null;
  deletedCommitsBelow: number;
  deletedCheckpoints: number[];
}

const cases: Case[] = [
  { name: "every commit inside the retention: nothing", cutoffCommit: -1, keptCheckpoint: null, deletedCommitsBelow: 0, deletedCheckpoints: [] },
  { name: "cutoff before the first checkpoint: no checkpoint to keep, nothing", cutoffCommit: 5, keptCheckpoint: null, deletedCommitsBelow: 0, deletedCheckpoints: [] },
  { name: "cutoff exactly at checkpoint 10: commits and .crc 0-9 go", cutoffCommit: 10, keptCheckpoint: 10, deletedCommitsBelow: 10, deletedCheckpoints: [] },
  { name: "cutoff between checkpoints: the older checkpoint is kept", cutoffCommit: 14, keptCheckpoint: 10, deletedCommitsBelow: 10, deletedCheckpoints: [] },
  { name: "cutoff at the latest checkpoint: 0-19 and checkpoint 10 go", cutoffCommit: 20, keptCheckpoint: 20, deletedCommitsBelow: 20, deletedCheckpoints: [10] },
  {
    name: "delta.enableExpiredLogCleanup = false: nothing",
    cutoffCommit: 20,
    properties: { "delta.enableExpiredLogCleanup": "false" },
    keptCheckpoint: null,
    deletedCommitsBelow: 0,
    deletedCheckpoints: [],
  },
  {
    name: "delta.logRetentionDuration = 2 days moves the cutoff",
    cutoffCommit: 14,
    retentionDays: 2,
    properties: { "delta.logRetentionDuration": "interval 2 days" },
    keptCheckpoint: 10,
    deletedCommitsBelow: 10,
    deletedCheckpoints: [],
  },
  { name: "V below the kept checkpoint: history below V goes at once", cutoffCommit: 20, protectV: 5, keptCheckpoint: 20, deletedCommitsBelow: 20, deletedCheckpoints: [10] },
  { name: "V at the kept checkpoint: history below V goes at once", cutoffCommit: 20, protectV: 20, keptCheckpoint: 20, deletedCommitsBelow: 20, deletedCheckpoints: [10] },
  {
    name: "V above the kept checkpoint, every removed version's protocol known: partial, checkpoint 10 (below V) survives",
    cutoffCommit: 20,
    protectV: 21,
    keptCheckpoint: 20,
    deletedCommitsBelow: 20,
    deletedCheckpoints: [],
  },
  {
    name: "V above the kept checkpoint, a .crc missing: nothing",
    cutoffCommit: 20,
    protectV: 21,
    removeCrcs: [5],
    keptCheckpoint: null,
    deletedCommitsBelow: 0,
    deletedCheckpoints: [],
  },
  {
    name: "V between the checkpoints, cutoff below V, protocols known: partial",
    cutoffCommit: 14,
    protectV: 15,
    keptCheckpoint: 10,
    deletedCommitsBelow: 10,
    deletedCheckpoints: [],
  },
  {
    name: "V between the checkpoints, cutoff below V, a .crc missing: nothing",
    cutoffCommit: 14,
    protectV: 15,
    removeCrcs: [3],
    keptCheckpoint: null,
    deletedCommitsBelow: 0,
    deletedCheckpoints: [],
  },
  { name: "V between the checkpoints, cutoff above V: all below V at once", cutoffCommit: 20, protectV: 15, keptCheckpoint: 20, deletedCommitsBelow: 20, deletedCheckpoints: [10] },
];

/** Keys every version from `from` to `to` names (live data files and their DV files), per DuckDB. */
async function replayAll(dir: string, from: number, to: number): Promise<Map<number, string[]>> {
  const out = new Map<number, string[]>();
  for (let v = from; v <= to; v++) {
    const { files } = await oracleLiveFiles(dir, v);
    const keys = files.map((f) => `${f.path}|${f.dvId}`);
    out.set(v, keys.sort());
  }
  return out;
}

function namedFiles(entry: string): string[] {
  const [path, dvId] = entry.split("|") as [string, string];
  const out = [path];
  if (dvId.startsWith("u")) {
    const location = deletionVectorLocation({ storageType: "u", pathOrInlineDv: dvId.slice(1).replace(/@\d+$/, ""), sizeInBytes: 0, cardinality: 0 });
    if (location.kind === "relative") out.push(location.path);
  }
  return out;
}

describe("Delta log cleanup and checkpointProtection", () => {
  it.each(cases)("$name", async (c) => {
    const dir = await copyFixture("delta", "table_with_deletion_logs");
    const now = c.cutoffCommit < 0 ? new Date(BASE + 25 * DAY) : nowForCutoffCommit(c.cutoffCommit, c.retentionDays);
    let latest = 20;
    if (c.properties || c.protectV !== undefined) {
      const { protocol, metaData } = await latestProtocolAndMetadata(dir);
      const configuration = { ...(metaData.configuration as Record<string, string>), ...c.properties };
      const writerFeatures = [...(protocol.writerFeatures as string[])];
      if (c.protectV !== undefined) {
        configuration["delta.requireCheckpointProtectionBeforeVersion"] = String(c.protectV);
        writerFeatures.push("checkpointProtection");
      }
      await appendCommit(dir, 21, [
        { commitInfo: { operation: "SET TBLPROPERTIES", readVersion: 20 } },
        { protocol: { ...protocol, writerFeatures } },
        { metaData: { ...metaData, configuration } },
      ]);
      latest = 21;
    }
    await setLogTimes(dir, (v) => (v <= 20 ? commitTime(v) : new Date(now.getTime() - 3_600_000)));
    for (const v of c.removeCrcs ?? []) await rm(join(dir, "_delta_log", `${pad(v)}.crc`));

    const readableFrom = c.keptCheckpoint ?? 0;
    const before = await replayAll(dir, readableFrom, latest);
    const keysBefore = await listKeys(dir);

    const result = await runDeltaCleanup(new LocalStore(dir), { now, vacuum: false });
    expect(result.log!.keptCheckpoint).toBe(c.keptCheckpoint);

    // Expected from the rules: commits and .crc files below the kept checkpoint; the checkpoints listed.
    const expected = [
      ...range(0, c.deletedCommitsBelow).map((v) => `_delta_log/${pad(v)}.json`),
      ...range(0, c.deletedCommitsBelow)
        .filter((v) => !(c.removeCrcs ?? []).includes(v))
        .map((v) => `_delta_log/${pad(v)}.crc`),
      ...c.deletedCheckpoints.map((v) => `_delta_log/${pad(v)}.checkpoint.parquet`),
    ].sort();
    expect(result.deleted.sort()).toEqual(expected);
    expect(await listKeys(dir)).toEqual(keysBefore.filter((k) => !expected.includes(k)));

    // Commits go before checkpoints.
    const order = result.log!.deletions.map((d) => d.kind);
    const lastCommit = order.lastIndexOf("commit");
    const firstCheckpoint = order.indexOf("checkpoint");
    if (firstCheckpoint >= 0) expect(lastCommit).toBeLessThan(firstCheckpoint);

    // checkpointProtection: checkpoints below V survive a partial cleanup; a refused one deletes nothing.
    if (c.protectV !== undefined && c.keptCheckpoint !== null && c.keptCheckpoint < c.protectV) {
      for (const v of [10, 20].filter((v) => v < c.protectV!)) expect(existsSync(join(dir, "_delta_log", `${pad(v)}.checkpoint.parquet`))).toBe(true);
    }

    const after = await replayAll(dir, readableFrom, latest);
    expect(after).toEqual(before);
    for (const entries of after.values()) for (const entry of entries) for (const key of namedFiles(entry)) expect(existsSync(join(dir, key)), key).toBe(true);
  });

  it("a V2 table: the kept UUID checkpoint's sidecar stays, the deleted checkpoint's sidecar goes, a young orphan sidecar stays", async () => {
    const dir = await copyFixture("delta", "checkpoint-v2-table");
    const now = nowForCutoffCommit(8);
    await setLogTimes(dir, commitTime);
    const sidecars = (await listKeys(dir)).filter((k) => k.startsWith("_delta_log/_sidecars/"));
    for (const key of sidecars) await utimes(join(dir, key), commitTime(0), commitTime(0));
    await writeFile(join(dir, "_delta_log", "_sidecars", "in-progress.parquet"), "x");
    const before = await replayAll(dir, 8, 9);
    const result = await runDeltaCleanup(new LocalStore(dir), { now, vacuum: false });
    expect(result.log!.keptCheckpoint).toBe(8);
    const expected = [
      ...range(0, 8).flatMap((v) => [`_delta_log/${pad(v)}.json`, `_delta_log/${pad(v)}.crc`]),
      "_delta_log/00000000000000000006.checkpoint.f5ee283b-37c7-46af-b64c-8f77c6a5c43a.json",
      sidecars.find((k) => k.includes("/00000000000000000006."))!,
    ].sort();
    expect(result.deleted.sort()).toEqual(expected);
    expect(existsSync(join(dir, sidecars.find((k) => k.includes("/00000000000000000008."))!))).toBe(true);
    expect(existsSync(join(dir, "_delta_log", "_sidecars", "in-progress.parquet"))).toBe(true);
    expect(existsSync(join(dir, "_delta_log", "_autostats", "00000000000000000007.0000000000.stats.json"))).toBe(true);
    expect(await replayAll(dir, 8, 9)).toEqual(before);
  });

  it("a dry run reports the plan and deletes nothing", async () => {
    const dir = await copyFixture("delta", "table_with_deletion_logs");
    await setLogTimes(dir, commitTime);
    const keys = await listKeys(dir);
    const result = await runDeltaCleanup(new LocalStore(dir), { now: nowForCutoffCommit(20), dryRun: true, vacuum: false });
    expect(result.log!.deletions.length).toBe(41);
    expect(result.deleted).toEqual([]);
    expect(await listKeys(dir)).toEqual(keys);
  });
});
