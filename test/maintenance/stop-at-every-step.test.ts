/**
 * A cleanup stopped at every step boundary, for every format: a clock that moves one millisecond
 * each time it is read and a deadline k milliseconds after the start make the run stop at its k-th
 * look at the clock, for every k until a run completes (so at every check it makes: between the
 * stages, before the checkpoint, the intent, a format's removal commit and every delete batch).
 * After each stopped run `versions` still lists every version it listed before (live or cleaned up:
 * no gap), and the next run completes with the files of an uninterrupted run.
 */
import { cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { deltaFormat } from "../../lib/formats/delta/delta-format.ts";
import { icebergFormat } from "../../lib/formats/iceberg/iceberg-format.ts";
import { lanceFormat } from "../../lib/formats/lance/lance-format.ts";
import type { TableFormat } from "../../lib/formats/table-format.ts";
import { runCleanup } from "../../lib/maintenance/run-cleanup.ts";
import { LocalStore } from "../../lib/store/local-store.ts";
import { readTimeline } from "../../lib/versions/timeline.ts";
import { copyFixture } from "../support/fixtures.ts";
import { copyIcebergFixture } from "../support/iceberg-fixtures.ts";
import { buildHistory } from "../support/iceberg-histories.ts";
import { buildLanceDataset, makeTempDir, removeDir } from "../support/lance-datasets.ts";
import { setAllTimes } from "../formats/delta/log-surgery.ts";
import { listTree } from "./lance-checks.ts";

const DAY = 86_400_000;
const NOW = Date.now();
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});

async function copyOf(dir: string): Promise<string> {
  const parent = await mkdtemp(join(tmpdir(), "lw-stop-step-"));
  cleanups.push(() => rm(parent, { recursive: true, force: true }));
  await cp(dir, join(parent, "t"), { recursive: true, preserveTimestamps: true });
  return join(parent, "t");
}

/** Every version `versions` lists, live or cleaned up, as "version:id". */
async function listed(dir: string, format: TableFormat): Promise<string[]> {
  return (await readTimeline(new LocalStore(dir), format)).records.map((record) => `${record.version}:${record.version_id}`);
}

const withoutOurs = (files: string[]) => files.filter((file) => !file.startsWith("_lakewarden/"));

interface Case {
  name: string;
  format: TableFormat;
  make(): Promise<string>;
  settings: { olderThanMs?: number; retainVersions?: number; safetyWindowMs?: number };
}

const CASES: Case[] = [
  {
    name: "lance",
    format: lanceFormat,
    settings: { olderThanMs: DAY, safetyWindowMs: DAY },
    async make() {
      const dbUri = await makeTempDir("lw-stop-lance-");
      cleanups.push(() => removeDir(dbUri));
      const ds = await buildLanceDataset({ dbUri, steps: [{ op: "create", rows: 10 }, { op: "append", rows: 5 }, { op: "delete", where: "id % 3 = 1" }, { op: "overwrite", rows: 4 }] });
      ds.close();
      return join(dbUri, "t.lance");
    },
  },
  {
    name: "delta",
    format: deltaFormat,
    settings: {},
    async make() {
      const dir = await copyFixture("delta", "table_with_deletion_logs");
      await setAllTimes(dir, new Date(NOW - 400 * DAY));
      return dir;
    },
  },
  {
    name: "iceberg",
    format: icebergFormat,
    settings: {},
    async make() {
      const base = await copyIcebergFixture("spark-bunnies", { ageMs: 30 * DAY });
      cleanups.push(base.remove);
      await buildHistory(base.dir, { commits: [{ name: "a", ageMs: 9 * DAY }, { name: "b", ageMs: 8 * DAY }, { name: "c", ageMs: 3_600_000 }] }, NOW);
      return base.dir;
    },
  },
];

describe("a cleanup stopped at every step boundary", () => {
  it.each(CASES.map((c) => [c.name, c] as const))("%s: no gap in versions after any stop, and the next run finishes the job", async (_name, testCase) => {
    const source = await testCase.make();
    const start = NOW + 400 * DAY;
    const run = (dir: string, deadlineAfter: number | null) => {
      let reads = 0;
      return runCleanup(new LocalStore(dir), {
        format: testCase.format,
        settings: testCase.settings,
        deleteBatchSize: 2,
        deleteConcurrency: 1,
        now: () => new Date(start + reads++),
        ...(deadlineAfter !== null ? { deadline: new Date(start + deadlineAfter) } : {}),
      });
    };
    const referenceDir = await copyOf(source);
    const reference = await run(referenceDir, null);
    expect(reference.status).toBe("completed");
    expect(reference.versions_removed.length).toBeGreaterThan(0);
    const finalFiles = withoutOurs(await listTree(referenceDir));
    const before = await listed(source, testCase.format);

    // Clock reads between two checks stop the run at the same boundary: each boundary's rerun is checked once.
    const boundaries = new Set<string>();
    for (let k = 1; k < 1000; k++) {
      const dir = await copyOf(source);
      const report = await run(dir, k);
      const context = `deadline at clock read ${k}: ${report.status} ${report.stop_reason ?? ""}`;
      const after = await listed(dir, testCase.format);
      expect(before.filter((version) => !after.includes(version)), context).toEqual([]);
      if (report.status === "completed") break;
      expect(report.status, context).toBe("stopped");
      const boundary = `${report.stop_reason} ${report.checkpoint?.key ?? ""} ${report.removal_commit?.status ?? ""}`;
      if (boundaries.has(boundary)) continue;
      boundaries.add(boundary);
      const rerun = await runCleanup(new LocalStore(dir), { format: testCase.format, settings: testCase.settings, now: () => new Date(start + 1000) });
      expect(rerun.status, context).toBe("completed");
      expect(withoutOurs(await listTree(dir)), context).toEqual(finalFiles);
    }
    expect(boundaries.size).toBeGreaterThan(3);
  });
});
