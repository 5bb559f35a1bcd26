/**
 * VACUUM on fixture copies with file times set old. The expected deleted set is written from
 * the protocol's rules in each case (listing minus hidden paths minus the latest version's live
 * files and unexpired tombstones, with their deletion-vector files, minus files younger than the
 * retention), with the live files taken from DuckDB, not from lakewarden. Afterwards the latest
 * version replays (DuckDB) to the same live files, every file it names exists, and `_delta_log/`
 * is byte-for-byte untouched.
 */
import { existsSync } from "node:fs";
import { mkdir, readFile, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { LocalStore } from "../../../lib/store/local-store.ts";
import { UnsupportedFeatureError } from "../../../lib/formats/errors.ts";
import { runDeltaCleanup } from "./run-planners.ts";
import { deletionVectorLocation } from "../../../lib/formats/delta/deletion-vectors.ts";
import { copyFixture } from "../../support/fixtures.ts";
import { oracleLiveFiles } from "./duckdb-oracle.ts";
import { appendCommit, latestProtocolAndMetadata, listKeys, setAllTimes } from "./log-surgery.ts";

const DAY = 86_400_000;
// After every fixture's newest remove (cdc_ict_table's are from July 2026), so tombstones are expired unless a case says otherwise.
const NOW = new Date("2027-06-15T12:00:00Z");

async function logBytes(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const key of await listKeys(dir)) if (key.startsWith("_delta_log/")) out.set(key, (await readFile(join(dir, key))).toString("base64"));
  return out;
}

/** DV file keys of `u` descriptors in DuckDB's live-file ids ("u" + z85 [+ "@offset"]). */
function dvKeysOf(dvIds: readonly string[]): string[] {
  return dvIds
    .filter((id) => id.startsWith("u"))
    .map((id) => deletionVectorLocation({ storageType: "u", pathOrInlineDv: id.slice(1).replace(/@\d+$/, ""), sizeInBytes: 0, cardinality: 0 }))
    .flatMap((l) => (l.kind === "relative" ? [l.path] : []));
}

async function assertStillReadable(dir: string, before: Awaited<ReturnType<typeof oracleLiveFiles>>): Promise<void> {
  const after = await oracleLiveFiles(dir);
  expect(after.files).toEqual(before.files);
  for (const file of after.files) expect(existsSync(join(dir, file.path)), file.path).toBe(true);
  for (const key of dvKeysOf(after.files.map((f) => f.dvId))) expect(existsSync(join(dir, key)), key).toBe(true);
}

const hiddenComponent = (c: string) => (c.startsWith("_") || c.startsWith(".")) && !c.startsWith("_change_data") && !c.startsWith("_delta_index");

describe("Delta VACUUM", () => {
  it("simple_table, every file 30 days old: every non-hidden file that is not live goes (delta-rs expects 32)", async () => {
    const dir = await copyFixture("delta", "simple_table");
    await setAllTimes(dir, new Date(NOW.getTime() - 30 * DAY));
    const before = await oracleLiveFiles(dir);
    const log = await logBytes(dir);
    const live = new Set(before.files.map((f) => f.path));
    // Rules: not in _delta_log/, no hidden component, not live; tombstones are from 2020-2021 (expired).
    const expected = (await listKeys(dir)).filter((k) => !k.startsWith("_delta_log/") && !k.split("/").some(hiddenComponent) && !live.has(k));
    expect(expected.length).toBe(32);

    const result = await runDeltaCleanup(new LocalStore(dir), { now: NOW, logs: false });
    expect(result.vacuum!.candidates.map((c) => c.key).sort()).toEqual(expected.sort());
    expect(result.deleted.sort()).toEqual(expected.sort());
    for (const key of expected) expect(existsSync(join(dir, key))).toBe(false);
    expect(await logBytes(dir)).toEqual(log);
    await assertStillReadable(dir, before);
  });

  it.each(["basic-dv-with-checkpoint", "table-with-dv-small", "checkpoint-cdf-table", "table_with_partitioning_mapping"])(
    "%s, every file old and every tombstone expired: everything but the live files and their DV files goes",
    async (name) => {
      const dir = await copyFixture("delta", name);
      await setAllTimes(dir, new Date(NOW.getTime() - 30 * DAY));
      const before = await oracleLiveFiles(dir);
      const keep = new Set([...before.files.map((f) => f.path), ...dvKeysOf(before.files.map((f) => f.dvId))]);
      const expected = (await listKeys(dir)).filter((k) => !k.startsWith("_delta_log/") && !k.split("/").some(hiddenComponent) && !keep.has(k));
      const result = await runDeltaCleanup(new LocalStore(dir), { now: NOW, logs: false });
      expect(result.deleted.sort()).toEqual(expected.sort());
      await assertStillReadable(dir, before);
    },
  );

  it("files younger than the retention stay, and a dry run deletes nothing", async () => {
    const dir = await copyFixture("delta", "simple_table");
    await setAllTimes(dir, new Date(NOW.getTime() - 6 * DAY));
    const young = await runDeltaCleanup(new LocalStore(dir), { now: NOW, logs: false });
    expect(young.vacuum!.candidates).toEqual([]);

    await setAllTimes(dir, new Date(NOW.getTime() - 8 * DAY));
    const keys = await listKeys(dir);
    const dry = await runDeltaCleanup(new LocalStore(dir), { now: NOW, logs: false, dryRun: true });
    expect(dry.vacuum!.candidates.length).toBe(32);
    expect(dry.deleted).toEqual([]);
    expect(await listKeys(dir)).toEqual(keys);
  });

  it("simple_commit: the four unreferenced files go, hidden .crc files and _delta_log/.gitignore stay", async () => {
    const dir = await copyFixture("delta", "simple_commit");
    await setAllTimes(dir, new Date(NOW.getTime() - 30 * DAY));
    const before = await oracleLiveFiles(dir);
    expect(before.files).toEqual([]);
    const expected = (await listKeys(dir)).filter((k) => /^part-.*\.parquet$/.test(k));
    expect(expected.length).toBe(4);
    const result = await runDeltaCleanup(new LocalStore(dir), { now: NOW, logs: false });
    expect(result.deleted.sort()).toEqual(expected.sort());
    expect((await listKeys(dir)).filter((k) => k.startsWith(".") || k.startsWith("_delta_log/")).length).toBeGreaterThan(0);
  });

  it("table_with_deletion_logs: a tombstone within the retention protects its file and its deletion-vector file; once expired, that DV file goes", async () => {
    const dir = await copyFixture("delta", "table_with_deletion_logs");
    const tombstoneTime = 1690885064443; // the newest remove's deletionTimestamp (commit 4)
    await setAllTimes(dir, new Date(tombstoneTime - 30 * DAY));
    const before = await oracleLiveFiles(dir);
    const liveDvs = dvKeysOf(before.files.map((f) => f.dvId));
    expect(liveDvs.length).toBe(1);
    const allDvs = (await listKeys(dir)).filter((k) => k.startsWith("deletion_vector_"));
    expect(allDvs.length).toBe(2);
    const tombstoneDv = allDvs.filter((k) => !liveDvs.includes(k));

    // Three days after the remove, with a 7-day retention: the tombstone is unexpired, nothing goes.
    const within = await runDeltaCleanup(new LocalStore(dir), { now: new Date(tombstoneTime + 3 * DAY), logs: false, dryRun: true });
    expect(within.vacuum!.candidates).toEqual([]);
    expect(within.vacuum!.protectedKeys.has(tombstoneDv[0]!)).toBe(true);

    // Later: the tombstone expired; its DV file is the only file no one references.
    const result = await runDeltaCleanup(new LocalStore(dir), { now: new Date(tombstoneTime + 8 * DAY), logs: false });
    expect(result.deleted).toEqual(tombstoneDv);
    await assertStillReadable(dir, before);
  });

  it("cdc_ict_table: _change_data and partition folders are not hidden, other _ folders and _lakewarden are", async () => {
    const dir = await copyFixture("delta", "cdc_ict_table");
    await mkdir(join(dir, "_hidden"), { recursive: true });
    await writeFile(join(dir, "_hidden", "x.parquet"), "x");
    await mkdir(join(dir, "_lakewarden"), { recursive: true });
    await writeFile(join(dir, "_lakewarden", "head"), "x");
    await writeFile(join(dir, "birthyear=1986", "orphan.parquet"), "x");
    await setAllTimes(dir, new Date(NOW.getTime() - 30 * DAY));
    const before = await oracleLiveFiles(dir);
    const live = new Set(before.files.map((f) => f.path));
    const expected = (await listKeys(dir)).filter((k) => !k.startsWith("_delta_log/") && !k.split("/").some(hiddenComponent) && !live.has(k));
    expect(expected).toContain("birthyear=1986/orphan.parquet");
    expect(expected.filter((k) => k.startsWith("_change_data/")).length).toBe(4);
    const result = await runDeltaCleanup(new LocalStore(dir), { now: NOW, logs: false });
    expect(result.deleted.sort()).toEqual(expected.sort());
    expect(existsSync(join(dir, "_hidden", "x.parquet"))).toBe(true);
    expect(existsSync(join(dir, "_lakewarden", "head"))).toBe(true);
    await assertStillReadable(dir, before);
  });

  it("a partition column whose folders start with _ keeps its data files live", async () => {
    const dir = await copyFixture("delta", "simple_commit");
    const { protocol, metaData } = await latestProtocolAndMetadata(dir);
    await mkdir(join(dir, "_p=1"), { recursive: true });
    await writeFile(join(dir, "_p=1", "live.parquet"), "x");
    await writeFile(join(dir, "_p=1", "orphan.parquet"), "x");
    await appendCommit(dir, 1, [
      { commitInfo: { operation: "WRITE" } },
      { protocol },
      { metaData: { ...metaData, partitionColumns: ["_p"] } },
      { add: { path: "_p=1/live.parquet", partitionValues: { _p: "1" }, size: 1, modificationTime: 1, dataChange: true } },
    ]);
    await setAllTimes(dir, new Date(NOW.getTime() - 30 * DAY));
    const result = await runDeltaCleanup(new LocalStore(dir), { now: NOW, logs: false });
    expect(result.deleted).toContain("_p=1/orphan.parquet");
    expect(result.deleted).not.toContain("_p=1/live.parquet");
  });

  it("a shorter retention than the table's needs the explicit flag", async () => {
    const dir = await copyFixture("delta", "simple_table");
    await setAllTimes(dir, new Date(NOW.getTime() - 2 * DAY));
    await expect(runDeltaCleanup(new LocalStore(dir), { now: NOW, logs: false, retentionMs: DAY })).rejects.toThrow(/shorter than the table's delta.deletedFileRetentionDuration/);
    const allowed = await runDeltaCleanup(new LocalStore(dir), { now: NOW, logs: false, retentionMs: DAY, allowShortRetention: true, dryRun: true });
    expect(allowed.vacuum!.candidates.length).toBe(32);
  });

  it("the table's delta.deletedFileRetentionDuration is honoured", async () => {
    const dir = await copyFixture("delta", "simple_commit");
    const { metaData } = await latestProtocolAndMetadata(dir);
    await appendCommit(dir, 1, [
      { commitInfo: { operation: "SET TBLPROPERTIES" } },
      { metaData: { ...metaData, configuration: { "delta.deletedFileRetentionDuration": "interval 40 days" } } },
    ]);
    await setAllTimes(dir, new Date(NOW.getTime() - 30 * DAY));
    const result = await runDeltaCleanup(new LocalStore(dir), { now: NOW, logs: false, dryRun: true });
    expect(result.vacuum!.candidates).toEqual([]);
  });

  it("unsupported features stop cleanup before any delete: an unknown writer feature, vacuumProtocolCheck's writer check", async () => {
    const dir = await copyFixture("delta", "table_with_liquid_clustering");
    await setAllTimes(dir, new Date(NOW.getTime() - 30 * DAY));
    await writeFile(join(dir, "orphan.parquet"), "x");
    await utimes(join(dir, "orphan.parquet"), new Date(NOW.getTime() - 30 * DAY), new Date(NOW.getTime() - 30 * DAY));
    const keys = await listKeys(dir);
    const error = await runDeltaCleanup(new LocalStore(dir), { now: NOW }).catch((e: unknown) => e as Error);
    expect(error).toBeInstanceOf(UnsupportedFeatureError);
    expect((error as Error).message).toMatch(/writer feature "liquid"/);
    expect(await listKeys(dir)).toEqual(keys);

    const checked = await copyFixture("delta", "basic-with-vacuum-protocol-check-feature");
    const { protocol, metaData } = await latestProtocolAndMetadata(checked);
    await appendCommit(checked, 2, [
      { commitInfo: { operation: "UPGRADE PROTOCOL" } },
      { protocol: { ...protocol, writerFeatures: [...(protocol.writerFeatures as string[]), "someFutureWriterFeature"] } },
      { metaData },
    ]);
    await setAllTimes(checked, new Date(NOW.getTime() - 30 * DAY));
    const checkedKeys = await listKeys(checked);
    await expect(runDeltaCleanup(new LocalStore(checked), { now: NOW })).rejects.toThrow(/someFutureWriterFeature/);
    expect(await listKeys(checked)).toEqual(checkedKeys);
  });
});
