/**
 * Iceberg cleanup with snapshot expiry, failed at its k-th mutating request (lease, checkpoint,
 * intent, the new metadata file, the version hint, each delete batch), then run again: for every
 * k the rerun completes and leaves the same files as an uninterrupted run, every snapshot of the
 * metadata the version hint names reads (icebird) with every file it names present, and
 * `versions` still lists every snapshot with the expired ones cleaned up.
 */
import { cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { icebergFormat } from "../../../lib/formats/iceberg/iceberg-format.ts";
import { DAY_MS } from "../../../lib/formats/iceberg/retention.ts";
import { runCleanup } from "../../../lib/maintenance/run-cleanup.ts";
import { FaultInjectingStore } from "../../support/fault-injecting-store.ts";
import { LocalStore } from "../../../lib/store/local-store.ts";
import { readTimeline } from "../../../lib/versions/timeline.ts";
import { copyIcebergFixture, listFiles } from "../../support/iceberg-fixtures.ts";
import { buildHistory, currentMetadataName, everySnapshotReads } from "../../support/iceberg-histories.ts";

const NOW = Date.now();
const HOUR = 3_600_000;
const withoutOwnFiles = (keys: readonly string[]) => keys.filter((k) => !k.startsWith("_lakewarden/"));
const options = (nowMs: number) => ({ format: icebergFormat, now: () => new Date(nowMs), deleteBatchSize: 2, deleteConcurrency: 1 });

describe("Iceberg expiry interrupted at every mutating request, then run again", () => {
  it("for every k: the rerun completes with the uninterrupted run's files, the hinted metadata reads, history is whole", async () => {
    // s1 ← s2 ← s3 (30 days old) ← a (9 days) ← b (8 days) ← c (1 hour): the default 5-day retention expires s1-b.
    const base = await copyIcebergFixture("spark-bunnies", { ageMs: 30 * DAY_MS });
    const copies: (() => Promise<void>)[] = [base.remove];
    try {
      await buildHistory(
        base.dir,
        {
          commits: [
            { name: "a", ageMs: 9 * DAY_MS },
            { name: "b", ageMs: 8 * DAY_MS },
            { name: "c", ageMs: HOUR },
          ],
        },
        NOW,
      );
      // Each case starts from a byte-identical copy (same ids and names), times preserved.
      const fresh = async (): Promise<string> => {
        const parent = await mkdtemp(join(tmpdir(), "lw-iceberg-interrupted-"));
        copies.push(() => rm(parent, { recursive: true, force: true }));
        await cp(base.dir, join(parent, "t"), { recursive: true, preserveTimestamps: true });
        return join(parent, "t");
      };

      const referenceDir = await fresh();
      const counting = new FaultInjectingStore(new LocalStore(referenceDir));
      const reference = await runCleanup(counting, options(NOW));
      expect(reference.status).toBe("completed");
      expect(reference.versions_removed).toEqual([1, 2, 3, 4, 5]);
      const mutations = counting.mutationCount;
      const finalFiles = withoutOwnFiles(await listFiles(referenceDir));
      const history = (await readTimeline(new LocalStore(referenceDir), icebergFormat)).records.map((r) => [r.version, r.version_id, r.is_cleaned_up]);
      expect(history.map(([, , cleaned]) => cleaned)).toEqual([true, true, true, true, true, false]);

      for (let k = 1; k <= mutations; k++) {
        const dir = await fresh();
        const store = new LocalStore(dir);
        const outcome = await runCleanup(new FaultInjectingStore(store, { failMutations: [{ at: k }] }), options(NOW)).then(
          (report) => `finished ${report.status}`,
          (error: Error) => `failed: ${error.message}`,
        );
        const rerun = await runCleanup(store, options(NOW + 20 * 60_000));
        const context = `k=${k} (${outcome})`;
        expect(rerun.status, context).toBe("completed");
        expect(withoutOwnFiles(await listFiles(dir)), context).toEqual(finalFiles);
        // The version hint names the newest metadata file, as after the uninterrupted run.
        expect(await currentMetadataName(dir), context).toBe(await currentMetadataName(referenceDir));
        await everySnapshotReads(dir);
        expect(
          (await readTimeline(store, icebergFormat)).records.map((r) => [r.version, r.version_id, r.is_cleaned_up]),
          context,
        ).toEqual(history);
      }
    } finally {
      for (const remove of copies) await remove();
    }
  }, 60_000);
});
