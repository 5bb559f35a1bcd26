/**
 * Budgeted, resumable cleanup: a real LanceDB table plus synthetic extra files, cleaned with a
 * budget so small that every stage (the manifest scan and the listing included) stops part way,
 * ends equal, file for file, to one unbounded run; a crash at the k-th mutating request of the
 * second run, then resuming, leaves every kept version readable by LanceDB; a budget shorter
 * than a resumed run's re-check still ends the chain, each run doing its minimum of new work.
 *
 * Time is a clock that moves one millisecond each time it is read, so a budget is a count of
 * steps, not a timing: the same runs stop at the same places on any machine.
 */
import { mkdir, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RUN_PROGRESS_PREFIX } from "../../lib/model/layout.ts";
import type { CleanupReport } from "../../lib/maintenance/cleanup-report.ts";
import { runCleanup } from "../../lib/maintenance/run-cleanup.ts";
import type { RunCleanupOptions } from "../../lib/maintenance/run-cleanup.ts";
import { FaultInjectingStore } from "../support/fault-injecting-store.ts";
import { LocalStore } from "../../lib/store/local-store.ts";
import type { ObjectStore } from "../../lib/store/object-store.ts";
import { buildLanceDataset, makeTempDir, removeDir } from "../support/lance-datasets.ts";
import { compareContents, copyTree, listTree, readContents, type TableContents } from "./lance-checks.ts";

const dirs: string[] = [];
let template: string;
let before: TableContents;
let cutoffMillis: number;

const EXTRA_FILES = 120;

async function freshCopy(): Promise<string> {
  const dir = await makeTempDir("lw-budget-");
  dirs.push(dir);
  await copyTree(template, dir);
  return dir;
}

/** A clock that moves 1 ms each time anything reads it. */
function steppingClock(startMillis: number): () => Date {
  let now = startMillis;
  return () => new Date(now++);
}

const options = (extra: Partial<RunCleanupOptions> = {}): RunCleanupOptions => ({
  settings: { olderThanMs: 0 },
  deleteBatchSize: 7,
  deleteConcurrency: 1,
  manifestConcurrency: 1,
  ...extra,
});

/** Runs budgeted cleanups until one completes; every run but the last stops for time. */
async function cleanInBudgets(store: ObjectStore, budgets: (run: number) => number, clockStart = cutoffMillis, extra: Partial<RunCleanupOptions> = {}): Promise<CleanupReport[]> {
  const reports: CleanupReport[] = [];
  for (let run = 0; run < 60; run++) {
    clockStart += 1_000;
    const report = await runCleanup(store, options({ ...extra, now: steppingClock(clockStart), maxDurationMs: budgets(run) }));
    reports.push(report);
    if (report.status === "completed") return reports;
    expect(report.status).toBe("stopped");
  }
  throw new Error("no run completed in 60 budgets");
}

const outsideOurFolder = (files: string[]) => files.filter((f) => !f.startsWith("_lakewarden/"));

beforeAll(async () => {
  template = await makeTempDir("lw-budget-template-");
  dirs.push(template);
  const ds = await buildLanceDataset({
    dbUri: template,
    steps: [
      { op: "create", rows: 20 },
      { op: "append", rows: 10 },
      { op: "delete", where: "id % 4 = 1" },
      { op: "createIndex" },
      { op: "tag", name: "indexed" },
      { op: "append", rows: 10 },
      { op: "overwrite", rows: 15 },
      { op: "append", rows: 5 },
      { op: "append", rows: 5 },
      { op: "delete", where: "id = 3" },
      { op: "append", rows: 5 },
    ],
  });
  ds.close();
  // Synthetic extra files: unreferenced data files a crashed writer left, a month old.
  const data = join(template, "t.lance", "data");
  await mkdir(data, { recursive: true });
  const monthAgo = new Date(Date.now() - 30 * 86_400_000);
  for (let i = 0; i < EXTRA_FILES; i++) {
    const path = join(data, `orphan-${String(i).padStart(4, "0")}.lance`);
    await writeFile(path, new Uint8Array([i % 256]));
    await utimes(path, monthAgo, monthAgo);
  }
  await new Promise((resolve) => setTimeout(resolve, 20));
  cutoffMillis = Date.now() + 1_000;
  before = await readContents(template);
});
afterAll(async () => {
  for (const dir of dirs) await removeDir(dir);
});

describe("budgeted cleanup", () => {
  it("a budget so small it needs five or more runs ends equal, file for file, to one unbounded run", async () => {
    const unboundedDir = await freshCopy();
    const unbounded = await runCleanup(new LocalStore(join(unboundedDir, "t.lance")), options({ now: steppingClock(cutoffMillis) }));
    expect(unbounded.status).toBe("completed");
    expect(unbounded.versions_removed.length).toBeGreaterThan(3);

    const dir = await freshCopy();
    const store = new LocalStore(join(dir, "t.lance"));
    // The first budget ends inside the manifest scan, the next ones inside the listing and the deletes.
    const reports = await cleanInBudgets(store, (run) => (run === 0 ? 12 : 40));
    expect(reports.length).toBeGreaterThanOrEqual(5);
    const reasons = reports.slice(0, -1).map((r) => r.stop_reason ?? "");
    // The scan and the listing themselves stopped part way, and the deletes did too.
    expect(reasons.some((r) => r.includes("while reading version files"))).toBe(true);
    expect(reasons.some((r) => r.includes("while listing files"))).toBe(true);
    expect(reasons.some((r) => r.includes("after deleting"))).toBe(true);
    // Each run after the first resumed the chain the first one started.
    expect(new Set(reports.map((r) => r.budget.chain_id)).size).toBe(1);
    expect(reports.slice(1).every((r) => r.budget.resumed)).toBe(true);
    expect(reports.slice(0, -1).every((r) => r.budget.progress_saved !== null)).toBe(true);
    expect(reports.at(-1)!.budget.progress_files_cleared).toBeGreaterThan(0);
    // No run's post-delete check found a kept version's file deleted, this run's or the chain's.
    expect(reports.flatMap((r) => r.errors)).toEqual([]);
    expect(reports.filter((r) => r.reference_check).every((r) => r.reference_check!.ok && r.reference_check!.missingBeforeRun.length === 0)).toBe(true);

    expect(outsideOurFolder(await listTree(join(dir, "t.lance")))).toEqual(outsideOurFolder(await listTree(join(unboundedDir, "t.lance"))));
    expect((await listTree(join(dir, "t.lance"))).filter((f) => f.startsWith(RUN_PROGRESS_PREFIX))).toEqual([]);
    const removed = new Set(reports.flatMap((r) => r.versions_removed));
    expect([...removed].sort((a, b) => a - b)).toEqual(unbounded.versions_removed);
    expect(compareContents(before, await readContents(dir))).toEqual([]);
  });

  it("a budget smaller than a resumed run's re-check still ends the chain: every run does its minimum of new work", async () => {
    const BUDGET = 3;
    const MIN_WORK = 40;
    const unbounded = await cleanUnbounded();
    const dir = await freshCopy();
    const store = new LocalStore(join(dir, "t.lance"));
    const first = await runCleanup(store, options({ now: steppingClock(cutoffMillis), maxDurationMs: BUDGET, minWorkPerRun: MIN_WORK }));
    expect(first.status).toBe("stopped");
    expect(first.budget.progress_saved).not.toBeNull();

    // Without a minimum the budget ends before a resumed run gets to anything new: the chain would
    // repeat this run for ever.
    const idle = await runCleanup(store, options({ now: steppingClock(cutoffMillis + 500), maxDurationMs: BUDGET, minWorkPerRun: 0 }));
    expect(idle.budget.resumed).toBe(true);
    expect(idle.budget.progress_saved).toBeNull();
    expect(idle.stop_reason).toContain("before reading manifests");

    const reports = await cleanInBudgets(store, () => BUDGET, cutoffMillis + 1_000, { minWorkPerRun: MIN_WORK });
    expect(reports.length).toBeGreaterThanOrEqual(3);
    expect(reports.every((r) => r.budget.resumed)).toBe(true);
    // Every run but the last saved something and went past its budget to do so.
    for (const report of reports.slice(0, -1)) {
      expect(report.budget.progress_saved).not.toBeNull();
      expect(report.duration_ms).toBeGreaterThan(BUDGET);
    }
    const reasons = reports.slice(0, -1).map((r) => r.stop_reason ?? "");
    expect(reasons.some((r) => r.includes("while listing files"))).toBe(true);
    expect(reasons.some((r) => r.includes("after deleting"))).toBe(true);
    expect(reports.flatMap((r) => r.errors)).toEqual([]);
    expect(outsideOurFolder(await listTree(join(dir, "t.lance")))).toEqual(outsideOurFolder(await listTree(join(unbounded, "t.lance"))));
    expect((await listTree(join(dir, "t.lance"))).filter((f) => f.startsWith(RUN_PROGRESS_PREFIX))).toEqual([]);
    expect(compareContents(before, await readContents(dir))).toEqual([]);
  });

  it("a crash at the k-th mutating request of the second run, then resuming: every kept version reads with LanceDB", async () => {
    // How many mutating requests the second budgeted run makes, on a copy.
    const probeDir = await freshCopy();
    const probe = new FaultInjectingStore(new LocalStore(join(probeDir, "t.lance")));
    const first = await runCleanup(probe, options({ now: steppingClock(cutoffMillis), maxDurationMs: 40 }));
    expect(first.status).toBe("stopped");
    const before2 = probe.mutationCount;
    await runCleanup(probe, options({ now: steppingClock(cutoffMillis + 1_000), maxDurationMs: 120 }));
    const mutations = probe.mutationCount - before2;
    expect(mutations).toBeGreaterThanOrEqual(4);

    const expected = outsideOurFolder(await listTree(join(await cleanUnbounded(), "t.lance")));
    for (let k = 1; k <= mutations; k++) {
      const dir = await freshCopy();
      const faulty = new FaultInjectingStore(new LocalStore(join(dir, "t.lance")));
      await runCleanup(faulty, options({ now: steppingClock(cutoffMillis), maxDurationMs: 40 }));
      faulty.plan = { failMutations: [{ at: faulty.mutationCount + k }] };
      const second = await runCleanup(faulty, options({ now: steppingClock(cutoffMillis + 1_000), maxDurationMs: 120 })).catch((error: Error) => error);
      // The crashed run may have left its lease: later runs (an hour later) take it over once it expired.
      faulty.plan = {};
      const reports = await cleanInBudgets(faulty, () => 120, cutoffMillis + 3_600_000);
      expect(reports.at(-1)!.status, `k=${k}: ${String(second instanceof Error ? second.message : second.status)}`).toBe("completed");
      expect(compareContents(before, await readContents(dir)), `k=${k}`).toEqual([]);
      expect(outsideOurFolder(await listTree(join(dir, "t.lance"))), `k=${k}`).toEqual(expected);
    }
  });
});

async function cleanUnbounded(): Promise<string> {
  const dir = await freshCopy();
  const report = await runCleanup(new LocalStore(join(dir, "t.lance")), options({ now: steppingClock(cutoffMillis) }));
  expect(report.status).toBe("completed");
  return dir;
}
