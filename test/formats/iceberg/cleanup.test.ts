/**
 * Cleanup on copies of the real tables: orphan-file removal (iceberg-java semantics) and
 * snapshot expiry as a metadata commit. Every outcome is checked on disk and with icebird.
 */
import { copyFile, mkdir, readdir, readFile, stat, utimes, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CatalogPointerRequiredError, TableFormatError, UnsupportedFeatureError } from "../../../lib/formats/errors.ts";
import { planExpiry } from "../../../lib/formats/iceberg/expire-snapshots.ts";
import { isHiddenKey } from "../../../lib/formats/iceberg/hidden-keys.ts";
import { expireSnapshots, removeOrphanFiles } from "./standalone-runners.ts";
import { DAY_MS, tableRetention } from "../../../lib/formats/iceberg/retention.ts";
import { openIcebergTable } from "../../../lib/formats/iceberg/table-state.ts";
import { openStore } from "../../../lib/store/index.ts";
import {
  appendSnapshot,
  BROKEN_FIXTURES,
  copyIcebergFixture,
  fileExists,
  icebirdLiveFiles,
  icebirdMetadataFiles,
  listFiles,
  rewriteMetadata,
  snapshotsByTextPass,
  type FixtureCopy,
} from "../../support/iceberg-fixtures.ts";

const copies: FixtureCopy[] = [];
afterAll(async () => {
  await Promise.all(copies.map((c) => c.remove()));
});
async function copy(name: Parameters<typeof copyIcebergFixture>[0]): Promise<FixtureCopy> {
  const c = await copyIcebergFixture(name);
  copies.push(c);
  return c;
}

const BUNNIES = "s3a://hyperparam-iceberg/spark/bunnies";
const LIVE_DATA = "data/00000-1-6cd7611f-0ceb-4cf3-8b8e-8c856356df3e-00001.parquet";

async function place(dir: string, from: string, to: string, ageMs: number): Promise<string> {
  await mkdir(dirname(join(dir, to)), { recursive: true });
  await copyFile(join(dir, from), join(dir, to));
  const when = new Date(Date.now() - ageMs);
  await utimes(join(dir, to), when, when);
  return to;
}

async function currentMetadataName(dir: string): Promise<string> {
  return `v${(await readFile(join(dir, "metadata/version-hint.text"), "utf8")).trim()}.metadata.json`;
}

/** Every snapshot of the current metadata reads with icebird, and every file it names exists. */
async function everySnapshotReads(dir: string): Promise<number> {
  const name = await currentMetadataName(dir);
  const snapshots = await snapshotsByTextPass(join(dir, "metadata", name));
  for (let i = 0; i < snapshots.length; i++) {
    for (const key of await icebirdMetadataFiles(dir, name, i)) expect(await fileExists(dir, key), key).toBe(true);
    for (const file of await icebirdLiveFiles(dir, name, i)) expect(await fileExists(dir, file.key), file.key).toBe(true);
  }
  return snapshots.length;
}

describe("orphan-file removal", () => {
  it("removes exactly the old stray data file, stray manifest and failed-commit metadata; keeps young and hidden files", async () => {
    const c = await copy("spark-bunnies");
    const old = 10 * DAY_MS;
    const strays = [
      await place(c.dir, LIVE_DATA, "data/00000-9-3c1d9a52-0000-4000-8000-000000000000-00001.parquet", old),
      await place(c.dir, "metadata/91d5eea0-314d-4056-8818-59b825cbd38a-m1.avro", "metadata/5e0c3f43-0000-4000-8000-000000000000-m0.avro", old),
      await place(c.dir, "metadata/v5.metadata.json", "metadata/8d6f0e4e-0000-4000-8000-000000000000.metadata.json", old),
    ];
    const young = await place(c.dir, LIVE_DATA, "data/00000-9-young-00001.parquet", 60_000);
    const hidden = [
      await place(c.dir, LIVE_DATA, "data/.00000-9-3c1d9a52.parquet.crc", old),
      await place(c.dir, LIVE_DATA, "_SUCCESS", old),
      await place(c.dir, LIVE_DATA, "_lakewarden/head", old),
    ];
    const before = await listFiles(c.dir);
    const store = openStore(c.dir);

    const dry = await removeOrphanFiles(store, { dryRun: true });
    expect(dry.plan.orphans.map((o) => o.key).sort()).toEqual([...strays].sort());
    expect(await listFiles(c.dir)).toEqual(before);

    const report = await removeOrphanFiles(store);
    expect(report.deleted.sort()).toEqual([...strays].sort());
    expect(report.plan.tooYoung.map((o) => o.key)).toEqual([young]);
    expect(report.plan.hidden.map((o) => o.key).sort()).toEqual([...hidden].sort());
    expect(await listFiles(c.dir)).toEqual(before.filter((k) => !strays.includes(k)));
    expect(await everySnapshotReads(c.dir)).toBe(3);
  });

  it("removes metadata files beyond write.metadata.previous-versions-max that the metadata log no longer names", async () => {
    const c = await copy("spark-bunnies");
    await rewriteMetadata(c.dir, (json) => {
      json.properties = { ...(json.properties as object), "write.metadata.previous-versions-max": "2" } as never;
      // The log as a writer keeps it with previous-versions-max = 2: v4 and v5 (rewriteMetadata appended v5).
      json["metadata-log"] = (json["metadata-log"] as object[]).slice(-2) as never;
    });
    const old = new Date(Date.now() - 10 * DAY_MS);
    await utimes(join(c.dir, "metadata/v6.metadata.json"), old, old);
    const report = await removeOrphanFiles(openStore(c.dir));
    expect(report.deleted.sort()).toEqual(["metadata/v1.metadata.json", "metadata/v2.metadata.json", "metadata/v3.metadata.json"]);
    expect(await everySnapshotReads(c.dir)).toBe(3);
  });

  it("deletes nothing when gc.enabled=false", async () => {
    const c = await copy("spark-bunnies");
    await rewriteMetadata(c.dir, (json) => {
      json.properties = { ...(json.properties as object), "gc.enabled": "false" } as never;
    });
    await place(c.dir, LIVE_DATA, "data/stray-00001.parquet", 10 * DAY_MS);
    const before = await listFiles(c.dir);
    const report = await removeOrphanFiles(openStore(c.dir));
    expect(report.plan.refusal).toMatch(/gc\.enabled/);
    expect(report.deleted).toEqual([]);
    expect(await listFiles(c.dir)).toEqual(before);
  });

  it("never deletes a path outside the table, and refuses a prefix mismatch (gs://, another bucket) before any delete", async () => {
    const c = await copy("spark-bunnies");
    // A file the metadata names in another bucket, with a stray at the same relative place in this table.
    const appended = await appendSnapshot(c.dir, {
      files: [{ path: "s3://other-bucket/elsewhere/data/z.parquet", recordCount: 1, sizeInBytes: 100 }],
      timestampMs: Date.now() - 20 * DAY_MS,
    });
    await utimes(join(c.dir, appended.metadataKey), new Date(0), new Date(Date.now() - 20 * DAY_MS));
    const stray = await place(c.dir, LIVE_DATA, "data/z.parquet", 10 * DAY_MS);
    const report = await removeOrphanFiles(openStore(c.dir));
    expect(report.deleted).toEqual([stray]);

    // Same path as the table's under gs:// and under another bucket: iceberg-java's prefix mismatch.
    for (const path of [`gs://hyperparam-iceberg/spark/bunnies/data/m.parquet`, `s3://other-bucket/spark/bunnies/data/m.parquet`]) {
      const m = await copy("spark-bunnies");
      await appendSnapshot(m.dir, { files: [{ path, recordCount: 1, sizeInBytes: 100 }], timestampMs: Date.now() - 20 * DAY_MS });
      await place(m.dir, LIVE_DATA, "data/m.parquet", 10 * DAY_MS);
      await place(m.dir, LIVE_DATA, "data/other-stray.parquet", 10 * DAY_MS);
      const before = await listFiles(m.dir);
      await expect(removeOrphanFiles(openStore(m.dir))).rejects.toThrow(/prefix mismatch.*nothing deleted/);
      expect(await listFiles(m.dir)).toEqual(before);
    }
  });

  it("treats `_` and `.` path segments as hidden, except partition folders", () => {
    expect(isHiddenKey("data/.x.crc")).toBe(true);
    expect(isHiddenKey("_lakewarden/head")).toBe(true);
    expect(isHiddenKey("data/_temporary/0/x.parquet")).toBe(true);
    expect(isHiddenKey("data/_id_bucket=1/x.parquet")).toBe(false);
    expect(isHiddenKey("data/id_bucket=1/x.parquet")).toBe(false);
  });
});

describe("broken tables: refused, nothing deleted or written", () => {
  for (const name of BROKEN_FIXTURES) {
    it(name, async () => {
      const c = await copy(name);
      await writeFile(join(c.dir, "data/stray.parquet"), "x");
      const old = new Date(Date.now() - 10 * DAY_MS);
      await utimes(join(c.dir, "data/stray.parquet"), old, old);
      const before = await listFiles(c.dir);
      const orphans = await removeOrphanFiles(openStore(c.dir)).catch((e: unknown) => e);
      expect(orphans).toBeInstanceOf(TableFormatError);
      expect((orphans as Error).message.split("\n")).toHaveLength(1);
      const expiry = await expireSnapshots(openStore(c.dir), { retainLast: 1, expireOlderThanMs: Date.now() }).catch((e: unknown) => e);
      // equality_deletes' broken snapshot is not the current one, so expiry would drop it: refused all the same, since its files are unknown.
      expect(expiry).toBeInstanceOf(TableFormatError);
      expect(await listFiles(c.dir)).toEqual(before);
    });
  }
});

describe("snapshot expiry (catalog-less tables)", () => {
  it("commits the next metadata file first (the only new file in metadata/, plus the hint), then deletes what only expired snapshots reached", async () => {
    const c = await copy("spark-bunnies");
    const v5 = await snapshotsByTextPass(join(c.dir, "metadata/v5.metadata.json"));
    const liveBefore = await icebirdLiveFiles(c.dir, "v5.metadata.json");
    // What each snapshot reaches, read independently.
    const reach = async (i: number) => [...(await icebirdMetadataFiles(c.dir, "v5.metadata.json", i)), ...(await icebirdLiveFiles(c.dir, "v5.metadata.json", i)).map((f) => f.key)];
    const beforeAll = new Set((await Promise.all(v5.map((_, i) => reach(i)))).flat());
    const current = v5.findIndex((s) => s.id === v5.at(-1)!.id);
    const kept = new Set(await reach(current));
    const expected = [...beforeAll].filter((k) => !kept.has(k)).sort();
    expect(expected.length).toBeGreaterThan(0);

    const metadataBefore = await statAll(c.dir, "metadata");
    const tableBefore = await listFiles(c.dir);
    let atCommit: { metadata: Map<string, number>; table: string[] } | null = null;
    const report = await expireSnapshots(openStore(c.dir), {
      afterCommit: async () => {
        atCommit = { metadata: await statAll(c.dir, "metadata"), table: await listFiles(c.dir) };
      },
    });
    expect(report.committedKey).toBe("metadata/v6.metadata.json");
    // Before any delete: one new file in metadata/ (v6), the hint rewritten, nothing else touched or gone.
    const seen = atCommit!;
    expect([...seen.metadata.keys()].filter((k) => !metadataBefore.has(k))).toEqual(["v6.metadata.json"]);
    expect([...metadataBefore.keys()].filter((k) => seen.metadata.get(k) !== metadataBefore.get(k))).toEqual(["version-hint.text"]);
    expect(seen.table).toEqual([...tableBefore, "metadata/v6.metadata.json"].sort());

    expect(report.expired.sort()).toEqual(
      v5
        .slice(0, -1)
        .map((s) => s.id)
        .sort(),
    );
    expect(report.deleted.sort()).toEqual(expected);
    for (const key of expected) expect(await fileExists(c.dir, key), key).toBe(false);
    // The table reads at the new metadata (the hint points at it), with the same live files.
    expect(await readFile(join(c.dir, "metadata/version-hint.text"), "utf8")).toBe("6");
    const v6 = await snapshotsByTextPass(join(c.dir, "metadata/v6.metadata.json"));
    expect(v6.map((s) => s.id)).toEqual([v5.at(-1)!.id]);
    expect(await icebirdLiveFiles(c.dir, "v6.metadata.json")).toEqual(liveBefore);
    expect(await everySnapshotReads(c.dir)).toBe(1);
    // The old metadata files stay (expiry never deletes metadata JSON) and v5 is now in the log.
    expect(await fileExists(c.dir, "metadata/v5.metadata.json")).toBe(true);
    expect(await readFile(join(c.dir, "metadata/v6.metadata.json"), "utf8")).toContain(`"metadata-file": "${BUNNIES}/metadata/v5.metadata.json"`);
  });

  it("follows the retention rules: ref heads kept, branch ancestors by min-snapshots-to-keep or age, expired refs dropped", async () => {
    const c = await copy("spark-bunnies");
    const now = Date.now();
    await copyFile(join(c.dir, LIVE_DATA), join(c.dir, "data/appended-1.parquet"));
    await copyFile(join(c.dir, LIVE_DATA), join(c.dir, "data/appended-2.parquet"));
    const s4 = await appendSnapshot(c.dir, { files: [{ path: `${BUNNIES}/data/appended-1.parquet`, recordCount: 20, sizeInBytes: 3560 }], timestampMs: now - 3600_000 });
    const s5 = await appendSnapshot(c.dir, {
      files: [{ path: `${BUNNIES}/data/appended-2.parquet`, recordCount: 20, sizeInBytes: 3560 }],
      timestampMs: now - 600_000,
      refs: {
        "keep-first": { "snapshot-id": 7505300640432048841n, type: "tag" },
        "stale-branch": { "snapshot-id": 469881615898633426n, type: "branch", "max-ref-age-ms": DAY_MS },
      },
    });
    const [s1, s2, s3] = ["7505300640432048841", "469881615898633426", "2701171901096418979"];
    const table = await openIcebergTable(openStore(c.dir));
    const plan = planExpiry(table.read.metadata, now, tableRetention(table.read.metadata.properties));
    // main: s5 and s4 are newer than 5 days; s3 is older and 2 >= min-snapshots-to-keep (1) are kept already, so the walk stops.
    expect([...plan.retain].sort()).toEqual([s1, s4.snapshotId, s5.snapshotId].sort());
    expect(plan.expire.sort()).toEqual([s2, s3].sort());
    expect(plan.dropRefs).toEqual(["stale-branch"]);
    const withMinKeep = planExpiry(table.read.metadata, now, tableRetention({ "history.expire.min-snapshots-to-keep": "3" }));
    expect(withMinKeep.expire).toEqual([s2]);

    const report = await expireSnapshots(openStore(c.dir), { now: new Date(now) });
    const name = await currentMetadataName(c.dir);
    expect(`metadata/${name}`).toBe(report.committedKey);
    const after = await snapshotsByTextPass(join(c.dir, "metadata", name));
    expect(after.map((s) => s.id).sort()).toEqual([s1, s4.snapshotId, s5.snapshotId].sort());
    const text = await readFile(join(c.dir, "metadata", name), "utf8");
    expect(text).toContain('"keep-first"');
    expect(text).not.toContain('"stale-branch"');
    // The tagged first snapshot still reads: its data file (rewritten away by s3) stays.
    expect(await fileExists(c.dir, "data/00000-1-9acc37f2-90ae-42f5-915c-a21c3cb99690-00001.parquet")).toBe(true);
    expect(report.deleted.length).toBeGreaterThan(0);
    expect(await everySnapshotReads(c.dir)).toBe(3);
  });

  it("never deletes a file outside the table, and stops before the commit on a prefix mismatch", async () => {
    const c = await copy("spark-bunnies");
    const outside = "s3://other-bucket/elsewhere/data/z.parquet";
    await appendSnapshot(c.dir, { files: [{ path: outside, recordCount: 1, sizeInBytes: 100 }], timestampMs: Date.now() - 20 * DAY_MS });
    await copyFile(join(c.dir, LIVE_DATA), join(c.dir, "data/appended-1.parquet"));
    await appendSnapshot(c.dir, { files: [{ path: `${BUNNIES}/data/appended-1.parquet`, recordCount: 20, sizeInBytes: 3560 }] });
    // Expire everything but the head: the outside file's snapshot goes, the file is not ours to delete.
    await place(c.dir, LIVE_DATA, "data/z.parquet", 0);
    const report = await expireSnapshots(openStore(c.dir), { retainLast: 1, expireOlderThanMs: Date.now() - 60_000 });
    expect(report.committedKey).not.toBeNull();
    expect(report.toDelete.some((k) => k.endsWith("z.parquet"))).toBe(false);
    expect(await fileExists(c.dir, "data/z.parquet")).toBe(true);

    const m = await copy("spark-bunnies");
    await appendSnapshot(m.dir, {
      files: [{ path: "gs://hyperparam-iceberg/spark/bunnies/data/m.parquet", recordCount: 1, sizeInBytes: 100 }],
      timestampMs: Date.now() - 20 * DAY_MS,
    });
    const before = await listFiles(m.dir);
    await expect(expireSnapshots(openStore(m.dir))).rejects.toThrow(/prefix mismatch.*nothing written or deleted/);
    expect(await listFiles(m.dir)).toEqual(before);
  });

  it("keeps statistics and partition-statistics files of kept snapshots, and deletes those of expired ones with them", async () => {
    const c = await copy("spark-bunnies");
    const [s1, , s3] = ["7505300640432048841", "469881615898633426", "2701171901096418979"];
    const statsOld = "metadata/20250330-stats-s1.puffin";
    const statsCurrent = "metadata/20250330-stats-s3.puffin";
    const partitionStatsOld = "metadata/partition-stats-s1.parquet";
    for (const key of [statsOld, statsCurrent, partitionStatsOld]) await place(c.dir, LIVE_DATA, key, 10 * DAY_MS);
    await rewriteMetadata(c.dir, (json) => {
      json.statistics = [
        { "snapshot-id": BigInt(s1), "statistics-path": `${BUNNIES}/${statsOld}`, "file-size-in-bytes": 3560, "file-footer-size-in-bytes": 10, "blob-metadata": [] },
        { "snapshot-id": BigInt(s3), "statistics-path": `${BUNNIES}/${statsCurrent}`, "file-size-in-bytes": 3560, "file-footer-size-in-bytes": 10, "blob-metadata": [] },
      ] as never;
      json["partition-statistics"] = [{ "snapshot-id": BigInt(s1), "statistics-path": `${BUNNIES}/${partitionStatsOld}`, "file-size-in-bytes": 3560 }] as never;
    });
    await utimes(join(c.dir, "metadata/v6.metadata.json"), new Date(), new Date(Date.now() - 10 * DAY_MS));
    const orphans = await removeOrphanFiles(openStore(c.dir));
    expect(orphans.deleted).toEqual([]);

    const report = await expireSnapshots(openStore(c.dir));
    expect(report.deleted).toContain(statsOld);
    expect(report.deleted).toContain(partitionStatsOld);
    expect(report.deleted).not.toContain(statsCurrent);
    expect(await fileExists(c.dir, statsCurrent)).toBe(true);
    const text = await readFile(join(c.dir, report.committedKey!), "utf8");
    expect(text).toContain(statsCurrent);
    expect(text).not.toContain(statsOld);
    expect(text).not.toContain(partitionStatsOld);
  });

  it("refuses a table whose catalog owns the pointer (NNNNN-uuid names)", async () => {
    const c = await copy("athena-example");
    const before = await listFiles(c.dir);
    // Nothing to expire yet, and still refused: which metadata file is current is the catalog's to say.
    await expect(expireSnapshots(openStore(c.dir), { expireOlderThanMs: Date.now(), retainLast: 1 })).rejects.toThrow(CatalogPointerRequiredError);
    await rewriteCatalogTable(c.dir);
    await expect(expireSnapshots(openStore(c.dir))).rejects.toThrow(UnsupportedFeatureError);
    await expect(expireSnapshots(openStore(c.dir))).rejects.toThrow(/catalog/);
    expect((await listFiles(c.dir)).length).toBe(before.length + 1);
  });
});

/** Gives the athena copy a second, older snapshot in a new catalog-named metadata file, so expiry has something to expire. */
async function rewriteCatalogTable(dir: string): Promise<void> {
  const name = "00001-aaf0d033-d06b-43c7-be60-67f83abd4aca.metadata.json";
  let text = await readFile(join(dir, "metadata", name), "utf8");
  const snapshotsAt = text.indexOf('"snapshots"');
  expect(snapshotsAt).toBeGreaterThan(0);
  // A copy of the only snapshot under another id, older, as a parent that expiry would drop.
  const match = /"snapshots"\s*:\s*\[\s*(\{[\s\S]*?"schema-id"\s*:\s*\d+\s*\})/.exec(text)!;
  const older = match[1]!.replace(/"snapshot-id"\s*:\s*6838723292707092922/, '"snapshot-id" : 1111111111111111111').replace(/"timestamp-ms"\s*:\s*\d+/, '"timestamp-ms" : 1000');
  const newer = match[1]!.replace(/"sequence-number"\s*:\s*1/, '"sequence-number" : 2');
  text = text.replace(match[0], `"snapshots" : [ ${older}, ${newer}`);
  await writeFile(join(dir, "metadata", "00002-3f3e0c1a-0000-4000-8000-000000000000.metadata.json"), text);
}

async function statAll(dir: string, folder: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const name of await readdir(join(dir, folder))) out.set(name, (await stat(join(dir, folder, name))).mtimeMs);
  return out;
}
