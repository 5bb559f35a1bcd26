/**
 * A dry run reports exactly what the run would do, to the file: on the same table, for every
 * format, the files a dry run names to delete are the files the real run deleted from disk, and
 * its counts (versions, files by role, bytes) are the real run's.
 */
import { afterAll, describe, expect, it } from "vitest";
import { filesRemovedCount } from "../../lib/maintenance/cleanup-report.ts";
import { runCleanup } from "../../lib/maintenance/run-cleanup.ts";
import { LocalStore } from "../../lib/store/local-store.ts";
import { listTree } from "./lance-checks.ts";
import { DAY, NOW, STEP_CASES, copyOf, withoutOurs } from "./step-cases.ts";

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});

describe("a dry run goes through the real run's plan", () => {
  it.each(STEP_CASES.map((c) => [c.name, c] as const))("%s: the dry run's files to delete are the files the run deletes, and its counts the run's", async (_name, testCase) => {
    const source = await testCase.make(cleanups);
    const now = () => new Date(NOW + 400 * DAY);
    const options = { format: testCase.format, settings: testCase.settings, now };
    const dry = await runCleanup(new LocalStore(source), { ...options, dryRun: true });
    expect(dry.status).toBe("dry-run");
    const dir = await copyOf(source, cleanups);
    const before = withoutOurs(await listTree(dir));
    const real = await runCleanup(new LocalStore(dir), options);
    expect(real.status).toBe("completed");
    const after = new Set(await listTree(dir));
    const deleted = before.filter((file) => !after.has(file)).sort();
    expect(deleted.length).toBeGreaterThan(0);

    const toDelete = (files: typeof dry.files) =>
      files
        .filter((file) => file.action === "delete")
        .map((file) => file.key)
        .sort();
    expect(toDelete(dry.files)).toEqual(deleted);
    expect(toDelete(real.files)).toEqual(deleted);
    // The run's counts are what its steps recorded as they deleted: one file each, on disk.
    expect(filesRemovedCount(real)).toBe(deleted.length);
    expect(dry.versions_removed).toEqual(real.versions_removed);
    expect(dry.files_removed).toEqual(real.files_removed);
    expect(dry.bytes_removed).toBe(real.bytes_removed);
    expect(dry.files_planned).toBe(real.files_planned);
    expect(dry.versions).toEqual(real.versions);
    expect(dry.removal_commit?.versions_removed ?? null).toEqual(real.removal_commit?.versions_removed ?? null);
  });
});
