/**
 * The cleanup pipeline on real LanceDB datasets: parity with LanceDB's own cleanup, the case
 * where they must differ (a tagged old version, lance#8705), dry runs, history in checkpoints,
 * and manifests pointing outside the table.
 */
import { readFile, writeFile, mkdir } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import * as lancedb from "@lancedb/lancedb";
import { tableFromIPC } from "apache-arrow";
import { UnresolvableReferenceError } from "../../lib/formats/errors.ts";
import { lanceFormat } from "../../lib/formats/lance/lance-format.ts";
import { runCleanup } from "../../lib/maintenance/run-cleanup.ts";
import { LocalStore } from "../../lib/store/local-store.ts";
import { readTimeline } from "../../lib/versions/timeline.ts";
import { VERSION_RECORD_FIELDS } from "../../lib/model/version-record.ts";
import type { VersionRecord } from "../../lib/model/version-record.ts";
import { withManifest } from "../support/manifest-surgery.ts";
import { buildLanceDataset, makeTempDir, removeDir, type DatasetStep, type ManifestNaming } from "../support/lance-datasets.ts";
import { compareContents, copyTree, listTree, readContents } from "./lance-checks.ts";

const dirs: string[] = [];
async function tempDir(prefix: string): Promise<string> {
  const dir = await makeTempDir(prefix);
  dirs.push(dir);
  return dir;
}
afterAll(async () => {
  for (const dir of dirs) await removeDir(dir);
});

/** Appends, a deletion file, an index, then an overwrite: old files really become unreferenced,
 * and the latest version is one clean fragment, so LanceDB's compaction has nothing to do. */
const PARITY_HISTORY: readonly DatasetStep[] = [
  { op: "create", rows: 20 },
  { op: "append", rows: 10 },
  { op: "delete", where: "id % 4 = 1" },
  { op: "createIndex" },
  { op: "append", rows: 10 },
  { op: "overwrite", rows: 15 },
];

async function buildTable(steps: readonly DatasetStep[], naming: ManifestNaming = "v2") {
  const dbUri = await tempDir("lw-cleanup-");
  const ds = await buildLanceDataset({ dbUri, steps, naming });
  ds.close();
  return { dbUri, tableUri: ds.tableUri, written: ds.written };
}

/** A cutoff strictly after every commit so far. */
async function cutoffAfterCommits(): Promise<Date> {
  await new Promise((resolve) => setTimeout(resolve, 20));
  return new Date();
}

/** The timeline as `versions` prints it, without what a cleanup is expected to change. */
function historyOf(records: readonly VersionRecord[]) {
  return records.map(({ is_cleaned_up: _ignored, ...rest }) => rest);
}

function withoutOurFolder(files: string[]): string[] {
  return files.filter((f) => !f.startsWith("_lakewarden/"));
}

describe("parity with LanceDB's optimize({ cleanupOlderThan })", () => {
  it.each<ManifestNaming>(["v2", "v1"])("removes the same manifests and the same files from two copies of one dataset (%s names)", async (naming) => {
    const original = await buildTable(PARITY_HISTORY, naming);
    const copyDb = await tempDir("lw-parity-copy-");
    await copyTree(original.dbUri, copyDb);
    const lanceCopy = { dbUri: copyDb, tableUri: join(copyDb, "t.lance") };
    const cutoff = await cutoffAfterCommits();
    const before = await readContents(original.dbUri);
    const filesBefore = await listTree(original.tableUri);
    const store = new LocalStore(original.tableUri);
    const timelineBefore = await readTimeline(store, lanceFormat);

    const db = await lancedb.connect(lanceCopy.dbUri);
    const table = await db.openTable("t");
    const lance = await table.optimize({ cleanupOlderThan: cutoff });
    table.close();
    db.close();
    expect(lance.compaction.fragmentsRemoved).toBe(0); // nothing to compact: only cleanup happened

    const report = await runCleanup(store, { settings: { olderThanMs: 0 }, now: () => cutoff });
    expect(report.status).toBe("completed");

    const ours = withoutOurFolder(await listTree(original.tableUri));
    const theirs = await listTree(lanceCopy.tableUri);
    expect(ours).toEqual(theirs);
    expect(ours.length).toBeLessThan(filesBefore.length);
    expect(report.versions_removed).toHaveLength(lance.prune.oldVersionsRemoved);
    expect(report.versions_removed).toEqual([1, 2, 3, 4, 5]);
    expect(report.bytes_removed).toBe(lance.prune.bytesRemoved);
    expect(Object.keys(report.files_removed).sort()).toEqual(["commit", "data", "delete", "index", "transaction"]);
    expect(report.reference_check).toMatchObject({ ok: true, missingBeforeRun: [], deletedByRun: [] });

    // LanceDB reads both tables the same, and the same as before, at every version left.
    expect(compareContents(before, await readContents(original.dbUri))).toEqual([]);
    expect(compareContents(before, await readContents(lanceCopy.dbUri))).toEqual([]);

    // History survives in the checkpoint: `versions` after equals before, removed ones flagged.
    const timelineAfter = await readTimeline(store, lanceFormat);
    expect(historyOf(timelineAfter.records)).toEqual(historyOf(timelineBefore.records));
    expect(timelineAfter.records.filter((r) => r.is_cleaned_up).map((r) => r.version)).toEqual([1, 2, 3, 4, 5]);
    expect(timelineAfter.sources).toEqual({ archive: 0, checkpoint: 6, recent: 0, manifests: 0 });

    // The checkpoint is a plain Arrow IPC file with the documented schema.
    // Written before the deletes (history first), then brought up to date with the removed
    // versions flagged: to the run, one checkpoint written (a first checkpoint is never "replaced").
    expect(report.checkpoint).toMatchObject({ status: "written", version: 6, rows: 6, cleanedUpRows: 5 });
    const bytes = await readFile(join(original.tableUri, report.checkpoint!.key!));
    const arrow = tableFromIPC(bytes);
    expect(arrow.schema.fields.map((f) => f.name)).toEqual([...VERSION_RECORD_FIELDS]);
    expect(arrow.getChild("is_cleaned_up")!.toArray().length).toBe(6);
    expect(arrow.schema.metadata.get("lakewarden.checkpoint.version")).toBe("6");

    // And a receipt, with its own counts.
    const receipt = JSON.parse(await readFile(join(original.tableUri, report.receipt!), "utf8"));
    expect(receipt).toMatchObject({ status: "completed", versions_removed: [1, 2, 3, 4, 5], bytes_removed: report.bytes_removed });
    expect(receipt.requests.delete).toBeGreaterThan(0);
  });

  it("where they must differ, a tagged old version (lance#8705), lakewarden leaves the table right", async () => {
    // The tagged version 2 is older than the cutoff; versions 3-5 wrote data files after it.
    // The last step is an overwrite, so LanceDB's compaction has nothing to do.
    const steps: readonly DatasetStep[] = [
      { op: "create", rows: 20 },
      { op: "append", rows: 10 },
      { op: "tag", name: "pinned" },
      { op: "overwrite", rows: 12 },
      { op: "append", rows: 5 },
      { op: "delete", where: "id % 3 = 0" },
      { op: "overwrite", rows: 8 },
    ];
    const original = await buildTable(steps);
    const copyDb = await tempDir("lw-8705-copy-");
    await copyTree(original.dbUri, copyDb);
    const cutoff = await cutoffAfterCommits();
    const before = await readContents(original.dbUri);
    const filesBefore = await listTree(original.tableUri);

    // LanceDB 0.31 refuses (error_if_tagged_old_versions): nothing is cleaned. Versions of Lance
    // that go ahead use the oldest kept manifest's time as a listing cutoff and orphan the data
    // files of every newer removed version for good (lance#8705/#8516).
    const db = await lancedb.connect(copyDb);
    const table = await db.openTable("t");
    await expect(table.optimize({ cleanupOlderThan: cutoff })).rejects.toThrow(/tagged version/);
    table.close();
    db.close();
    expect(await listTree(join(copyDb, "t.lance"))).toEqual(filesBefore);

    const store = new LocalStore(original.tableUri);
    // The files #8705 orphans: named by removed versions newer than the tagged one, by no kept one.
    const referencedBy = new Map<number, string[]>();
    for (const file of await lanceFormat.listVersionFiles(store)) {
      referencedBy.set(
        file.version,
        (await lanceFormat.readSnapshot(store, file)).referencedFiles.map((r) => r.path),
      );
    }
    const keptRefs = new Set([...referencedBy.get(2)!, ...referencedBy.get(6)!]);
    const newerRemovedOnly = [...new Set([3, 4, 5].flatMap((v) => referencedBy.get(v)!))].filter((p) => !keptRefs.has(p));
    expect(newerRemovedOnly.filter((p) => p.startsWith("data/"))).toHaveLength(2);
    expect(newerRemovedOnly.filter((p) => p.startsWith("_deletions/")).length).toBeGreaterThan(0);

    const report = await runCleanup(store, { settings: { olderThanMs: 0 }, now: () => cutoff });
    expect(report.status).toBe("completed");
    expect(report.tagged_old_versions).toEqual([{ version: 2, tags: ["pinned"] }]);
    expect(report.versions_removed).toEqual([1, 3, 4, 5]);

    // Every file left in the format's folders is needed by a version left: no orphans,
    // in particular none of the data files written by versions 3-6 after the tagged one.
    const left = withoutOurFolder(await listTree(original.tableUri));
    const needed = new Set<string>();
    for (const file of await lanceFormat.listVersionFiles(store)) {
      needed.add(file.key);
      for (const ref of (await lanceFormat.readSnapshot(store, file)).referencedFiles) needed.add(ref.path);
    }
    const orphans = left.filter(
      (key) => !needed.has(key) && !key.startsWith("_refs/") && !key.endsWith("latest_version_hint.json") && ![...needed].some((n) => n.endsWith("/") && key.startsWith(n)),
    );
    expect(orphans).toEqual([]);
    expect(newerRemovedOnly.filter((p) => left.includes(p))).toEqual([]);
    for (const path of newerRemovedOnly) expect(filesBefore).toContain(path);

    const after = await readContents(original.dbUri);
    expect(compareContents(before, after)).toEqual([]);
    expect([...after.versions.keys()]).toEqual([2, 6]);
  });
});

describe("dry run", () => {
  it("deletes nothing and lists exactly what the real run then deletes, with reasons and sizes", async () => {
    const { tableUri } = await buildTable(PARITY_HISTORY);
    // An orphan a failed write would leave, and a foreign file: both kept and reported.
    await writeFile(join(tableUri, "data", "orphan-from-failed-write.lance"), "x");
    await writeFile(join(tableUri, "_versions", "7.manifest-0b5c1a3e"), "staging");
    const cutoff = await cutoffAfterCommits();
    const filesBefore = await listTree(tableUri);
    const store = new LocalStore(tableUri);

    const dry = await runCleanup(store, { settings: { olderThanMs: 0 }, now: () => cutoff, dryRun: true });
    expect(dry.status).toBe("dry-run");
    expect(await listTree(tableUri)).toEqual(filesBefore);
    const planned = dry.files.filter((f) => f.action === "delete");
    expect(planned.length).toBeGreaterThan(5);
    for (const file of dry.files) {
      expect(file.reason.length).toBeGreaterThan(10);
      expect(file.size).toBeGreaterThan(0);
    }
    expect(dry.files.filter((f) => f.action === "keep").map((f) => [f.key, f.reason])).toEqual(
      expect.arrayContaining([
        ["data/orphan-from-failed-write.lance", expect.stringMatching(/^unreferenced, last modified \d{4}-.*Z, within the safety window 7d: may belong to a commit in progress$/)],
        ["_versions/7.manifest-0b5c1a3e", expect.stringMatching(/staging manifest, temp or foreign file/)],
      ]),
    );
    expect(dry.checkpoint).toBeNull();
    expect(dry.receipt).toBeNull();

    const real = await runCleanup(store, { settings: { olderThanMs: 0 }, now: () => cutoff });
    expect(real.files.filter((f) => f.action === "delete").map((f) => f.key)).toEqual(planned.map((f) => f.key));
    const after = withoutOurFolder(await listTree(tableUri));
    expect(filesBefore.filter((f) => !after.includes(f)).sort()).toEqual(planned.map((f) => f.key).sort());
    expect(real.versions_removed).toEqual(dry.versions_removed);
    expect(real.bytes_removed).toBe(dry.bytes_removed);
    expect(real.files_removed).toEqual(dry.files_removed);
  });
});

describe("manifests pointing outside the table root", () => {
  async function tableWithOutsider() {
    const { dbUri, tableUri } = await buildTable(PARITY_HISTORY);
    const outside = join(dbUri, "victim");
    await mkdir(outside, { recursive: true });
    await writeFile(join(outside, "precious.lance"), "do not delete");
    const store = new LocalStore(tableUri);
    const [oldest] = await lanceFormat.listVersionFiles(store);
    return { dbUri, tableUri, outside, store, oldestKey: oldest!.key };
  }

  it("a removed version naming a path that escapes the root: reported, and nothing outside the root is touched", async () => {
    const { dbUri, tableUri, outside, store, oldestKey } = await tableWithOutsider();
    const path = join(tableUri, oldestKey);
    await writeFile(
      path,
      withManifest(await readFile(path), path, (m) => {
        m.fragments[0]!.files[0]!.path = "../../victim/precious.lance";
      }),
    );
    const outsideBefore = await listTree(dbUri).then((files) => files.filter((f) => f.startsWith("victim/")));
    const report = await runCleanup(store, { settings: { olderThanMs: 0 }, now: () => new Date(Date.now() + 1000) });
    expect(report.status).toBe("completed");
    expect(report.versions_removed).toContain(1);
    expect(report.references_outside_root).toContainEqual(expect.objectContaining({ path: "../../victim/precious.lance", version: 1, kind: "unresolvable" }));
    expect(await readFile(join(outside, "precious.lance"), "utf8")).toBe("do not delete");
    expect(await listTree(dbUri).then((files) => files.filter((f) => f.startsWith("victim/")))).toEqual(outsideBefore);
  });

  it("a kept version naming an absolute URI inside the root that Lance cannot resolve: the run stops before any delete, naming path and version", async () => {
    const { tableUri, store } = await tableWithOutsider();
    const files = await lanceFormat.listVersionFiles(store);
    const oldest = await lanceFormat.readSnapshot(store, files[0]!);
    const latestFile = files.at(-1)!;
    // A data file only the oldest version needs: the run would delete it, were it not named here.
    const latest = await lanceFormat.readSnapshot(store, latestFile);
    const latestPaths = new Set(latest.referencedFiles.map((f) => f.path));
    const victim = oldest.referencedFiles.find((f) => f.role === "data" && !latestPaths.has(f.path))!;
    const absolute = store.uriOf(victim.path);
    const manifestPath = join(tableUri, latestFile.key);
    await writeFile(
      manifestPath,
      withManifest(await readFile(manifestPath), manifestPath, (m) => {
        m.fragments[0]!.files[0]!.path = absolute;
      }),
    );
    const filesBefore = await listTree(tableUri);
    for (const dryRun of [true, false]) {
      const run = runCleanup(store, { dryRun, settings: { olderThanMs: 0 }, now: () => new Date(Date.now() + 1000) });
      await expect(run).rejects.toThrow(UnresolvableReferenceError);
      await expect(run).rejects.toThrow(`cleanup stopped before deleting anything: version ${latestFile.version} names ${JSON.stringify(absolute)}`);
    }
    expect(withoutOurFolder(await listTree(tableUri))).toEqual(withoutOurFolder(filesBefore));
    expect((await listTree(tableUri)).includes(victim.path)).toBe(true);
  });

  it("a file under another base path (shallow clone): cleanup proceeds and never touches it", async () => {
    const { dbUri, tableUri, outside, store, oldestKey } = await tableWithOutsider();
    const before = await readContents(dbUri);
    const path = join(tableUri, oldestKey);
    await writeFile(
      path,
      withManifest(await readFile(path), path, (m) => {
        (m as Record<string, unknown>).base_paths = [{ id: 1, path: `file://${outside}`, is_dataset_root: false }];
        m.fragments[0]!.files[0]!.path = "precious.lance";
        m.fragments[0]!.files[0]!.base_id = 1;
      }),
    );
    const report = await runCleanup(store, { settings: { olderThanMs: 0 }, now: () => new Date(Date.now() + 1000) });
    expect(report.versions_removed).toContain(1);
    expect(await readFile(join(outside, "precious.lance"), "utf8")).toBe("do not delete");
    expect(compareContents({ ...before, versions: new Map([...before.versions].filter(([v]) => v !== 1)) }, await readContents(dbUri))).toEqual([]);
  });
});
