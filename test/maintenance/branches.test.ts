/**
 * Cleanup of a table with branches, made by LanceDB itself (`table.branches()`): a branch is a
 * shallow clone under `tree/{name}/` whose manifests name the main table's files through a base
 * path, so the main version it was created from, and every file its manifests still name, must
 * survive any cleanup of main. LanceDB must then read the branch, at every one of its versions,
 * and main's kept versions exactly as before.
 */
import { stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import * as lancedb from "@lancedb/lancedb";
import { BranchLocationError } from "../../lib/formats/errors.ts";
import { readLanceVersion } from "../../lib/formats/lance/read-version.ts";
import { deletionFileName } from "../../lib/formats/lance/snapshot-files.ts";
import { lanceFormat } from "../../lib/formats/lance/lance-format.ts";
import { deleteUnreferenced } from "../../lib/maintenance/delete-unreferenced.ts";
import { planDeletes } from "../../lib/maintenance/plan-deletes.ts";
import { replanUntilSettled } from "../../lib/maintenance/replan.ts";
import type { ProcessedManifests } from "../../lib/maintenance/process-manifests.ts";
import { processManifests } from "../../lib/maintenance/process-manifests.ts";
import { runCleanup } from "../../lib/maintenance/run-cleanup.ts";
import { writeTableHead } from "../../lib/head/write-table-head.ts";
import { LocalStore } from "../../lib/store/local-store.ts";
import { buildLanceDataset, makeTempDir, removeDir, type DatasetStep } from "../support/lance-datasets.ts";
import { compareContents, listTree, readContents, type VersionContent } from "./lance-checks.ts";

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await removeDir(dir);
});

/** delete_unreferenced as the pipeline drives it: plan, plan again while the table moves, delete. */
async function planAndDelete(store: LocalStore, processed: ProcessedManifests, now: Date) {
  const planned = await planDeletes(store, lanceFormat, processed, { now });
  const { plan, replans } = await replanUntilSettled(store, lanceFormat, planned, { now });
  const outcome = await deleteUnreferenced(store, lanceFormat, plan, { now });
  return { ...outcome, replans, processed: plan.processed };
}

async function buildTable(steps: readonly DatasetStep[]) {
  const dbUri = await makeTempDir("lw-branches-");
  dirs.push(dbUri);
  return buildLanceDataset({ dbUri, steps });
}

/** A cutoff strictly after every commit so far. */
async function cutoffAfterCommits(): Promise<Date> {
  await new Promise((done) => setTimeout(done, 20));
  return new Date();
}

async function contentOf(table: lancedb.Table): Promise<VersionContent> {
  const rows = await table.query().select(["id"]).toArray();
  return { rows: rows.length, idSum: rows.reduce((sum, row) => sum + Number(row.id), 0), filtered: await table.countRows("id >= 0") };
}

function rows(firstId: number, count: number) {
  return Array.from({ length: count }, (_, i) => ({ id: firstId + i, name: `b-${firstId + i}`, score: (firstId + i) / 2 }));
}

/** Commits on a branch handle, recording what each branch version reads. */
async function commitOnBranch(branch: lancedb.Table, seen: Map<number, VersionContent>, commit: () => Promise<unknown>): Promise<void> {
  await commit();
  seen.set(await branch.version(), await contentOf(branch));
}

/** Every branch version LanceDB lists, read through a fresh connection. */
async function readBranch(dbUri: string, name: string): Promise<Map<number, VersionContent>> {
  const db = await lancedb.connect(dbUri);
  const table = await db.openTable("t");
  try {
    const branch = await (await table.branches()).checkout(name);
    const contents = new Map<number, VersionContent>();
    for (const { version } of await branch.listVersions()) {
      const pinned = await (await table.branches()).checkout(name, version);
      contents.set(version, await contentOf(pinned));
      pinned.close();
    }
    branch.close();
    return contents;
  } finally {
    table.close();
    db.close();
  }
}

/**
 * Files of the main table that a branch's manifests name through a base path pointing at the
 * main table's root: read straight from the branch's manifests, independently of how cleanup
 * decides, so the check holds whatever rule cleanup follows.
 */
async function mainFilesNamedByBranch(tableUri: string, branchName: string): Promise<Map<string, number[]>> {
  const branchStore = new LocalStore(join(tableUri, "tree", branchName));
  const named = new Map<string, number[]>();
  const add = (key: string, version: number) => named.set(key, [...(named.get(key) ?? []), version]);
  for (const file of await lanceFormat.listVersionFiles(branchStore)) {
    const { manifest } = await readLanceVersion(branchStore, file.key, file.size);
    const mainBases = new Set(manifest.basePaths.filter((base) => resolve(base.path) === resolve(tableUri)).map((base) => base.id));
    for (const fragment of manifest.fragments) {
      for (const data of fragment.files) if (data.baseId !== null && mainBases.has(data.baseId)) add(`data/${data.path}`, file.version);
      const deletion = fragment.deletionFile;
      if (deletion && deletion.baseId !== null && mainBases.has(deletion.baseId)) add(`_deletions/${deletionFileName(fragment.id, deletion)}`, file.version);
    }
    for (const index of manifest.indices) if (index.baseId !== null && mainBases.has(index.baseId)) add(`_indices/${index.uuid}/`, file.version);
  }
  return named;
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/** Files main's latest version references. */
async function referencedByLatest(store: LocalStore): Promise<Set<string>> {
  const latest = await lanceFormat.latestVersionFile(store);
  return new Set((await lanceFormat.readSnapshot(store, latest!)).referencedFiles.map((ref) => ref.path));
}

describe("cleanup of a table with a branch", () => {
  it("keeps the version the branch was created from and every main file the branch names; LanceDB reads branch and main as before", async () => {
    // Version 3 has a deletion file, version 4 an index; the branch starts at 4, deletes more
    // rows of main's fragments and appends its own; main is then overwritten, so nothing of
    // version 4 is needed by main's own latest version.
    const ds = await buildTable([{ op: "create", rows: 20 }, { op: "append", rows: 10 }, { op: "delete", where: "id % 4 = 1" }, { op: "createIndex" }, { op: "append", rows: 5 }]);
    const branchSeen = new Map<number, VersionContent>();
    const branch = await (await ds.table.branches()).create("exp", "main", 4);
    branchSeen.set(await branch.version(), await contentOf(branch));
    await commitOnBranch(branch, branchSeen, () => branch.add(rows(500, 6)));
    await commitOnBranch(branch, branchSeen, () => branch.delete("id = 2 OR id = 14"));
    await commitOnBranch(branch, branchSeen, () => branch.update({ where: "id = 6", valuesSql: { name: "'on-branch'" } }));
    branch.close();
    await ds.apply([
      { op: "overwrite", rows: 8 },
      { op: "append", rows: 3 },
    ]);
    ds.close();
    expect([...branchSeen.keys()]).toEqual([4, 5, 6, 7]);

    const store = new LocalStore(ds.tableUri);
    const needed = await mainFilesNamedByBranch(ds.tableUri, "exp");
    const neededPaths = [...needed.keys()].sort();
    // The branch really depends on main's files, and main's latest version (the only one the
    // policy keeps) does not keep them alive: without the branch rule they would be deleted.
    expect(neededPaths.some((p) => p.startsWith("data/"))).toBe(true);
    expect(neededPaths.some((p) => p.startsWith("_deletions/"))).toBe(true);
    const keptByLatest = await referencedByLatest(store);
    expect(neededPaths.filter((p) => keptByLatest.has(p))).toEqual([]);

    const mainBefore = await readContents(ds.dbUri);
    const branchBefore = await readBranch(ds.dbUri, "exp");
    expect(branchBefore).toEqual(branchSeen);
    const cutoff = await cutoffAfterCommits();

    const report = await runCleanup(store, { settings: { olderThanMs: 0, retainVersions: 1 }, now: () => cutoff });
    expect(report.status).toBe("completed");
    expect(report.versions_removed).toEqual([1, 2, 3, 5, 6]);
    expect(report.versions.find((v) => v.version === 4)).toMatchObject({ keep: true, reason: 'branch "exp" was created from it' });
    expect(report.reference_check?.ok).toBe(true);
    expect(report.bytes_removed).toBeGreaterThan(0);

    // Nothing the branch names is gone, and nothing under the branch's own folder was touched.
    for (const path of neededPaths) expect(await exists(join(ds.tableUri, path)), `${path} (named by branch versions ${needed.get(path)})`).toBe(true);
    expect(report.files.filter((f) => f.action === "delete" && (neededPaths.includes(f.key) || f.key.startsWith("tree/")))).toEqual([]);

    expect(await readBranch(ds.dbUri, "exp")).toEqual(branchBefore);
    const mainAfter = await readContents(ds.dbUri);
    expect(compareContents(mainBefore, mainAfter)).toEqual([]);
    expect([...mainAfter.versions.keys()]).toEqual([4, 7]);

    // Once the branch is deleted, nothing holds version 4 any more: the next run removes it.
    const db = await lancedb.connect(ds.dbUri);
    const table = await db.openTable("t");
    await (await table.branches()).delete("exp");
    table.close();
    db.close();
    const again = await runCleanup(store, { settings: { olderThanMs: 0, retainVersions: 1 }, now: () => cutoff });
    expect(again.versions_removed).toEqual([4]);
    expect(compareContents({ ...mainBefore, versions: new Map([[7, mainBefore.versions.get(7)!]]) }, await readContents(ds.dbUri))).toEqual([]);
  });

  it("a branch of a branch, and a tag on a branch version: the whole lineage stays readable", async () => {
    const ds = await buildTable([
      { op: "create", rows: 12 },
      { op: "append", rows: 6 },
      { op: "delete", where: "id % 5 = 0" },
    ]);
    const b1Seen = new Map<number, VersionContent>();
    const b1 = await (await ds.table.branches()).create("b1", "main", 2);
    b1Seen.set(await b1.version(), await contentOf(b1));
    await commitOnBranch(b1, b1Seen, () => b1.add(rows(600, 4)));
    await commitOnBranch(b1, b1Seen, () => b1.delete("id = 3"));
    const taggedB1Version = await b1.version();
    await (await b1.tags()).create("b1-pinned", taggedB1Version);
    await commitOnBranch(b1, b1Seen, () => b1.add(rows(700, 2), { mode: "overwrite" }));
    const b2Seen = new Map<number, VersionContent>();
    const b2 = await (await ds.table.branches()).create("team/b2", "b1", taggedB1Version);
    b2Seen.set(await b2.version(), await contentOf(b2));
    await commitOnBranch(b2, b2Seen, () => b2.add(rows(800, 3)));
    b1.close();
    b2.close();
    await ds.apply([
      { op: "overwrite", rows: 5 },
      { op: "append", rows: 2 },
    ]);
    ds.close();

    const store = new LocalStore(ds.tableUri);
    const refs = await lanceFormat.readRefs(store);
    expect(refs.branches).toEqual([
      { name: "b1", parentBranch: null, parentVersion: 2 },
      { name: "team/b2", parentBranch: "b1", parentVersion: taggedB1Version },
    ]);
    expect(refs.tags).toEqual([{ name: "b1-pinned", version: taggedB1Version, branch: "b1" }]);
    const neededByB1 = await mainFilesNamedByBranch(ds.tableUri, "b1");
    const neededByB2 = await mainFilesNamedByBranch(ds.tableUri, "team/b2");
    expect(neededByB2.size).toBeGreaterThan(0);

    // The tag pins a version of b1: main's own checks leave it to the branch reads below.
    const mainBefore = { ...(await readContents(ds.dbUri)), tags: {} };
    expect(await readBranch(ds.dbUri, "b1")).toEqual(b1Seen);
    expect(await readBranch(ds.dbUri, "team/b2")).toEqual(b2Seen);
    const cutoff = await cutoffAfterCommits();

    const report = await runCleanup(store, { settings: { olderThanMs: 0, retainVersions: 1 }, now: () => cutoff });
    expect(report.status).toBe("completed");
    // The tag pins a version of b1, not main's version 4: main's 4 goes, main's 2 stays for b1.
    expect(report.versions_removed).toEqual([1, 3, 4]);
    expect(report.tagged_old_versions).toEqual([]);
    for (const path of [...neededByB1.keys(), ...neededByB2.keys()]) expect(await exists(join(ds.tableUri, path)), path).toBe(true);

    expect(compareContents(mainBefore, await readContents(ds.dbUri))).toEqual([]);
    expect(await readBranch(ds.dbUri, "b1")).toEqual(b1Seen);
    expect(await readBranch(ds.dbUri, "team/b2")).toEqual(b2Seen);
    const db = await lancedb.connect(ds.dbUri);
    const table = await db.openTable("t");
    const pinned = await (await table.branches()).checkout("b1");
    await pinned.checkout("b1-pinned");
    expect(await contentOf(pinned)).toEqual(b1Seen.get(taggedB1Version));
    pinned.close();
    table.close();
    db.close();
  });

  it("a branch created from an old version while cleanup plans: refs are read again before deleting and the version is kept", async () => {
    const ds = await buildTable([
      { op: "create", rows: 10 },
      { op: "append", rows: 4 },
      { op: "overwrite", rows: 6 },
      { op: "append", rows: 3 },
    ]);
    const store = new LocalStore(ds.tableUri);
    const now = await cutoffAfterCommits();
    const [latest, refs] = await Promise.all([lanceFormat.latestVersionFile(store), lanceFormat.readRefs(store)]);
    const processed = await processManifests(store, lanceFormat, { settings: { olderThanMs: 0, retainVersions: 1 }, refs, latestAtStart: latest!.version, now });
    expect(processed.plan.removed).toEqual([1, 2, 3]);

    const late = await (await ds.table.branches()).create("late", "main", 2);
    const lateContent = await contentOf(late);
    late.close();
    ds.close();
    const outcome = await planAndDelete(store, processed, now);
    expect(outcome.replans).toEqual(["tags or branches changed while planning: planned again"]);
    expect(outcome.removedVersions).toEqual([1, 3]);
    expect(outcome.referenceCheck?.ok).toBe(true);
    expect(await readBranch(ds.dbUri, "late")).toEqual(new Map([[2, lateContent]]));
  });

  it("pointed at a branch's own folder, cleanup refuses and touches nothing: what the branch's versions are needed for is recorded at the table's root", async () => {
    // `lakewarden serve` follows every folder a version file is written in, so a commit on a
    // branch (`t.lance/tree/exp/_versions/…`) used to make it clean `t.lance/tree/exp` as a
    // table of its own, blind to the tag below (kept at the root, in `_refs/tags/`).
    const ds = await buildTable([
      { op: "create", rows: 6 },
      { op: "append", rows: 4 },
    ]);
    const seen = new Map<number, VersionContent>();
    const branch = await (await ds.table.branches()).create("exp", "main", 2);
    await commitOnBranch(branch, seen, () => branch.add(rows(900, 3)));
    const pinned = await branch.version();
    await (await branch.tags()).create("exp-pinned", pinned);
    await commitOnBranch(branch, seen, () => branch.add(rows(950, 2)));
    await commitOnBranch(branch, seen, () => branch.add(rows(990, 2), { mode: "overwrite" }));
    await commitOnBranch(branch, seen, () => branch.add(rows(995, 1)));
    branch.close();
    ds.close();
    const branchFolder = join(ds.tableUri, "tree", "exp");
    const filesBefore = await listTree(ds.tableUri);
    const branchStore = new LocalStore(branchFolder);
    const cutoff = await cutoffAfterCommits();

    for (const dryRun of [true, false]) {
      const run = runCleanup(branchStore, { settings: { olderThanMs: 0, retainVersions: 1 }, now: () => cutoff, dryRun });
      await expect(run).rejects.toThrow(BranchLocationError);
      await expect(run).rejects.toThrow(
        `${branchStore.uri}: this is branch "exp" of a table, not a table's root; clean the table from its root, which keeps what every branch needs`,
      );
    }
    // Nor does a head go there: a table has one head, at its root.
    await expect(writeTableHead(branchStore)).rejects.toThrow(`${branchStore.uri}: this is branch "exp" of a table, not a table's root; a table has one head, at its root`);
    expect(await listTree(ds.tableUri)).toEqual(filesBefore);

    // From the root, the branch and its tag are left whole.
    const report = await runCleanup(new LocalStore(ds.tableUri), { settings: { olderThanMs: 0, retainVersions: 1 }, now: () => cutoff });
    expect(report.versions_removed).toEqual([1]);
    expect(report.files.filter((f) => f.action === "delete" && f.key.startsWith("tree/"))).toEqual([]);
    const db = await lancedb.connect(ds.dbUri);
    const table = await db.openTable("t");
    const onBranch = await (await table.branches()).checkout("exp");
    await onBranch.checkout("exp-pinned");
    expect(await contentOf(onBranch)).toEqual(seen.get(pinned));
    onBranch.close();
    table.close();
    db.close();
  });
});
