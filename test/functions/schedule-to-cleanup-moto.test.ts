/**
 * The scheduled cleanup path through a real queue, all on moto's server: schedule-cleanup (as
 * deployed, settings from the environment) sends one request per table to moto's SQS; the
 * cleanup-table Lambda receives those very messages and cleans each table under its lease, with
 * no wrapper: the lease's conditional writes are moto's to accept or refuse. LanceDB wrote the
 * tables to moto's S3 and reads them back afterwards.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCleanupTableLambda } from "../../functions/cleanup-table/lambda.ts";
import { createScheduleCleanupLambda } from "../../functions/schedule-cleanup/lambda.ts";
import { parseCleanupRequest } from "../../functions/shared/cleanup-request.ts";
import { readLease } from "../../lib/maintenance/lease.ts";
import { openStore } from "../../lib/store/open-store.ts";
import { buildLanceDataset, type DatasetStep, type LanceDataset } from "../support/lance-datasets.ts";
import { startMotoServer, type MotoHandle } from "../support/moto.ts";
import { lambdaContext } from "./lambda-context.ts";
import { listObjects } from "./s3-events.ts";
import { drain, receiveAll, type QueueRef, type SqsHandler } from "./sqs-lambda.ts";

const BUCKET = "scheduled-lake";
const WAREHOUSE = `s3://${BUCKET}/warehouse`;
/** Overwrites leave the earlier versions' data files unreferenced by the latest. */
const HISTORY: DatasetStep[] = [
  { op: "create", rows: 6 },
  { op: "overwrite", rows: 5 },
  { op: "append", rows: 2 },
];
const TABLES = ["orders", "returns"];

let moto: MotoHandle;
let queue: QueueRef;
let dlq: QueueRef;
const datasets: Record<string, LanceDataset> = {};
const savedEnv = { ...process.env };

beforeAll(async () => {
  moto = await startMotoServer({ buckets: [BUCKET] });
  for (const name of TABLES) {
    datasets[name] = await buildLanceDataset({ dbUri: WAREHOUSE, tableName: name, storageOptions: moto.lanceStorageOptions, steps: HISTORY });
  }
  // A visibility timeout longer than any cleanup here, as the stack sets it above the function's timeout: a slow run on a busy machine is not received twice.
  const created = await moto.createQueue("cleanup-requests", { dlq: { maxReceiveCount: 2 }, attributes: { VisibilityTimeout: "300" } });
  queue = created;
  dlq = created.dlq!;
  Object.assign(process.env, moto.awsEnv, {
    LAKEWARDEN_TABLE_PREFIXES: JSON.stringify([`${WAREHOUSE}/`]),
    LAKEWARDEN_CLEANUP_QUEUE_URL: queue.queueUrl,
    // Every version but the latest is old enough: the test cannot wait seven days.
    LAKEWARDEN_OLDER_THAN: "0s",
    LAKEWARDEN_ALLOW_SHORT_RETENTION: "true",
    LAKEWARDEN_RETAIN_VERSIONS: "1",
    POWERTOOLS_LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "CRITICAL",
    POWERTOOLS_METRICS_DISABLED: "true",
  });
});

afterAll(async () => {
  for (const dataset of Object.values(datasets)) dataset.close();
  process.env = savedEnv;
  await moto?.stop();
});

const versionKeys = async (name: string): Promise<string[]> => (await listObjects(moto.s3Client, BUCKET, `warehouse/${name}.lance/_versions/`)).map((o) => o.key);

describe("schedule → SQS → cleanup on moto", () => {
  it("the schedule's messages, received from moto's queue, clean every table and leave it readable by LanceDB", async () => {
    for (const name of TABLES) expect(await versionKeys(name)).toHaveLength(HISTORY.length);
    const schedule = createScheduleCleanupLambda(process.env);
    const scheduled = await schedule({}, lambdaContext("schedule-cleanup"));
    expect(scheduled.tables).toEqual(TABLES.map((name) => `${WAREHOUSE}/${name}.lance`));

    const cleanup = createCleanupTableLambda(process.env) as unknown as SqsHandler;
    const polls = await drain(
      moto.sqsClient,
      queue,
      cleanup,
      lambdaContext("cleanup-table", () => 15 * 60_000),
    );
    const requested = polls.flatMap((p) => p.event.Records.map((r) => parseCleanupRequest(r.body, r.messageId).table)).sort();
    expect(requested).toEqual(scheduled.tables);
    expect(polls.flatMap((p) => p.failedMessageIds)).toEqual([]);
    expect(await receiveAll(moto.sqsClient, dlq.queueUrl)).toEqual([]);

    for (const name of TABLES) {
      expect(await versionKeys(name)).toHaveLength(1);
      const table = await datasets[name]!.db.openTable(name);
      try {
        expect((await table.listVersions()).map((v) => v.version)).toEqual([HISTORY.length]);
        expect(await table.countRows()).toBe(7);
      } finally {
        table.close();
      }
      // The run's receipt, and its lease released (a conditional write moto checked).
      expect((await listObjects(moto.s3Client, BUCKET, `warehouse/${name}.lance/_lakewarden/runs/`)).length).toBeGreaterThan(0);
      expect((await readLease(openStore(`${WAREHOUSE}/${name}.lance`))).record?.released_at).toEqual(expect.any(String));
    }
  });
});
