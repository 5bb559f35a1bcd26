import { existsSync, mkdirSync, readdirSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { plannedFiles } from "../../lib/maintenance/file-plan.ts";
import type { PlannedFile } from "../../lib/maintenance/file-plan.ts";
import { CompactListing } from "../../lib/maintenance/listing.ts";
import { SpillArea, SpillList, decodeJson, encodeJson } from "../../lib/maintenance/spill.ts";
import { makeTempDir, removeDir } from "../support/lance-datasets.ts";

let dir: string;
beforeEach(async () => {
  dir = await makeTempDir("spill-");
});
afterEach(() => removeDir(dir));

const numbers = { encode: (items: readonly number[]) => encodeJson(items), decode: (bytes: Uint8Array) => decodeJson<number[]>(bytes) };

it("a list reads back every item in order, across pages on disk and the page in memory, also while it grows", () => {
  const area = SpillArea.open({ parent: dir, pageItems: 4 });
  const list = new SpillList(numbers, area);
  for (let i = 0; i < 10; i++) list.push(i);
  expect(list.length).toBe(10);
  expect([...list]).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  // Two full pages went to the area's file; the last two are in memory.
  const [folder] = readdirSync(dir);
  expect(readdirSync(join(dir, folder!))).toHaveLength(1);
  const seen: number[] = [];
  for (const item of list) {
    seen.push(item);
    if (item === 5) for (let more = 10; more < 16; more++) list.push(more);
  }
  expect(seen).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  expect([...list.filter((n) => n % 3 === 0)]).toEqual([0, 3, 6, 9, 12, 15]);
  area.dispose();
  expect(readdirSync(dir)).toEqual([]);
  expect(() => area.file()).toThrow(/after the run ended/);
});

it("without an area, full pages stay encoded in memory and read back the same", () => {
  const list = new SpillList(numbers, null, 3);
  for (let i = 0; i < 8; i++) list.push(i * 2);
  expect([...list]).toEqual([0, 2, 4, 6, 8, 10, 12, 14]);
});

it("a listing and a plan keep every field through a page on disk", () => {
  const area = SpillArea.open({ parent: dir, pageItems: 2 });
  const listing = new CompactListing(area);
  const objects = [
    { key: "data/a b.lance", size: 1, etag: '"e"', lastModified: new Date(1_000) },
    { key: "data/ü\n.lance", size: 2 ** 40, etag: "", lastModified: new Date(2_000) },
    { key: "data/c.lance", size: 0, etag: "", lastModified: new Date(3_000) },
  ];
  for (const object of objects) listing.push(object);
  expect([...listing]).toEqual(objects.map((o) => ({ ...o, etag: "" })));
  const plan = plannedFiles(area);
  const files: PlannedFile[] = [
    { key: "_versions/1.manifest", kind: "commit", size: 5, lastModified: "2026-01-01T00:00:00.000Z", action: "delete", reason: "version 1 removed", version: 1 },
    { key: "data/x.lance", kind: "data", size: 6, lastModified: "2026-01-01T00:00:00.000Z", action: "delete", reason: "named only by removed version 1" },
    { key: "data/y.lance", kind: "unknown", size: 7, lastModified: "2026-01-02T00:00:00.000Z", action: "keep", reason: "not a file cleanup knows" },
  ];
  for (const file of files) plan.push(file);
  expect([...plan]).toEqual(files);
  area.dispose();
});

it("a spill folder left by a process that is gone is removed when the next run opens its area; a live one is not", () => {
  const stale = join(dir, "lakewarden-spill-999999999-1-abc");
  const mine = join(dir, `lakewarden-spill-${process.pid}-1-abc`);
  const unknownOld = join(dir, "lakewarden-spill-old");
  for (const folder of [stale, mine, unknownOld]) mkdirSync(folder);
  const dayAgo = new Date(Date.now() - 25 * 3_600_000);
  utimesSync(unknownOld, dayAgo, dayAgo);
  const live = SpillArea.open({ parent: dir });
  const area = SpillArea.open({ parent: dir });
  // This process's pid with another start time: an earlier life of this pid, gone.
  expect(existsSync(mine)).toBe(false);
  expect(existsSync(stale)).toBe(false);
  expect(existsSync(unknownOld)).toBe(false);
  expect(readdirSync(dir)).toHaveLength(2);
  live.dispose();
  area.dispose();
});

it("a temp folder it cannot write is one clear error naming it", () => {
  expect(() => SpillArea.open({ parent: join(dir, "missing", "deeper") })).toThrow(/cannot write .*set TMPDIR to a writable folder/);
});

describe("a cleanup run's spill folder", () => {
  const savedTmp = process.env.TMPDIR;
  afterEach(() => {
    if (savedTmp === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = savedTmp;
  });

  it("is not left behind when another run holds the lease, and an unwritable temp folder stops the run before the lease", async () => {
    const { buildLanceDataset } = await import("../support/lance-datasets.ts");
    const { runCleanup } = await import("../../lib/maintenance/run-cleanup.ts");
    const { Lease, LEASE_KEY } = await import("../../lib/maintenance/lease.ts");
    const { LeaseHeldError } = await import("../../lib/maintenance/errors.ts");
    const { LocalStore } = await import("../../lib/store/local-store.ts");
    const ds = await buildLanceDataset({
      dbUri: join(dir, "db"),
      steps: [
        { op: "create", rows: 5 },
        { op: "append", rows: 2 },
      ],
    });
    ds.close();
    const store = new LocalStore(ds.tableUri);
    const temp = join(dir, "temp");
    mkdirSync(temp);
    process.env.TMPDIR = temp;

    const other = await Lease.acquire(store, { runId: "other-run" });
    await expect(runCleanup(store, { settings: { olderThanMs: 0 } })).rejects.toBeInstanceOf(LeaseHeldError);
    expect(readdirSync(temp)).toEqual([]);
    await other.release();

    // The released lease stays as it is: the run stopped before taking it.
    const released = (await store.head(LEASE_KEY)).etag;
    process.env.TMPDIR = join(dir, "missing");
    await expect(runCleanup(store, { settings: { olderThanMs: 0 } })).rejects.toThrow(/cannot write .*set TMPDIR/);
    expect((await store.head(LEASE_KEY)).etag).toBe(released);
  });
});
