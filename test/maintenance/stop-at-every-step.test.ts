/**
 * A cleanup stopped at every step boundary, for every format: a clock that moves one millisecond
 * each time it is read and a budget (`maxDurationMs`) of k milliseconds make the run stop at its
 * k-th look at the clock, for every k until a run completes, so at every guard it passes: between
 * the stages, before the checkpoint, the intent, a format's removal commit, every delete batch,
 * the checkpoint after the deletes and pruning. After each stopped run `versions` lists exactly
 * what it listed before (live or cleaned up: no gap, nothing new), and the next run completes with
 * the files of an uninterrupted run.
 */
import { afterAll, describe, expect, it } from "vitest";
import { runCleanup } from "../../lib/maintenance/run-cleanup.ts";
import { LocalStore } from "../../lib/store/local-store.ts";
import { listTree } from "./lance-checks.ts";
import { DAY, NOW, STEP_CASES, copyOf, listedVersions, withoutOurs } from "./step-cases.ts";

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});

/** The guards each format's run passes, by the words of its stop reason (counts left out), in order. */
const COMMON = [
  "before reading manifests",
  "after reading manifests, before listing",
  "before writing the checkpoint",
  "after writing the checkpoint, before deleting",
  "before deleting",
];
const AFTER = ["after deleting # of # files", "after deleting, before writing the checkpoint", "after writing the checkpoint, before pruning"];
const GUARDS: Record<string, string[]> = {
  lance: [...COMMON, ...AFTER],
  delta: [...COMMON, ...AFTER],
  // The snapshot-expiry commit is a write of its own, with its guard (the version hint's finish is "before deleting").
  iceberg: [...COMMON, "before the removal commit", ...AFTER],
};

const wordsOf = (reason: string | null) =>
  (reason ?? "")
    .replace(/^stopped /, "")
    .replace(/ \(deadline or abort signal\).*$/, "")
    .replace(/; progress saved$/, "")
    .replace(/\d+/g, "#");

describe("a cleanup stopped at every step boundary", () => {
  it.each(STEP_CASES.map((c) => [c.name, c] as const))("%s: versions unchanged after any stop, and the next run finishes the job", async (_name, testCase) => {
    const source = await testCase.make(cleanups);
    const start = NOW + 400 * DAY;
    const run = (dir: string, budgetMs: number | null) => {
      let reads = 0;
      return runCleanup(new LocalStore(dir), {
        format: testCase.format,
        settings: testCase.settings,
        deleteBatchSize: 2,
        deleteConcurrency: 1,
        now: () => new Date(start + reads++),
        // The budget expires at the clock's k-th read, wherever that falls; no minimum of work first.
        ...(budgetMs !== null ? { maxDurationMs: budgetMs, minWorkPerRun: 0 } : {}),
      });
    };
    const referenceDir = await copyOf(source, cleanups);
    const reference = await run(referenceDir, null);
    expect(reference.status).toBe("completed");
    expect(reference.versions_removed.length).toBeGreaterThan(0);
    const finalFiles = withoutOurs(await listTree(referenceDir));
    const before = await listedVersions(source, testCase.format);

    // Clock reads between two guards stop the run at the same boundary: each boundary's rerun is checked once.
    const boundaries = new Set<string>();
    for (let k = 1; k < 1000; k++) {
      const dir = await copyOf(source, cleanups);
      const report = await run(dir, k);
      const context = `budget expiring at clock read ${k}: ${report.status} ${report.stop_reason ?? ""}`;
      expect(await listedVersions(dir, testCase.format), context).toEqual(before);
      if (report.status === "completed") break;
      expect(report.status, context).toBe("stopped");
      const boundary = wordsOf(report.stop_reason);
      if (boundaries.has(boundary)) continue;
      boundaries.add(boundary);
      const rerun = await runCleanup(new LocalStore(dir), { format: testCase.format, settings: testCase.settings, now: () => new Date(start + 1000) });
      expect(rerun.status, context).toBe("completed");
      expect(withoutOurs(await listTree(dir)), context).toEqual(finalFiles);
    }
    expect([...boundaries].filter((b) => !b.startsWith("while "))).toEqual(GUARDS[testCase.name]);
  });
});
