/**
 * Small rules with their own cases: table-property durations, the in-commit-timestamp rule when
 * ICT is enabled part-way through a table's life, compaction files in log cleanup, and which
 * versions a kept version needs.
 */
import { readdir, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { LocalStore } from "../../../lib/store/local-store.ts";
import { parseIntervalMs } from "../../../lib/formats/delta/table-properties.ts";
import { readDeltaVersions } from "../../../lib/formats/delta/versions.ts";
import { runDeltaCleanup } from "./run-planners.ts";
import { listLog } from "../../../lib/formats/delta/log-listing.ts";
import { loadSnapshot } from "../../../lib/formats/delta/snapshot.ts";
import { copyFixture } from "../../support/fixtures.ts";
import { appendCommit, latestProtocolAndMetadata, listKeys, setLogTimes } from "./log-surgery.ts";

const DAY = 86_400_000;

describe("table property durations", () => {
  it.each([
    ["interval 7 days", 7 * DAY],
    ["interval 1 week", 7 * DAY],
    ["interval 30 days", 30 * DAY],
    ["interval 1 day 12 hours", 1.5 * DAY],
    ["24 hours", DAY],
    ["interval 90 minutes", 5_400_000],
    ["INTERVAL 2 DAYS", 2 * DAY],
  ])("%s", (text, ms) => {
    expect(parseIntervalMs(text)).toBe(ms);
  });

  it.each(["interval 1 month", "interval 1 year", "seven days", "interval", "interval -1 days"])("%s is refused", (text) => {
    expect(parseIntervalMs(text)).toBeNull();
  });

  it("a table whose retention property cannot be parsed is not cleaned", async () => {
    const dir = await copyFixture("delta", "simple_commit");
    const { metaData } = await latestProtocolAndMetadata(dir);
    await appendCommit(dir, 1, [
      { commitInfo: { operation: "SET TBLPROPERTIES" } },
      { metaData: { ...metaData, configuration: { "delta.deletedFileRetentionDuration": "interval 1 month" } } },
    ]);
    const keys = await listKeys(dir);
    await expect(runDeltaCleanup(new LocalStore(dir), { now: new Date("2030-01-01") })).rejects.toThrow(/delta.deletedFileRetentionDuration = "interval 1 month"/);
    expect(await listKeys(dir)).toEqual(keys);
  });
});

describe("in-commit timestamps enabled part-way", () => {
  it("versions before the enablement version take the file time, later ones their inCommitTimestamp", async () => {
    const dir = await copyFixture("delta", "simple_table");
    const { protocol, metaData } = await latestProtocolAndMetadata(dir);
    const ict = Date.parse("2025-03-01T00:00:00Z");
    const enabled = {
      protocol: { minReaderVersion: protocol.minReaderVersion, minWriterVersion: 7, writerFeatures: ["appendOnly", "invariants", "inCommitTimestamp"] },
      metaData: {
        ...metaData,
        configuration: { "delta.enableInCommitTimestamps": "true", "delta.inCommitTimestampEnablementVersion": "5", "delta.inCommitTimestampEnablementTimestamp": String(ict) },
      },
    };
    await appendCommit(dir, 5, [
      { commitInfo: { inCommitTimestamp: ict, timestamp: 1, operation: "SET TBLPROPERTIES" } },
      { protocol: enabled.protocol },
      { metaData: enabled.metaData },
    ]);
    await appendCommit(dir, 6, [{ commitInfo: { inCommitTimestamp: ict + 1000, timestamp: 2, operation: "WRITE" } }]);
    const fileTime = (v: number) => new Date(Date.UTC(2024, 0, 1 + v));
    await setLogTimes(dir, fileTime);
    const versions = await readDeltaVersions(new LocalStore(dir));
    expect(versions.map((v) => [v.version, v.timestampMillis, v.timestampSource])).toEqual([
      [0, fileTime(0).getTime(), "modificationTime"],
      [1, fileTime(1).getTime(), "modificationTime"],
      [2, fileTime(2).getTime(), "modificationTime"],
      [3, fileTime(3).getTime(), "modificationTime"],
      [4, fileTime(4).getTime(), "modificationTime"],
      [5, ict, "inCommitTimestamp"],
      [6, ict + 1000, "inCommitTimestamp"],
    ]);
  });

  it("a commit at or after the enablement version without inCommitTimestamp is a clear error", async () => {
    const dir = await copyFixture("delta", "cdc_ict_table");
    await appendCommit(dir, 4, [{ commitInfo: { timestamp: 1, operation: "WRITE" } }]);
    await expect(readDeltaVersions(new LocalStore(dir))).rejects.toThrow(/commit 4 has no commitInfo.inCommitTimestamp/);
  });
});

describe("log compaction files", () => {
  it("are ignored by the reader and, starting at or below the kept checkpoint, deleted by log cleanup", async () => {
    const dir = await copyFixture("delta", "table_with_deletion_logs");
    const log = join(dir, "_delta_log");
    const below = "00000000000000000003.00000000000000000012.compacted.json";
    const above = "00000000000000000012.00000000000000000015.compacted.json";
    await writeFile(join(log, below), "not read\n");
    await writeFile(join(log, above), "not read\n");
    const before = await loadSnapshot(new LocalStore(dir));
    const listing = await listLog(new LocalStore(dir));
    expect(listing.compactions.map((c) => [c.version, c.endVersion])).toEqual([
      [3, 12],
      [12, 15],
    ]);
    const base = Date.parse("2026-01-01T06:00:00Z");
    await setLogTimes(dir, (v) => new Date(base + v * DAY));
    for (const name of await readdir(log)) if (name.endsWith(".compacted.json")) await utimes(join(log, name), new Date(base), new Date(base));
    const result = await runDeltaCleanup(new LocalStore(dir), { now: new Date(base + 15 * DAY + 30 * DAY + 6 * 3_600_000), vacuum: false });
    expect(result.log!.keptCheckpoint).toBe(10);
    expect(result.deleted).toContain(`_delta_log/${below}`);
    expect(result.deleted).not.toContain(`_delta_log/${above}`);
    expect((await loadSnapshot(new LocalStore(dir))).adds).toEqual(before.adds);
  });
});
