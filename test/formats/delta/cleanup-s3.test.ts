/**
 * Delta cleanup on S3 (moto's server, which enforces S3's conditional writes itself): a fixture copy
 * uploaded to the bucket, cleaned through runCleanup with the clock a year ahead (S3 sets the
 * file times at upload), deletes exactly the set Delta's rules give; the surviving files, mirrored
 * back to disk, replay (DuckDB) to the same live files.
 */
import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deltaFormat } from "../../../lib/formats/delta/delta-format.ts";
import { runCleanup } from "../../../lib/maintenance/run-cleanup.ts";
import type { ObjectStore } from "../../../lib/store/object-store.ts";
import { openStore } from "../../../lib/store/open-store.ts";
import { startMotoServer, type MotoHandle } from "../../support/moto.ts";
import { copyFixture } from "../../support/fixtures.ts";
import { oracleLiveFiles } from "./duckdb-oracle.ts";
import { listKeys } from "./log-surgery.ts";
import { vacuumAllExpired } from "./vacuum-rules.ts";

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

const pad = (v: number) => String(v).padStart(20, "0");

describe("Delta cleanup on S3", () => {
  it("table_with_deletion_logs: log cleanup below checkpoint 20 and VACUUM, file by file", async () => {
    const dir = await copyFixture("delta", "table_with_deletion_logs");
    const store = openStore("s3://lake/delta/table_with_deletion_logs", { s3: { endpoint: moto.endpoint, region: moto.region, credentials: moto.credentials } });
    const keys = await listKeys(dir);
    for (const key of keys) await store.put(key, await readFile(join(dir, key)));
    const before = await oracleLiveFiles(dir);
    // Rules, a year after the upload: every commit is past the log cutoff, so the kept
    // checkpoint is 20 (commits, .crc 0-19 and checkpoint 10 go); every tombstone is expired.
    const expected = [
      ...Array.from({ length: 20 }, (_, v) => [`_delta_log/${pad(v)}.json`, `_delta_log/${pad(v)}.crc`]).flat(),
      `_delta_log/${pad(10)}.checkpoint.parquet`,
      ...(await vacuumAllExpired(dir, before.files)),
    ].sort();
    const now = new Date(Date.now() + 365 * 86_400_000);

    const dry = await runCleanup(store, { format: deltaFormat, dryRun: true, now: () => now });
    expect(
      dry.files
        .filter((f) => f.action === "delete")
        .map((f) => f.key)
        .sort(),
    ).toEqual(expected);
    expect(await keysUnder(store)).toEqual(keys);

    const report = await runCleanup(store, { format: deltaFormat, now: () => now });
    expect(report.status).toBe("completed");
    expect(report.versions_removed).toEqual(Array.from({ length: 20 }, (_, v) => v));
    expect(
      report.files
        .filter((f) => f.action === "delete")
        .map((f) => f.key)
        .sort(),
    ).toEqual(expected);
    expect(report.reference_check).toMatchObject({ ok: true, missingBeforeRun: [] });
    expect((await keysUnder(store)).filter((k) => !k.startsWith("_lakewarden/"))).toEqual(keys.filter((k) => !expected.includes(k)));

    // The bucket's state, mirrored to disk, replays to the same live files.
    for (const key of expected) await rm(join(dir, key));
    expect((await oracleLiveFiles(dir)).files).toEqual(before.files);
  });
});
