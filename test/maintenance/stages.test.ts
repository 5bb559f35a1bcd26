/**
 * The pipeline's stages called one by one on a real table, as a caller (or a test) can:
 * process_manifests → delete_unreferenced → archive_versions → cleanup_old_checkpoints,
 * with the table changing between planning and deleting.
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import * as lancedb from "@lancedb/lancedb";
import { archiveVersions } from "../../lib/checkpoint/archive.ts";
import { loadNewestCheckpoint } from "../../lib/checkpoint/load.ts";
import { cleanupOldCheckpoints } from "../../lib/checkpoint/prune.ts";
import { lanceFormat } from "../../lib/formats/lance/lance-format.ts";
import { deleteUnreferenced } from "../../lib/maintenance/delete-unreferenced.ts";
import { planDeletes } from "../../lib/maintenance/plan-deletes.ts";
import { replanUntilSettled } from "../../lib/maintenance/replan.ts";
import type { ProcessedManifests } from "../../lib/maintenance/process-manifests.ts";
import { processManifests, scanManifests } from "../../lib/maintenance/process-manifests.ts";
import { LEASE_KEY } from "../../lib/maintenance/lease.ts";
import { runCleanup } from "../../lib/maintenance/run-cleanup.ts";
import { expiredReceipts, listRunFiles } from "../../lib/maintenance/run-files.ts";
import { LocalStore } from "../../lib/store/local-store.ts";
import type { ObjectInfo } from "../../lib/store/object-store.ts";
import { withManifest } from "../support/manifest-surgery.ts";
import { buildLanceDataset, makeTempDir, removeDir } from "../support/lance-datasets.ts";
import { compareContents, readContents } from "./lance-checks.ts";

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

async function table() {
  const dbUri = await makeTempDir("lw-stages-");
  dirs.push(dbUri);
  const ds = await buildLanceDataset({
    dbUri,
    steps: [
      { op: "create", rows: 10 },
      { op: "append", rows: 4 },
      { op: "overwrite", rows: 6 },
      { op: "append", rows: 3 },
    ],
  });
  await new Promise((resolve) => setTimeout(resolve, 20));
  return { ds, store: new LocalStore(ds.tableUri) };
}

async function plan(store: LocalStore, now: Date) {
  const [latest, refs] = await Promise.all([lanceFormat.latestVersionFile(store), lanceFormat.readRefs(store)]);
  return processManifests(store, lanceFormat, { settings: { olderThanMs: 0 }, refs, latestAtStart: latest!.version, now });
}

describe("each stage on its own", () => {
  it("runs top to bottom by hand and leaves the table as runCleanup would", async () => {
    const { ds, store } = await table();
    ds.close();
    const now = new Date();
    const before = await readContents(ds.dbUri);
    const processed = await plan(store, now);
    expect(processed.plan.removed).toEqual([1, 2, 3]);
    const outcome = await planAndDelete(store, processed, now);
    expect(outcome.removedVersions).toEqual([1, 2, 3]);
    expect(outcome.referenceCheck?.ok).toBe(true);
    const archived = await archiveVersions(store, {
      previous: null,
      records: [...outcome.processed.scan.values()].map((s) => s.record),
      liveVersions: new Set([4]),
      taggedVersions: new Set(),
      tableFormat: "lance",
      now,
    });
    expect(archived).toMatchObject({ status: "written", version: 4, rows: 4, cleanedUpRows: 3 });
    expect(await cleanupOldCheckpoints(store)).toEqual({ pruned: [], kept: [archived.key], failed: [] });
    expect(compareContents(before, await readContents(ds.dbUri))).toEqual([]);
  });

  it("a tag created between planning and deleting: tags are read again, the plan is redone, the version kept", async () => {
    const { ds, store } = await table();
    const now = new Date();
    const processed = await plan(store, now);
    expect(processed.plan.removed).toContain(2);
    await (await ds.table.tags()).create("late", 2);
    ds.close();
    const outcome = await planAndDelete(store, processed, now);
    expect(outcome.replans).toEqual(["tags or branches changed while planning: planned again"]);
    expect(outcome.removedVersions).toEqual([1, 3]);
    const db = await lancedb.connect(ds.dbUri);
    const t = await db.openTable("t");
    await t.checkout("late");
    expect(await t.countRows()).toBe(14);
    t.close();
    db.close();
  });

  it("a commit between planning and deleting: only the new version file is read, and its files are kept", async () => {
    const { ds, store } = await table();
    const now = new Date();
    const processed = await plan(store, now);
    await ds.table.add([{ id: 100, name: "late", score: 1 }]);
    const contents = await readContents(ds.dbUri);
    ds.close();
    store.stats.reset();
    const outcome = await planAndDelete(store, processed, now);
    expect(outcome.replans).toEqual(["version 5 was committed while planning: planned again"]);
    expect(outcome.processed.scan.get(5)?.round).toBe(1);
    expect(outcome.removedVersions).toEqual([1, 2, 3]);
    expect(compareContents(contents, await readContents(ds.dbUri))).toEqual([]);
  });
});

describe("tables with a long history", () => {
  it("a re-plan drops vanished versions even when the previous scan holds more than a call's argument limit", async () => {
    const { ds, store } = await table();
    ds.close();
    const first = await plan(store, new Date());
    const previous = new Map(first.scan);
    // As if an earlier round had read 150,000 versions that are gone now (spread into Math.max, they overflow the stack).
    const template = [...first.scan.values()][0]!;
    for (let version = 100; version < 150_100; version++) previous.set(version, { ...template, file: { ...template.file, version } });
    const scan = await scanManifests(store, lanceFormat, { previous });
    expect([...scan.keys()]).toEqual([...first.scan.keys()]);
  });
});

describe("per-table settings and receipts", () => {
  it("the table's lakewarden.* config applies where the caller sets nothing; a caller's setting overrides it with a warning", async () => {
    const { ds, store } = await table();
    ds.close();
    const [latest] = (await lanceFormat.listVersionFiles(store)).slice(-1);
    const path = join(ds.tableUri, latest!.key);
    await writeFile(
      path,
      withManifest(await readFile(path), path, (m) => {
        m.config = { ...m.config, "lakewarden.retain_versions": "3" };
      }),
    );
    const overridden = await runCleanup(store, { settings: { olderThanMs: 0, retainVersions: 1 }, dryRun: true });
    expect(overridden.policy!.retain_versions).toEqual({ value: 1, source: "option" });
    expect(overridden.warnings).toContain('--retain-versions 1 overrides table config lakewarden.retain_versions = "3"');
    const report = await runCleanup(store, { settings: { olderThanMs: 0 } });
    expect(report.versions_removed).toEqual([1]);
    expect(report.policy!.retain_versions).toEqual({ value: 3, source: "table config lakewarden.retain_versions" });
  });

  it("receipts have a retention of their own: older than 30 days and beyond the newest 20 go", () => {
    const now = new Date("2026-11-01T00:00:00Z");
    const receipts: ObjectInfo[] = Array.from({ length: 25 }, (_, i) => ({
      key: `_lakewarden/runs/2026${String(i).padStart(4, "0")}-run.json`,
      size: 1,
      etag: "",
      lastModified: new Date(now.getTime() - (25 - i) * 2 * 86_400_000),
    }));
    // 25 receipts, every 2 days: the 5 oldest are beyond the newest 20, and older than 30 days.
    expect(expiredReceipts(receipts, {}, now)).toEqual(
      receipts
        .slice(0, 5)
        .map((r) => r.key)
        .reverse(),
    );
    expect(expiredReceipts(receipts, { keepNewest: 30 }, now)).toEqual([]);
    expect(expiredReceipts(receipts, { keepNewest: 1, maxAgeMs: 10 * 86_400_000 }, now)).toHaveLength(20);
  });

  it("every run leaves a receipt; a run's own receipts are pruned by the next runs", async () => {
    const { ds, store } = await table();
    ds.close();
    for (let i = 0; i < 4; i++) await runCleanup(store, { settings: { olderThanMs: 0 }, receiptRetention: { keepNewest: 2, maxAgeMs: 0 } });
    const { receipts, intents } = await listRunFiles(store);
    expect(intents).toEqual([]);
    expect(receipts).toHaveLength(3); // the fourth run saw three, pruned the oldest, then wrote its own
    const receipt = JSON.parse(await readFile(join(ds.tableUri, receipts.at(-1)!.key), "utf8"));
    expect(receipt).toMatchObject({ status: "completed", receipts_pruned: 1, policy: { older_than: { value: "0s" } } });
    expect(receipt.files).toBeUndefined();
    expect((await loadNewestCheckpoint(store)).checkpoint?.version).toBe(4);
  });
});

describe("the lease during a long run", () => {
  it("is renewed between delete batches, so no other cleaner can take it while the run deletes", async () => {
    const { ds, store } = await table();
    ds.close();
    let clock = Date.now() + 1000;
    const now = () => new Date(clock);
    const leasePuts: string[] = [];
    // The real store; each delete batch moves the clock 40 s on, and lease writes are noted.
    const slow = Object.create(store) as LocalStore;
    slow.deleteMany = async (keys) => {
      clock += 40_000;
      return store.deleteMany(keys);
    };
    slow.put = async (key, body, options) => {
      if (key === LEASE_KEY) leasePuts.push(JSON.parse(new TextDecoder().decode(body)).expires_at);
      return store.put(key, body, options);
    };
    const report = await runCleanup(slow, { settings: { olderThanMs: 0 }, now, deleteBatchSize: 1, deleteConcurrency: 1, lease: { durationMs: 60_000 } });
    expect(report.status).toBe("completed");
    expect(report.files.filter((f) => f.action === "delete").length).toBeGreaterThan(5);
    // Acquired, renewed several times (each pushing expiry on), released.
    expect(leasePuts.length).toBeGreaterThan(4);
    const expiries = leasePuts.slice(0, -1).map((t) => Date.parse(t));
    expect(expiries).toEqual([...expiries].sort((a, b) => a - b));
  });
});
