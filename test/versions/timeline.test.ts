/**
 * The timeline (newest checkpoint + only the version files it lacks) and the version-at rule.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { archiveVersions } from "../../lib/checkpoint/archive.ts";
import { checkpointKey } from "../../lib/model/layout.ts";
import { lanceFormat } from "../../lib/formats/lance/lance-format.ts";
import { runCheckpoint } from "../../lib/maintenance/run-checkpoint.ts";
import { LocalStore } from "../../lib/store/local-store.ts";
import { readVersionRecords } from "../../lib/versions/read-version-records.ts";
import { mergeTimeline, readTimeline } from "../../lib/versions/timeline.ts";
import { currentFromTimes, parseTimePoint, versionAt } from "../../lib/versions/version-at.ts";
import { versionRecord } from "../checkpoint/records.ts";
import { buildLanceDataset, makeTempDir, removeDir } from "../support/lance-datasets.ts";

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await removeDir(dir);
});

async function dataset(steps = 4) {
  const dbUri = await makeTempDir("lw-timeline-");
  dirs.push(dbUri);
  const ds = await buildLanceDataset({
    dbUri,
    steps: [{ op: "create", rows: 5 }, ...Array.from({ length: steps - 1 }, () => ({ op: "append" as const, rows: 2 }))],
  });
  return ds;
}

describe("readTimeline", () => {
  it("without a checkpoint: every version file, same as readVersionRecords", async () => {
    const ds = await dataset();
    ds.close();
    const store = new LocalStore(ds.tableUri);
    const timeline = await readTimeline(store, lanceFormat);
    expect(timeline.checkpoint).toBeNull();
    expect(timeline.records).toEqual(await readVersionRecords(store, lanceFormat));
    expect(timeline.sources).toEqual({ archive: 0, checkpoint: 0, recent: 0, manifests: 4 });
  });

  it("with a checkpoint: reads only the version files newer than it", async () => {
    const ds = await dataset();
    const store = new LocalStore(ds.tableUri);
    await runCheckpoint(store);
    await ds.apply([
      { op: "append", rows: 1 },
      { op: "append", rows: 1 },
    ]);
    ds.close();
    store.stats.reset();
    const timeline = await readTimeline(store, lanceFormat);
    expect(timeline.checkpoint?.version).toBe(4);
    expect(timeline.sources).toEqual({ archive: 0, checkpoint: 4, recent: 0, manifests: 2 });
    expect(timeline.records).toEqual(await readVersionRecords(store, lanceFormat));
  });

  it("a corrupt newest checkpoint falls back to the previous one, and still lists every version", async () => {
    const ds = await dataset();
    const store = new LocalStore(ds.tableUri);
    await runCheckpoint(store);
    await ds.apply([{ op: "append", rows: 1 }]);
    ds.close();
    await runCheckpoint(store);
    await writeFile(join(ds.tableUri, checkpointKey(5)), "truncated");
    const timeline = await readTimeline(store, lanceFormat);
    expect(timeline.checkpoint?.version).toBe(4);
    expect(timeline.skippedCheckpoints).toEqual([{ key: checkpointKey(5), problem: expect.stringMatching(/not an Arrow IPC file/) }]);
    expect(timeline.records).toEqual(await readVersionRecords(store, lanceFormat));
  });

  it("lists removed versions from the checkpoint, flagged by the version files that are gone", async () => {
    const ds = await dataset();
    ds.close();
    const store = new LocalStore(ds.tableUri);
    await runCheckpoint(store);
    const [first] = await lanceFormat.listVersionFiles(store);
    await store.deleteMany([first!.key]); // removed by someone else after the checkpoint
    const timeline = await readTimeline(store, lanceFormat);
    expect(timeline.records.map((r) => [r.version, r.is_cleaned_up])).toEqual([
      [1, true],
      [2, false],
      [3, false],
      [4, false],
    ]);
  });

  it("takes records another source already holds (the head's seam) without reading their files", async () => {
    const ds = await dataset();
    ds.close();
    const store = new LocalStore(ds.tableUri);
    const all = await readVersionRecords(store, lanceFormat);
    const timeline = await readTimeline(store, lanceFormat, { recent: { records: all.slice(2), source: "head" } });
    expect(timeline.sources).toEqual({ archive: 0, checkpoint: 0, recent: 2, manifests: 2 });
    expect(timeline.records).toEqual(all);
  });

  it("merges by version: later sources win; flags follow the listing and the tags now", () => {
    const merged = mergeTimeline({
      checkpointRecords: [versionRecord(1, { is_cleaned_up: false, is_tagged: true }), versionRecord(2, { total_rows: 1 })],
      recent: [versionRecord(2, { total_rows: 2 })],
      manifestRecords: [versionRecord(3)],
      liveVersions: new Set([2, 3]),
      taggedVersions: new Set([3]),
    });
    expect(merged.map((r) => [r.version, r.total_rows, r.is_cleaned_up, r.is_tagged])).toEqual([
      [1, 10, true, false],
      [2, 2, false, false],
      [3, 30, false, true],
    ]);
  });

  it("an archive with no version files left is still a timeline", async () => {
    const dir = await makeTempDir("lw-timeline-archive-");
    dirs.push(dir);
    const store = new LocalStore(dir);
    await archiveVersions(store, {
      previous: null,
      records: [versionRecord(1), versionRecord(2)],
      liveVersions: new Set(),
      taggedVersions: new Set(),
      tableFormat: "lance",
      now: new Date(),
    });
    const timeline = await readTimeline(store, lanceFormat);
    expect(timeline.records.map((r) => [r.version, r.is_cleaned_up])).toEqual([
      [1, true],
      [2, true],
    ]);
  });
});

describe("version-at: which version was current at a time", () => {
  const at = (version: number, timestamp_millis: number) => versionRecord(version, { timestamp_millis });

  it("is the highest version committed at or before the time", () => {
    const records = [at(1, 100), at(2, 200), at(3, 300)];
    expect(versionAt(records, 99)).toBeNull();
    expect(versionAt(records, 100)).toMatchObject({ version: 1, current_from_millis: 100, current_until_millis: 200 });
    expect(versionAt(records, 250)).toMatchObject({ version: 2, current_until_millis: 300 });
    expect(versionAt(records, 10_000)).toMatchObject({ version: 3, current_until_millis: null });
  });

  it("timestamps that go backwards count from the predecessor's: the answer never goes back in time", () => {
    // Version 3's writer clock was behind: its own stamp (150) is before version 2's (300).
    const records = [at(1, 100), at(2, 300), at(3, 150), at(4, 400)];
    expect(currentFromTimes(records)).toEqual([100, 300, 300, 400]);
    expect(versionAt(records, 200)).toMatchObject({ version: 1 }); // not 3: it cannot precede 2
    expect(versionAt(records, 300)).toMatchObject({ version: 3, current_from_millis: 300 }); // ties → the later commit
    expect(versionAt(records, 399)).toMatchObject({ version: 3, current_until_millis: 400 });
    const answers = Array.from({ length: 50 }, (_, i) => versionAt(records, 90 + i * 10)?.version ?? 0);
    expect(answers).toEqual([...answers].sort((a, b) => a - b));
  });

  it("gaps in history (versions never archived) are skipped; order of input does not matter", () => {
    const records = [at(7, 700), at(2, 200), at(5, 500)];
    expect(versionAt(records, 600)).toMatchObject({ version: 5, current_until_millis: 700 });
  });

  it("parses ISO 8601 (UTC unless it says otherwise) and Unix milliseconds", () => {
    expect(parseTimePoint("2026-11-29T14:55:00Z")).toBe(Date.UTC(2026, 10, 29, 14, 55));
    expect(parseTimePoint("2026-11-29T14:55:00")).toBe(Date.UTC(2026, 10, 29, 14, 55));
    expect(parseTimePoint("2026-11-29T14:55:00+01:00")).toBe(Date.UTC(2026, 10, 29, 13, 55));
    expect(parseTimePoint("2026-11-29")).toBe(Date.UTC(2026, 10, 29));
    expect(parseTimePoint("1764428100000")).toBe(1764428100000);
    for (const bad of ["yesterday", "29/11/2026", "", "2026-13-45"]) expect(parseTimePoint(bad)).toBeNull();
  });
});

describe("readTimeline while a cleanup removes versions", () => {
  it("a version file removed between the listing and its read: read again, its history comes from the checkpoint written first", async () => {
    const ds = await dataset(5);
    ds.close();
    const store = new LocalStore(ds.tableUri);
    const before = await readTimeline(store, lanceFormat);
    const files = await lanceFormat.listVersionFiles(store);
    // The store a reader sees: right after its first listing of version files, a cleanup archives
    // the history (as it does before deleting) and removes versions 1 and 2.
    let cleaned = false;
    const racing = Object.create(store) as LocalStore;
    // Whichever listing the reader uses (with each file's metadata, or keys alone).
    const raced = <T>(prefix: string, listing: AsyncIterable<T>): AsyncIterable<T> => {
      if (cleaned || !lanceFormat.versionsPrefix.startsWith(prefix)) return listing;
      cleaned = true;
      return (async function* () {
        const listed: T[] = [];
        for await (const object of listing) listed.push(object);
        await archiveVersions(store, {
          previous: null,
          records: before.records,
          liveVersions: new Set(before.records.map((r) => r.version)),
          taggedVersions: new Set(),
          tableFormat: "lance",
          now: new Date(),
        });
        await store.deleteMany(files.slice(0, 2).map((f) => f.key));
        yield* listed;
      })();
    };
    racing.list = (prefix, options) => raced(prefix, store.list(prefix, options));
    racing.listKeys = (prefix, options) => raced(prefix, store.listKeys(prefix, options));
    const timeline = await readTimeline(racing, lanceFormat);
    expect(timeline.records.map((r) => r.version)).toEqual(before.records.map((r) => r.version));
    expect(timeline.records.filter((r) => r.is_cleaned_up).map((r) => r.version)).toEqual([1, 2]);
  });
});
