/**
 * cleanup-table publishes the run's storage breakdown as metrics: live, history and reclaimed
 * bytes, from the receipt's `storage` (the real pipeline on a real LanceDB table on local disk,
 * metrics recorded by a HandlerMetrics of the test's own).
 */
import { afterAll, expect, it } from "vitest";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { createCleanupTableHandler } from "../../functions/cleanup-table/cleanup-table.ts";
import { encodeCleanupRequest } from "../../functions/shared/cleanup-request.ts";
import { METRIC } from "../../functions/shared/observability.ts";
import { runCleanup } from "../../lib/maintenance/run-cleanup.ts";
import { openStore } from "../../lib/store/open-store.ts";
import { buildLanceDataset, makeTempDir, removeDir } from "../support/lance-datasets.ts";
import type { SQSEvent } from "aws-lambda";

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await removeDir(dir);
});

it("publishes StorageLiveBytes, StorageHistoryBytes and StorageReclaimedBytes from the receipt's storage", async () => {
  const dir = await makeTempDir("lw-cleanup-metrics-");
  dirs.push(dir);
  const ds = await buildLanceDataset({
    dbUri: dir,
    steps: [
      { op: "create", rows: 6 },
      { op: "tag", name: "keep" },
      { op: "overwrite", rows: 5 },
      { op: "overwrite", rows: 4 },
      { op: "append", rows: 2 },
    ],
  });
  ds.close();
  const metrics: { name: string; unit: string; value: number }[] = [];
  const silent = { info() {}, warn() {}, error() {} };
  const handler = createCleanupTableHandler({
    scopes: { tables: [`file://${ds.tableUri}`], prefixes: [] },
    openStore: (uri) => openStore(uri),
    runCleanup: (store, options) => runCleanup(store, { ...options, now: () => new Date(Date.now() + 1000) }),
    settings: { olderThanMs: 0, allowShortRetention: true },
    log: silent,
    metrics: { addMetric: (name, unit, value) => metrics.push({ name, unit, value }) },
  });
  const body = encodeCleanupRequest({ table: `file://${ds.tableUri}`, requestedAt: new Date().toISOString() });
  const event = {
    Records: [
      {
        messageId: "m1",
        body,
        receiptHandle: "r",
        attributes: {},
        messageAttributes: {},
        md5OfBody: "",
        eventSource: "aws:sqs",
        eventSourceARN: "arn:aws:sqs:us-east-1:1:q",
        awsRegion: "us-east-1",
      },
    ],
  } as unknown as SQSEvent;
  const response = await handler(event);
  expect(response.batchItemFailures).toEqual([]);

  const receiptNames = (await readdir(join(ds.tableUri, "_lakewarden", "runs"))).filter((name) => name.endsWith(".json") && !name.endsWith(".intent.json"));
  expect(receiptNames).toHaveLength(1);
  const receiptName = receiptNames[0]!;
  const receipt = JSON.parse(await readFile(join(ds.tableUri, "_lakewarden", "runs", receiptName), "utf8")) as {
    bytes_removed: number;
    storage: {
      before: { reclaimable: { bytes: number }; live: { bytes: number } };
      after: { live: { bytes: number }; history: { bytes: number }; reclaimable: { bytes: number } };
    };
  };
  const value = (name: string) => metrics.find((m) => m.name === name)?.value;
  expect(receipt.storage.before.reclaimable.bytes).toBeGreaterThan(0);
  expect(value(METRIC.storageReclaimedBytes)).toBe(receipt.bytes_removed);
  expect(value(METRIC.storageReclaimedBytes)).toBe(receipt.storage.before.reclaimable.bytes - receipt.storage.after.reclaimable.bytes);
  expect(value(METRIC.storageLiveBytes)).toBe(receipt.storage.after.live.bytes);
  expect(value(METRIC.storageLiveBytes)).toBeGreaterThan(0);
  // The tagged first version keeps its files as history.
  expect(value(METRIC.storageHistoryBytes)).toBe(receipt.storage.after.history.bytes);
  expect(value(METRIC.storageHistoryBytes)).toBeGreaterThan(0);
  expect(metrics.filter((m) => m.name.startsWith("Storage")).every((m) => m.unit === "Bytes")).toBe(true);
});
