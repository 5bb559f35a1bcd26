/**
 * One small table per format with versions old enough to remove, made at test time (Lance by
 * LanceDB, Delta and Iceberg from fixture copies aged on disk), for tests that compare whole runs:
 * the stop at every step boundary and the dry run against the real run.
 */
import { cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { deltaFormat } from "../../lib/formats/delta/delta-format.ts";
import { icebergFormat } from "../../lib/formats/iceberg/iceberg-format.ts";
import { lanceFormat } from "../../lib/formats/lance/lance-format.ts";
import type { TableFormat } from "../../lib/formats/table-format.ts";
import { LocalStore } from "../../lib/store/local-store.ts";
import { readTimeline } from "../../lib/versions/timeline.ts";
import { copyFixture } from "../support/fixtures.ts";
import { copyIcebergFixture } from "../support/iceberg-fixtures.ts";
import { buildHistory } from "../support/iceberg-histories.ts";
import { buildLanceDataset, makeTempDir, removeDir } from "../support/lance-datasets.ts";
import { setAllTimes } from "../formats/delta/log-surgery.ts";

export const DAY = 86_400_000;
export const NOW = Date.now();

export interface StepCase {
  name: string;
  format: TableFormat;
  /** Makes the table; what it leaves to remove goes on `cleanups`. */
  make(cleanups: (() => Promise<void>)[]): Promise<string>;
  settings: { olderThanMs?: number; retainVersions?: number; safetyWindowMs?: number };
}

export const STEP_CASES: StepCase[] = [
  {
    name: "lance",
    format: lanceFormat,
    settings: { olderThanMs: DAY, safetyWindowMs: DAY },
    async make(cleanups) {
      const dbUri = await makeTempDir("lw-step-lance-");
      cleanups.push(() => removeDir(dbUri));
      const ds = await buildLanceDataset({
        dbUri,
        steps: [
          { op: "create", rows: 10 },
          { op: "append", rows: 5 },
          { op: "delete", where: "id % 3 = 1" },
          { op: "overwrite", rows: 4 },
        ],
      });
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
    async make(cleanups) {
      const base = await copyIcebergFixture("spark-bunnies", { ageMs: 30 * DAY });
      cleanups.push(base.remove);
      await buildHistory(
        base.dir,
        {
          commits: [
            { name: "a", ageMs: 9 * DAY },
            { name: "b", ageMs: 8 * DAY },
            { name: "c", ageMs: 3_600_000 },
          ],
        },
        NOW,
      );
      return base.dir;
    },
  },
];

/** A copy of a table folder, removed with `cleanups`. */
export async function copyOf(dir: string, cleanups: (() => Promise<void>)[]): Promise<string> {
  const parent = await mkdtemp(join(tmpdir(), "lw-step-copy-"));
  cleanups.push(() => rm(parent, { recursive: true, force: true }));
  await cp(dir, join(parent, "t"), { recursive: true, preserveTimestamps: true });
  return join(parent, "t");
}

/** Every version `versions` lists, live or cleaned up, as "version:id". */
export async function listedVersions(dir: string, format: TableFormat): Promise<string[]> {
  return (await readTimeline(new LocalStore(dir), format)).records.map((record) => `${record.version}:${record.version_id}`);
}

export const withoutOurs = (files: string[]) => files.filter((file) => !file.startsWith("_lakewarden/"));
