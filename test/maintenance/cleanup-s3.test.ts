/**
 * The pipeline on S3 (moto's server, which enforces S3's conditional writes itself): a LanceDB table
 * written to the bucket, a dry run, the real run, the checkpoint, and LanceDB reading after.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lanceFormat } from "../../lib/formats/lance/lance-format.ts";
import { loadNewestCheckpoint } from "../../lib/checkpoint/load.ts";
import { runCleanup } from "../../lib/maintenance/run-cleanup.ts";
import type { ObjectStore } from "../../lib/store/object-store.ts";
import { openStore } from "../../lib/store/open-store.ts";
import { readTimeline } from "../../lib/versions/timeline.ts";
import { startMotoServer, type MotoHandle } from "../support/moto.ts";
import { buildLanceDataset } from "../support/lance-datasets.ts";
import { compareContents, readContents } from "./lance-checks.ts";

let moto: MotoHandle;
beforeAll(async () => {
  moto = await startMotoServer({ buckets: ["lake"] });
});
afterAll(() => moto?.stop());

async function keysUnder(store: ObjectStore): Promise<string[]> {
  const keys: string[] = [];
  for await (const object of store.list("")) keys.push(object.key);
  return keys.sort();
}

describe("cleanup on S3", () => {
  it("removes what the dry run listed, keeps every kept version readable, archives history", async () => {
    const dbUri = "s3://lake/db";
    const ds = await buildLanceDataset({
      dbUri,
      storageOptions: moto.lanceStorageOptions,
      steps: [
        { op: "create", rows: 10 },
        { op: "append", rows: 5 },
        { op: "delete", where: "id % 3 = 0" },
        { op: "tag", name: "kept" },
        { op: "overwrite", rows: 6 },
        { op: "append", rows: 2 },
      ],
    });
    ds.close();
    await new Promise((resolve) => setTimeout(resolve, 20));
    const cutoff = new Date();
    const store = openStore(ds.tableUri, { s3: { endpoint: moto.endpoint, region: moto.region, credentials: moto.credentials } });
    const before = await readContents(dbUri, "t", moto.lanceStorageOptions);
    const historyBefore = (await readTimeline(store, lanceFormat)).records;
    const keysBefore = await keysUnder(store);

    const dry = await runCleanup(store, { settings: { olderThanMs: 0 }, now: () => cutoff, dryRun: true });
    expect(await keysUnder(store)).toEqual(keysBefore);
    const planned = dry.files
      .filter((f) => f.action === "delete")
      .map((f) => f.key)
      .sort();

    const report = await runCleanup(store, { settings: { olderThanMs: 0 }, now: () => cutoff });
    expect(report.status).toBe("completed");
    expect(report.versions_removed).toEqual([1, 2, 4]);
    expect(report.tagged_old_versions).toEqual([{ version: 3, tags: ["kept"] }]);
    const keysAfter = (await keysUnder(store)).filter((k) => !k.startsWith("_lakewarden/"));
    expect(keysBefore.filter((k) => !keysAfter.includes(k))).toEqual(planned);
    expect(report.requests.delete).toBeGreaterThan(0);

    expect(compareContents(before, await readContents(dbUri, "t", moto.lanceStorageOptions))).toEqual([]);
    const loaded = await loadNewestCheckpoint(store);
    expect(loaded.checkpoint?.records.filter((r) => r.is_cleaned_up).map((r) => r.version)).toEqual([1, 2, 4]);
    const historyAfter = (await readTimeline(store, lanceFormat)).records;
    expect(historyAfter.map((r) => ({ ...r, is_cleaned_up: false }))).toEqual(historyBefore);
  });
});
