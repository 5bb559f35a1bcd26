/**
 * cleanup-table as deployed (middy + Powertools, settings from the environment), on LanceDB
 * tables in moto's S3, requests delivered through a moto SQS queue with a dead-letter queue.
 * The lease's conditional writes are moto's to accept or refuse: the stores are plain.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeCleanupRequest } from "../../functions/shared/cleanup-request.ts";
import { Lease } from "../../lib/maintenance/lease.ts";
import { openStore } from "../../lib/store/open-store.ts";
import { createCleanupTableLambda } from "../../functions/cleanup-table/lambda.ts";
import { startMotoServer, type MotoHandle } from "../support/moto.ts";
import { buildLanceDataset, type DatasetStep, type LanceDataset } from "../support/lance-datasets.ts";
import { lambdaContext } from "./lambda-context.ts";
import { listObjects } from "./s3-events.ts";
import { drain, pollOnce, receiveAll, sendBodies, type QueueRef, type SqsHandler } from "./sqs-lambda.ts";

const BUCKET = "cleanup-lake";
const WAREHOUSE = `s3://${BUCKET}/warehouse`;
/** Overwrites leave the earlier versions' data files unreferenced by the latest. */
const HISTORY: DatasetStep[] = [
  { op: "create", rows: 6 },
  { op: "overwrite", rows: 5 },
  { op: "overwrite", rows: 4 },
  { op: "append", rows: 2 },
];

let moto: MotoHandle;
let queue: QueueRef;
let dlq: QueueRef;
let handler: SqsHandler;
const datasets: Record<string, LanceDataset> = {};
const plentyOfTime = lambdaContext("cleanup-table", () => 15 * 60_000);

beforeAll(async () => {
  moto = await startMotoServer({ buckets: [BUCKET] });
  for (const name of ["orders", "slow", "leased"]) {
    datasets[name] = await buildLanceDataset({ dbUri: WAREHOUSE, tableName: name, storageOptions: moto.lanceStorageOptions, steps: HISTORY });
  }
  const created = await moto.createQueue("cleanups", { dlq: { maxReceiveCount: 2 } });
  queue = created;
  dlq = created.dlq!;
  Object.assign(process.env, moto.awsEnv, {
    LAKEWARDEN_TABLE_PREFIXES: JSON.stringify([`${WAREHOUSE}/`]),
    // Every version but the latest is old enough: the test cannot wait seven days.
    LAKEWARDEN_OLDER_THAN: "0s",
    LAKEWARDEN_ALLOW_SHORT_RETENTION: "true",
    LAKEWARDEN_RETAIN_VERSIONS: "1",
    POWERTOOLS_LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "CRITICAL",
    POWERTOOLS_METRICS_DISABLED: "true",
  });
  handler = createCleanupTableLambda(process.env) as unknown as SqsHandler;
});

afterAll(async () => {
  for (const dataset of Object.values(datasets)) dataset.close();
  await moto?.stop();
});

const request = (name: string): string => encodeCleanupRequest({ table: `${WAREHOUSE}/${name}.lance`, requestedAt: new Date().toISOString() });
const versionKeys = async (name: string): Promise<string[]> => (await listObjects(moto.s3Client, BUCKET, `warehouse/${name}.lance/_versions/`)).map((o) => o.key);

/** What LanceDB itself sees after cleanup: the versions it can list and the rows of the latest. */
async function lanceView(name: string): Promise<{ versions: number[]; rows: number }> {
  const table = await datasets[name]!.db.openTable(name);
  try {
    return { versions: (await table.listVersions()).map((v) => v.version), rows: await table.countRows() };
  } finally {
    table.close();
  }
}

describe("cleanup-table", () => {
  it("cleans the requested table under its lease and leaves it readable", async () => {
    const latest = await datasets.orders!.table.version();
    expect(await versionKeys("orders")).toHaveLength(latest);
    await sendBodies(moto.sqsClient, queue, [request("orders")]);
    const poll = await pollOnce(moto.sqsClient, queue, handler, plentyOfTime);
    expect(poll!.failedMessageIds).toEqual([]);
    expect(await versionKeys("orders")).toHaveLength(1);
    expect(await lanceView("orders")).toEqual({ versions: [latest], rows: 6 });
    const runs = await listObjects(moto.s3Client, BUCKET, "warehouse/orders.lance/_lakewarden/runs/");
    expect(runs.length).toBeGreaterThan(0); // the run's receipt
  });

  it("stops cleanly when the Lambda has too little time left, and finishes on redelivery", async () => {
    const before = await versionKeys("slow");
    await sendBodies(moto.sqsClient, queue, [request("slow")]);
    const almostOutOfTime = lambdaContext("cleanup-table", () => 1_000);
    const first = await pollOnce(moto.sqsClient, queue, handler, almostOutOfTime);
    expect(first!.failedMessageIds).toHaveLength(1); // redelivered by SQS
    expect(await versionKeys("slow")).toEqual(before); // stopped before deleting anything
    const second = await pollOnce(moto.sqsClient, queue, handler, plentyOfTime);
    expect(second!.event.Records[0]!.messageId).toBe(first!.event.Records[0]!.messageId);
    expect(second!.failedMessageIds).toEqual([]);
    expect(await versionKeys("slow")).toHaveLength(1);
    expect((await lanceView("slow")).rows).toBe(6);
  });

  it("leaves a table alone while another run holds its lease, and acknowledges the request", async () => {
    const lease = await Lease.acquire(openStore(`${WAREHOUSE}/leased.lance`), { owner: "another cleaner" });
    try {
      const before = await versionKeys("leased");
      await sendBodies(moto.sqsClient, queue, [request("leased")]);
      expect((await pollOnce(moto.sqsClient, queue, handler, plentyOfTime))!.failedMessageIds).toEqual([]);
      expect(await versionKeys("leased")).toEqual(before);
    } finally {
      await lease.release();
    }
  });

  it("refuses requests for tables outside its scopes and unreadable requests: both end in the DLQ", async () => {
    const outside = encodeCleanupRequest({ table: `s3://${BUCKET}/elsewhere/t.lance`, requestedAt: "" });
    await sendBodies(moto.sqsClient, queue, [outside, "{not json"]);
    const polls = await drain(moto.sqsClient, queue, handler, plentyOfTime);
    expect(polls[0]!.failedMessageIds).toHaveLength(2);
    expect((await receiveAll(moto.sqsClient, dlq.queueUrl)).map((m) => m.Body).sort()).toEqual([outside, "{not json"].sort());
  });
});
