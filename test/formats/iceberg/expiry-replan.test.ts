/**
 * A writer's commit that lands while cleanup lists the table is read by the re-plan before the
 * deletes, and the expiry commit goes on top of the metadata the settled plan read: the run
 * completes (what pyiceberg's commits do to most runs in test/engines/race-iceberg.test.ts). A
 * commit after the plan settled stops the run before it writes or deletes anything
 * (expiry-rules.test.ts, "a writer commits after cleanup planned").
 */
import { copyFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DAY_MS } from "../../../lib/formats/iceberg/retention.ts";
import { runCleanup } from "../../../lib/maintenance/run-cleanup.ts";
import { openStore } from "../../../lib/store/index.ts";
import type { ListOptions, ObjectInfo, ObjectStore } from "../../../lib/store/object-store.ts";
import { appendSnapshot, copyIcebergFixture, snapshotsByTextPass, type FixtureCopy } from "../../support/iceberg-fixtures.ts";
import { BUNNIES, buildHistory, currentMetadataName, everySnapshotReads } from "../../support/iceberg-histories.ts";

const copies: FixtureCopy[] = [];
afterAll(async () => {
  await Promise.all(copies.map((c) => c.remove()));
});

const NOW = Date.now();

describe("a writer commits while cleanup lists the table", () => {
  it("the re-plan reads the commit and the expiry goes on top of it: the run completes, the writer's snapshot stays", async () => {
    const copy = await copyIcebergFixture("spark-bunnies");
    copies.push(copy);
    const { dir } = copy;
    await buildHistory(dir, { commits: [{ name: "a", ageMs: 2 * DAY_MS }] }, NOW);
    const inner = openStore(dir);
    const store = Object.create(inner) as ObjectStore;
    let writer: { snapshotId: string; metadataKey: string } | null = null;
    // The listing of data/ comes after the first scan and before the re-plan check.
    store.list = (prefix: string, options?: ListOptions): AsyncIterable<ObjectInfo> => {
      const listing = inner.list(prefix, options);
      if (!prefix.startsWith("data/") || writer !== null) return listing;
      return (async function* () {
        await copyFile(join(dir, "data/a-00001.parquet"), join(dir, "data/w-00001.parquet"));
        writer = await appendSnapshot(dir, { files: [{ path: `${BUNNIES}/data/w-00001.parquet`, recordCount: 20, sizeInBytes: 3560 }], timestampMs: NOW });
        yield* listing;
      })();
    };

    const report = await runCleanup(store, { now: () => new Date(NOW) });
    expect(writer).not.toBeNull();
    expect(report.status).toBe("completed");
    expect(report.replans.some((reason) => /was committed/.test(reason))).toBe(true);
    expect(report.removal_commit).toMatchObject({ status: "written", base: writer!.metadataKey, key: "metadata/v8.metadata.json" });
    expect(report.versions_removed.length).toBeGreaterThan(0);
    // The writer's commit is the current snapshot of the expiry's metadata, and every snapshot left reads.
    expect(await currentMetadataName(dir)).toBe("v8.metadata.json");
    const left = await snapshotsByTextPass(join(dir, "metadata", "v8.metadata.json"));
    expect(left.map((s) => s.id)).toContain(writer!.snapshotId);
    await everySnapshotReads(dir);
  });
});
