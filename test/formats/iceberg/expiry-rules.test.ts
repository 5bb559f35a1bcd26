/**
 * `cleanup` (runCleanup, the pipeline the CLI and the Lambdas run) expires exactly the snapshots
 * the Iceberg spec's per-ref retention expires, table-driven after iceberg-java's
 * TestRemoveSnapshots: branches with their own max-snapshot-age-ms and min-snapshots-to-keep,
 * tags kept, refs past max-ref-age-ms dropped, main never dropped, ancestry beyond the age kept by
 * the minimum count; lakewarden's explicit flags only ever keep more, and --protect-before applies
 * to the outcome all at once or not at all.
 *
 * Histories are built on copies of the spark-bunnies fixture (s1 ← s2 ← s3, committed 2025-03-30)
 * with the appendSnapshot helper. Every outcome is checked against an independent reading: the
 * remaining snapshots and refs from the metadata text, every remaining snapshot's manifest list,
 * manifests, data and delete files read by icebird and found on disk, the files deleted equal to
 * what only expired snapshots reached (icebird on the old metadata), the order of writes (the new
 * metadata file, create-only, is the only write inside metadata/ before any delete), and history:
 * every snapshot ever seen is still listed, the expired ones cleaned up.
 */
import { copyFile, readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { icebergFormat } from "../../../lib/formats/iceberg/iceberg-format.ts";
import { DAY_MS } from "../../../lib/formats/iceberg/retention.ts";
import type { CleanupSettings } from "../../../lib/maintenance/policy.ts";
import { runCleanup } from "../../../lib/maintenance/run-cleanup.ts";
import type { CleanupReport } from "../../../lib/maintenance/cleanup-report.ts";
import { openStore } from "../../../lib/store/index.ts";
import type { DeleteResult, ObjectStore, PutOptions, PutResult } from "../../../lib/store/object-store.ts";
import { readTimeline } from "../../../lib/versions/timeline.ts";
import { appendSnapshot, copyIcebergFixture, fileExists, icebirdLiveFiles, listFiles, snapshotsByTextPass, type FixtureCopy } from "../../support/iceberg-fixtures.ts";
import { BUNNIES, buildHistory, currentMetadataName, everySnapshotReads, reach, refNames, type History } from "../../support/iceberg-histories.ts";

const copies: FixtureCopy[] = [];
afterAll(async () => {
  await Promise.all(copies.map((c) => c.remove()));
});

const NOW = Date.now();
const HOUR = 3600_000;

interface Case extends History {
  name: string;
  settings?: CleanupSettings;
  /** The snapshots left, by name. */
  remain: string[];
  /** The refs left, by name. */
  refsAfter: string[];
  /** The protection outcome, where the case sets --protect-before. */
  protection?: string;
}

/** The store the pipeline runs on, recording every put (with its options) and delete in order. */
function recording(inner: ObjectStore): { store: ObjectStore; log: { op: "put" | "delete"; key: string; options?: PutOptions }[] } {
  const log: { op: "put" | "delete"; key: string; options?: PutOptions }[] = [];
  const store = Object.create(inner) as ObjectStore;
  store.put = (key: string, body: Uint8Array, options?: PutOptions): Promise<PutResult> => {
    log.push({ op: "put", key, ...(options ? { options } : {}) });
    return inner.put(key, body, options);
  };
  store.deleteMany = (keys: readonly string[]): Promise<DeleteResult> => {
    for (const key of keys) log.push({ op: "delete", key });
    return inner.deleteMany(keys);
  };
  return { store, log };
}

const CASES: Case[] = [
  {
    name: "main: snapshots within max-snapshot-age-ms (default 5 days) stay, the older ancestors go once min-snapshots-to-keep (1) is met",
    commits: [
      { name: "a", ageMs: 2 * DAY_MS },
      { name: "b", ageMs: HOUR },
    ],
    remain: ["a", "b"],
    refsAfter: ["main"],
  },
  {
    name: "main: the table's history.expire.min-snapshots-to-keep keeps ancestry beyond the age",
    commits: [
      { name: "a", ageMs: 2 * DAY_MS },
      { name: "b", ageMs: HOUR },
    ],
    properties: { "history.expire.min-snapshots-to-keep": "4" },
    remain: ["s2", "s3", "a", "b"],
    refsAfter: ["main"],
  },
  {
    name: "main: the ref's own max-snapshot-age-ms and min-snapshots-to-keep win over the table's history.expire.*",
    commits: [
      { name: "a", ageMs: 2 * DAY_MS },
      { name: "b", ageMs: 30 * 60_000 },
    ],
    properties: { "history.expire.max-snapshot-age-ms": String(1000 * DAY_MS), "history.expire.min-snapshots-to-keep": "5" },
    refs: { main: { "snapshot-id": "@b", type: "branch", "max-snapshot-age-ms": HOUR, "min-snapshots-to-keep": 2 } },
    remain: ["a", "b"],
    refsAfter: ["main"],
  },
  {
    name: "a branch with its own max-snapshot-age-ms keeps its older commits; main's history goes by the table's",
    commits: [
      { name: "c1", ageMs: 8 * DAY_MS, branch: "audit", parent: "@s2", refs: { audit: { type: "branch", "max-snapshot-age-ms": 9 * DAY_MS } } },
      { name: "c2", ageMs: 6 * DAY_MS, branch: "audit" },
    ],
    remain: ["s3", "c1", "c2"],
    refsAfter: ["audit", "main"],
  },
  {
    name: "a branch with min-snapshots-to-keep keeps its ancestry down into main's history",
    commits: [
      { name: "c1", ageMs: 10 * DAY_MS, branch: "audit", parent: "@s2", refs: { audit: { type: "branch", "min-snapshots-to-keep": 3 } } },
      { name: "c2", ageMs: 8 * DAY_MS, branch: "audit" },
    ],
    remain: ["s2", "s3", "c1", "c2"],
    refsAfter: ["audit", "main"],
  },
  {
    name: "tags keep their snapshot; a tag and a branch past max-ref-age-ms are dropped, and what only they held goes unless it is younger than max-snapshot-age-ms",
    commits: [
      { name: "x1", ageMs: 7 * DAY_MS, branch: "stale", parent: "@s3", refs: { stale: { type: "branch", "max-ref-age-ms": 2 * DAY_MS } } },
      { name: "x2", ageMs: 3 * DAY_MS, branch: "stale" },
    ],
    refs: { first: { "snapshot-id": "@s1", type: "tag" }, old: { "snapshot-id": "@s2", type: "tag", "max-ref-age-ms": DAY_MS } },
    remain: ["s1", "s3", "x2"],
    refsAfter: ["first", "main"],
  },
  {
    name: "main is never dropped, whatever max-ref-age-ms says; a tag on its head past the table's max-ref-age-ms is",
    commits: [],
    properties: { "history.expire.max-ref-age-ms": "1" },
    refs: { main: { "snapshot-id": "@s3", type: "branch", "max-ref-age-ms": 1 }, head: { "snapshot-id": "@s3", type: "tag" } },
    remain: ["s3"],
    refsAfter: ["main"],
  },
  {
    name: "a tag past its max-ref-age-ms is dropped by a commit of its own when no snapshot expires (as iceberg-java commits a ref-only change)",
    commits: [
      { name: "a", ageMs: 2 * DAY_MS },
      { name: "b", ageMs: HOUR },
    ],
    properties: { "history.expire.min-snapshots-to-keep": "5" },
    refs: { old: { "snapshot-id": "@a", type: "tag", "max-ref-age-ms": DAY_MS } },
    remain: ["s1", "s2", "s3", "a", "b"],
    refsAfter: ["main"],
  },
  {
    name: "--retain-versions only keeps more: the newest 3 stay although the spec lets s3 go",
    commits: [
      { name: "a", ageMs: 2 * DAY_MS },
      { name: "b", ageMs: HOUR },
    ],
    settings: { retainVersions: 3 },
    remain: ["s3", "a", "b"],
    refsAfter: ["main"],
  },
  {
    name: "--older-than shorter than the spec's age never expires what the spec keeps",
    commits: [
      { name: "a", ageMs: 2 * DAY_MS },
      { name: "b", ageMs: HOUR },
    ],
    settings: { olderThanMs: DAY_MS },
    remain: ["a", "b"],
    refsAfter: ["main"],
  },
  {
    name: "--older-than longer than every snapshot's age keeps them all: no commit",
    commits: [{ name: "a", ageMs: 2 * DAY_MS }],
    settings: { olderThanMs: 3000 * DAY_MS },
    remain: ["s1", "s2", "s3", "a"],
    refsAfter: ["main"],
  },
  {
    name: "--protect-before: only part of the history below it is due (a tag keeps s1), so all of it stays",
    commits: [],
    refs: { first: { "snapshot-id": "@s1", type: "tag" } },
    settings: { protectBefore: 3 },
    remain: ["s1", "s2", "s3"],
    refsAfter: ["first", "main"],
    protection: "kept-all",
  },
  {
    name: "--protect-before: everything below it is due, so it goes in the one expiry commit",
    commits: [],
    settings: { protectBefore: 3 },
    remain: ["s3"],
    refsAfter: ["main"],
    protection: "removed-all",
  },
];

describe("cleanup expires snapshots by the spec's per-ref retention", () => {
  for (const c of CASES) {
    it(c.name, async () => {
      const copy = await copyIcebergFixture("spark-bunnies");
      copies.push(copy);
      const { dir } = copy;
      const { ids, metadata } = await buildHistory(dir, c, NOW);
      const nameOf = new Map(Object.entries(ids).map(([name, id]) => [id, name]));
      const before = await snapshotsByTextPass(join(dir, "metadata", metadata));
      const expired = before.filter((s) => !c.remain.includes(nameOf.get(s.id)!));
      expect(before.map((s) => nameOf.get(s.id)).filter((n) => n !== undefined)).toHaveLength(before.length);

      // What only the expired snapshots reach, read by icebird on the metadata the run starts from.
      const reached = await Promise.all(before.map((_, i) => reach(dir, metadata, i)));
      const kept = new Set(before.flatMap((s, i) => (expired.includes(s) ? [] : reached[i]!)));
      const onlyExpired = [...new Set(before.flatMap((s, i) => (expired.includes(s) ? reached[i]! : [])))].filter((k) => !kept.has(k)).sort();
      const liveBefore = await icebirdLiveFiles(dir, metadata);
      const filesBefore = await listFiles(dir);
      const versionOf = new Map((await icebergFormat.listVersionFiles(openStore(dir))).map((f) => [f.id!, f.version]));

      const settings = c.settings ?? {};
      const dropped = (await refNames(dir, metadata)).filter((name) => !c.refsAfter.includes(name));
      // A commit is due when a snapshot expires or a ref is dropped, either alone.
      const committing = expired.length > 0 || dropped.length > 0;
      const dry = await runCleanup(openStore(dir), { settings, dryRun: true, now: () => new Date(NOW) });
      expect(await listFiles(dir)).toEqual(filesBefore);
      // The dry run says it would write the commit, and what it would change.
      if (committing) {
        expect(dry.removal_commit).toMatchObject({ key: null, status: "would write", base: `metadata/${metadata}` });
        expect(dry.removal_commit!.versions_removed).toHaveLength(expired.length);
        expect(dry.removal_commit!.changes.map((w) => /ref "([^"]+)"/.exec(w)![1]).sort()).toEqual(dropped);
      } else expect(dry.removal_commit).toBeNull();
      const { store, log } = recording(openStore(dir));
      const report: CleanupReport = await runCleanup(store, { settings, now: () => new Date(NOW) });
      expect(report.status, report.errors.join("; ")).toBe("completed");
      expect(report.versions).toEqual(dry.versions);
      if (c.protection) expect(report.protection?.result).toBe(c.protection);

      // The plan: exactly the expected snapshots removed, each with the rule's reason.
      expect(
        report.versions
          .filter((v) => !v.keep)
          .map((v) => v.version)
          .sort((a, b) => a - b),
      ).toEqual(expired.map((s) => versionOf.get(s.id)!).sort((a, b) => a - b));
      for (const v of report.versions.filter((d) => !d.keep)) expect(v.reason).toMatch(/expires by the table's snapshot retention/);

      const after = await currentMetadataName(dir);
      const remaining = await snapshotsByTextPass(join(dir, "metadata", after));
      expect(remaining.map((s) => nameOf.get(s.id)).sort()).toEqual([...c.remain].sort());
      expect(await refNames(dir, after)).toEqual(c.refsAfter);
      // The report says which refs the commit dropped, and why.
      expect(
        report.warnings
          .filter((w) => / expired \(/.test(w))
          .map((w) => /ref "([^"]+)"/.exec(w)![1])
          .sort(),
      ).toEqual(committing ? dropped : []);

      const metadataWrites = log.filter((e) => e.op === "put" && e.key.startsWith("metadata/"));
      if (!committing) {
        expect(report.removal_commit).toBeNull();
        expect(after).toBe(metadata);
        expect(metadataWrites).toEqual([]);
        expect((await listFiles(dir)).filter((k) => !k.startsWith("_lakewarden/"))).toEqual(filesBefore);
        return;
      }
      expect(after).not.toBe(metadata);
      expect(report.removal_commit).toMatchObject({ key: `metadata/${after}`, status: "written", base: `metadata/${metadata}` });
      expect(report.removal_commit!.changes).toEqual(dry.removal_commit!.changes);
      const receipt = JSON.parse(await readFile(join(dir, report.receipt!), "utf8")) as { removal_commit: unknown };
      expect(receipt.removal_commit).toEqual(report.removal_commit);
      // The commit first: the next metadata file, create-only, then the hint; no other write in
      // metadata/ and no delete before it (a ref-only commit deletes nothing).
      const firstDelete = log.findIndex((e) => e.op === "delete");
      if (expired.length > 0) expect(firstDelete).toBeGreaterThan(-1);
      const beforeDeletes = log.slice(0, firstDelete === -1 ? log.length : firstDelete).filter((e) => e.op === "put" && e.key.startsWith("metadata/"));
      expect(beforeDeletes.map((e) => e.key)).toEqual([`metadata/${after}`, "metadata/version-hint.text"]);
      expect(beforeDeletes[0]!.options?.ifNoneMatch).toBe("*");
      expect(metadataWrites).toEqual(beforeDeletes);

      // The table reads at the new metadata with the same live files; every remaining snapshot is whole.
      expect(await icebirdLiveFiles(dir, after)).toEqual(liveBefore);
      await everySnapshotReads(dir);
      // Deleted: exactly what only expired snapshots reached (metadata JSON never).
      const filesAfter = new Set(await listFiles(dir));
      expect(filesBefore.filter((k) => !filesAfter.has(k)).sort()).toEqual(onlyExpired);

      // History survives: every snapshot is still listed, the expired ones cleaned up.
      const timeline = await readTimeline(openStore(dir), icebergFormat);
      expect(timeline.records.map((r) => r.version_id).sort()).toEqual(before.map((s) => s.id).sort());
      for (const r of timeline.records) expect(r.is_cleaned_up, nameOf.get(r.version_id!)).toBe(expired.some((s) => s.id === r.version_id));
    });
  }
});

describe("a writer commits after cleanup planned", () => {
  /** A writer's commit (a new file, tagging s2, which the plan lets go) into the table at `dir`; its metadata key. */
  async function writerCommits(dir: string, s2: string): Promise<string> {
    const name = `w-${Math.random().toString(36).slice(2)}.parquet`;
    await copyFile(join(dir, "data/a-00001.parquet"), join(dir, "data", name));
    const files = [{ path: `${BUNNIES}/data/${name}`, recordCount: 20, sizeInBytes: 3560 }];
    return (await appendSnapshot(dir, { files, timestampMs: NOW, refs: { [`pinned-${name}`]: { "snapshot-id": BigInt(s2), type: "tag" } } })).metadataKey;
  }

  /** Nothing of the table deleted before the removal commit that was written (a lost plan deletes only its own intent, under _lakewarden/). */
  function deletesBeforeCommit(log: { op: "put" | "delete"; key: string; options?: PutOptions }[], committed: string): string[] {
    const at = log.findIndex((e) => e.op === "put" && e.key === committed);
    return log
      .slice(0, at === -1 ? log.length : at)
      .filter((e) => e.op === "delete" && !e.key.startsWith("_lakewarden/"))
      .map((e) => e.key);
  }

  it("a newer metadata file than the plan's: the run deletes nothing on that plan, plans again on the writer's commit and completes", async () => {
    const copy = await copyIcebergFixture("spark-bunnies");
    copies.push(copy);
    const { dir } = copy;
    const { ids } = await buildHistory(dir, { commits: [{ name: "a", ageMs: 2 * DAY_MS }] }, NOW);
    const { store, log } = recording(openStore(dir));
    let writerCommitted = "";
    // The writer lands right after the plan settled (its intent is the last write before the commit).
    const put = store.put.bind(store);
    store.put = async (key, body, options) => {
      const result = await put(key, body, options);
      if (key.endsWith(".intent.json") && writerCommitted === "") writerCommitted = await writerCommits(dir, ids.s2!);
      return result;
    };
    const report = await runCleanup(store, { now: () => new Date(NOW) });
    expect(writerCommitted).toBe("metadata/v7.metadata.json");
    expect(report.status).toBe("completed");
    expect(report.replans[0]).toMatch(
      /lost to another writer's commit \(the current metadata is metadata\/v7\.metadata\.json, not metadata\/v6\.metadata\.json: re-plan\); nothing was deleted: planned again/,
    );
    expect(report.removal_commit).toMatchObject({ status: "written", base: "metadata/v7.metadata.json", key: "metadata/v8.metadata.json" });
    expect(deletesBeforeCommit(log, "metadata/v8.metadata.json")).toEqual([]);
    // The lost run's intent was taken back: only the run that completed left none either.
    expect((await listFiles(dir)).filter((key) => key.endsWith(".intent.json"))).toEqual([]);
    // The writer's tag keeps s2, which the lost plan had let go.
    const remaining = await snapshotsByTextPass(join(dir, "metadata", await currentMetadataName(dir)));
    expect(remaining.map((s) => s.id)).toContain(ids.s2);
    await everySnapshotReads(dir);
  });

  it("the writer's commit lands at the create-only write itself: refused, planned again, completed", async () => {
    const copy = await copyIcebergFixture("spark-bunnies");
    copies.push(copy);
    const { dir } = copy;
    const { ids } = await buildHistory(dir, { commits: [{ name: "a", ageMs: 2 * DAY_MS }] }, NOW);
    const { store, log } = recording(openStore(dir));
    let writerCommitted = "";
    // Between the commit's check that its base is current and its create-only put of the next metadata file.
    const put = store.put.bind(store);
    store.put = async (key, body, options) => {
      if (/^metadata\/v\d+\.metadata\.json$/.test(key) && options?.ifNoneMatch === "*" && writerCommitted === "") writerCommitted = await writerCommits(dir, ids.s2!);
      return put(key, body, options);
    };
    const report = await runCleanup(store, { now: () => new Date(NOW) });
    expect(writerCommitted).toBe("metadata/v7.metadata.json");
    expect(report.status).toBe("completed");
    expect(report.replans[0]).toMatch(/lost to another writer's commit \(.*metadata\/v7\.metadata\.json: already exists.*\); nothing was deleted: planned again/);
    expect(report.removal_commit).toMatchObject({ status: "written", base: "metadata/v7.metadata.json", key: "metadata/v8.metadata.json" });
    expect(deletesBeforeCommit(log, "metadata/v8.metadata.json")).toEqual([]);
    const remaining = await snapshotsByTextPass(join(dir, "metadata", await currentMetadataName(dir)));
    expect(remaining.map((s) => s.id)).toContain(ids.s2);
    await everySnapshotReads(dir);
  });

  it("a writer that wins every time: bounded, the run fails in one line after its re-plans, nothing of the table deleted", async () => {
    const copy = await copyIcebergFixture("spark-bunnies");
    copies.push(copy);
    const { dir } = copy;
    const { ids } = await buildHistory(dir, { commits: [{ name: "a", ageMs: 2 * DAY_MS }] }, NOW);
    const { store, log } = recording(openStore(dir));
    let commits = 0;
    const put = store.put.bind(store);
    store.put = async (key, body, options) => {
      const result = await put(key, body, options);
      if (key.endsWith(".intent.json")) {
        await writerCommits(dir, ids.s2!);
        commits++;
      }
      return result;
    };
    const before = await listFiles(dir);
    await expect(runCleanup(store, { now: () => new Date(NOW), maxCommitReplans: 2 })).rejects.toThrow(/lost to another writer's commit .*; nothing was deleted$/);
    expect(commits).toBe(3);
    expect(log.filter((e) => e.op === "delete" && !e.key.startsWith("_lakewarden/"))).toEqual([]);
    expect(log.filter((e) => e.op === "put" && e.key.startsWith("metadata/"))).toEqual([]);
    for (const key of before) expect(await fileExists(dir, key), key).toBe(true);
    // Each lost run took its intent back (and its parts): none names versions or files it never removed.
    expect((await listFiles(dir)).filter((key) => key.includes("intent"))).toEqual([]);
  });
});

describe("the report's policy says what decided: the table's snapshot retention, which settings only extend", () => {
  const cases: {
    name: string;
    properties?: Record<string, string>;
    settings?: CleanupSettings;
    olderThan: { value: string; source: RegExp };
    retainVersions: { value: number; source: RegExp };
  }[] = [
    {
      name: "nothing set: Iceberg's defaults (5 days, 1), not lakewarden's 7 days",
      olderThan: {
        value: "5d",
        source: /^the table's snapshot retention: max-snapshot-age-ms from Iceberg's default, where a branch's own max-snapshot-age-ms does not override it$/,
      },
      retainVersions: { value: 1, source: /^the table's snapshot retention: min-snapshots-to-keep from Iceberg's default, / },
    },
    {
      name: "the table's history.expire.* properties",
      properties: { "history.expire.max-snapshot-age-ms": String(10 * DAY_MS), "history.expire.min-snapshots-to-keep": "3" },
      olderThan: { value: "10d", source: /^the table's snapshot retention: max-snapshot-age-ms from table property history\.expire\.max-snapshot-age-ms, / },
      retainVersions: { value: 3, source: /min-snapshots-to-keep from table property history\.expire\.min-snapshots-to-keep, / },
    },
    {
      name: "shorter settings do not shorten it",
      settings: { olderThanMs: DAY_MS },
      olderThan: { value: "5d", source: /^the table's snapshot retention: max-snapshot-age-ms from Iceberg's default, .*; option 1d only lengthens it, never shortens it$/ },
      retainVersions: { value: 1, source: /^the table's snapshot retention: min-snapshots-to-keep from Iceberg's default, [^;]*$/ },
    },
    {
      name: "longer settings lengthen it",
      settings: { olderThanMs: 30 * DAY_MS, retainVersions: 4 },
      olderThan: { value: "30d", source: /^option, which lengthens 5d \(the table's snapshot retention: max-snapshot-age-ms from Iceberg's default, / },
      retainVersions: { value: 4, source: /^option, which lengthens 1 \(the table's snapshot retention: min-snapshots-to-keep/ },
    },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const copy = await copyIcebergFixture("spark-bunnies");
      copies.push(copy);
      await buildHistory(copy.dir, { commits: [{ name: "a", ageMs: 2 * DAY_MS }], ...(c.properties ? { properties: c.properties } : {}) }, NOW);
      const report = await runCleanup(openStore(copy.dir), { settings: c.settings ?? {}, dryRun: true, now: () => new Date(NOW) });
      expect(report.policy?.older_than?.value).toBe(c.olderThan.value);
      expect(report.policy?.older_than?.source).toMatch(c.olderThan.source);
      expect(report.policy?.retain_versions?.value).toBe(c.retainVersions.value);
      expect(report.policy?.retain_versions?.source).toMatch(c.retainVersions.source);
    });
  }
});
