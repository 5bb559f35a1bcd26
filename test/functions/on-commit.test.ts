/**
 * on-commit as deployed (middy + Powertools + Powertools batch, settings from the environment),
 * fed the way AWS feeds it: tables written by LanceDB to moto's S3, one S3 event per version
 * file LanceDB wrote, sent through a moto SQS queue with a dead-letter queue, received in
 * batches. The events are built by the test (s3-events.ts) so that keys, order and duplicates are
 * the test's to choose; on-commit-moto.test.ts takes moto's own notifications. moto enforces the
 * head's conditional writes itself: the stores are plain.
 */
import { GetObjectCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import type { Context } from "aws-lambda";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { probeStoredHead } from "../../lib/head/stored-head.ts";
import { openStore } from "../../lib/store/open-store.ts";
import { createOnCommitLambda } from "../../functions/on-commit/lambda.ts";
import { createOnCommitHandler } from "../../functions/on-commit/on-commit.ts";
import { lanceFormat } from "../../lib/formats/lance/lance-format.ts";
import type { LogAttributes } from "../../functions/shared/observability.ts";
import { startMotoServer, type MotoHandle } from "../support/moto.ts";
import { buildLanceDataset, type LanceDataset } from "../support/lance-datasets.ts";
import { lambdaContext } from "./lambda-context.ts";
import { listObjects, s3EventBody, S3_TEST_EVENT_BODY, type ObjectCreated } from "./s3-events.ts";
import { drain, pollOnce, receiveAll, sendBodies, type QueueRef, type SqsHandler } from "./sqs-lambda.ts";

const BUCKET = "commit-lake";
const WAREHOUSE = `s3://${BUCKET}/warehouse`;
/** A copy of `orders` under a key with real spaces and unicode (LanceDB itself percent-encodes such paths). */
const COPY_ROOT = "warehouse/my lake ☕/orders copy.lance";

let moto: MotoHandle;
let queue: QueueRef;
let dlq: QueueRef;
let handler: SqsHandler;
let context: Context;
const datasets: Record<string, LanceDataset> = {};

beforeAll(async () => {
  moto = await startMotoServer({ buckets: [BUCKET] });
  const storageOptions = moto.lanceStorageOptions;
  datasets.orders = await buildLanceDataset({
    dbUri: WAREHOUSE,
    tableName: "orders",
    storageOptions,
    steps: [
      { op: "create", rows: 5 },
      { op: "append", rows: 3 },
      { op: "append", rows: 2 },
    ],
  });
  datasets.customers = await buildLanceDataset({
    dbUri: WAREHOUSE,
    tableName: "customers",
    storageOptions,
    steps: [
      { op: "create", rows: 4 },
      { op: "append", rows: 4 },
    ],
  });
  datasets.sales = await buildLanceDataset({ dbUri: `${WAREHOUSE}/ventes été`, tableName: "sales", storageOptions, steps: [{ op: "create", rows: 3 }] });
  datasets.broken = await buildLanceDataset({
    dbUri: WAREHOUSE,
    tableName: "broken",
    storageOptions,
    steps: [
      { op: "create", rows: 3 },
      { op: "append", rows: 1 },
    ],
  });
  for (const object of await listObjects(moto.s3Client, BUCKET, "warehouse/orders.lance/")) {
    const got = await moto.s3Client.send(new GetObjectCommand({ Bucket: BUCKET, Key: object.key }));
    const key = object.key.replace("warehouse/orders.lance/", `${COPY_ROOT}/`);
    await moto.s3Client.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: await got.Body!.transformToByteArray() }));
  }

  const created = await moto.createQueue("commits", { dlq: { maxReceiveCount: 2 } });
  queue = created;
  dlq = created.dlq!;
  Object.assign(process.env, moto.awsEnv, {
    LAKEWARDEN_TABLE_PREFIXES: JSON.stringify([`${WAREHOUSE}/`]),
    POWERTOOLS_LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "CRITICAL",
    POWERTOOLS_METRICS_DISABLED: "true",
  });
  handler = createOnCommitLambda(process.env) as unknown as SqsHandler;
  context = lambdaContext("on-commit");
});

afterAll(async () => {
  for (const dataset of Object.values(datasets)) dataset.close();
  await moto?.stop();
});

/** Table roots (keys) → the S3 objects under their `_versions/`. */
async function versionFiles(root: string): Promise<ObjectCreated[]> {
  return listObjects(moto.s3Client, BUCKET, `${root}/_versions/`);
}

async function headVersion(root: string): Promise<{ version: number | null; etag: string } | null> {
  const probe = await probeStoredHead(openStore(`s3://${BUCKET}/${root}`));
  return probe && { version: probe.tableVersion, etag: probe.etag };
}

const ROOTS = {
  orders: "warehouse/orders.lance",
  customers: "warehouse/customers.lance",
  // The key LanceDB really wrote for `${WAREHOUSE}/ventes été/sales.lance`.
  sales: "warehouse/ventes%20%C3%A9t%C3%A9/sales.lance",
  copy: COPY_ROOT,
  broken: "warehouse/broken.lance",
};

/** A fixed shuffle, so a failure is reproducible. */
function shuffle<T>(items: T[]): T[] {
  const out = [...items];
  let seed = 7;
  for (let i = out.length - 1; i > 0; i--) {
    seed = (seed * 48271) % 2147483647;
    const j = seed % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

describe("on-commit", () => {
  it("writes the head of every table in a batch for its newest version, ignoring what is not a commit", async () => {
    const healthy = [ROOTS.orders, ROOTS.customers, ROOTS.sales, ROOTS.copy];
    const bodies: string[] = [];
    for (const root of healthy) for (const file of await versionFiles(root)) bodies.push(s3EventBody([file]));
    const dataFile = (await listObjects(moto.s3Client, BUCKET, `${ROOTS.orders}/data/`))[0]!;
    const catalogVersion = (await listObjects(moto.s3Client, BUCKET, "warehouse/__manifest/_versions/"))[0]!;
    bodies.push(S3_TEST_EVENT_BODY(BUCKET), s3EventBody([dataFile]), s3EventBody([catalogVersion]));
    expect(bodies.length).toBeGreaterThan(10); // more than one SQS batch

    await sendBodies(moto.sqsClient, queue, shuffle(bodies));
    const polls = await drain(moto.sqsClient, queue, handler, context);

    expect(polls.flatMap((p) => p.failedMessageIds)).toEqual([]);
    expect(polls[0]!.event.Records.length).toBe(10);
    expect(await headVersion(ROOTS.orders)).toMatchObject({ version: await datasets.orders!.table.version() });
    expect(await headVersion(ROOTS.customers)).toMatchObject({ version: await datasets.customers!.table.version() });
    expect(await headVersion(ROOTS.sales)).toMatchObject({ version: await datasets.sales!.table.version() });
    expect(await headVersion(ROOTS.copy)).toMatchObject({ version: await datasets.orders!.table.version() });
    // Not tables of this deployment, or not commits: nothing written for them.
    expect(await headVersion("warehouse/__manifest")).toBeNull();
    expect(await headVersion(ROOTS.broken)).toBeNull();
    expect(await receiveAll(moto.sqsClient, dlq.queueUrl)).toEqual([]);
  });

  it("is unmoved by duplicated and out-of-order events, and follows a new commit", async () => {
    const before = await headVersion(ROOTS.orders);
    const files = await versionFiles(ROOTS.orders);
    // Everything again, oldest first, twice: S3's at-least-once, unordered delivery.
    await sendBodies(
      moto.sqsClient,
      queue,
      [...files, ...files].reverse().map((file) => s3EventBody([file])),
    );
    expect((await drain(moto.sqsClient, queue, handler, context)).flatMap((p) => p.failedMessageIds)).toEqual([]);
    expect(await headVersion(ROOTS.orders)).toEqual(before); // same version, same ETag: not even rewritten

    await datasets.orders!.apply([{ op: "append", rows: 2 }]);
    const newest = await datasets.orders!.table.version();
    const after = await versionFiles(ROOTS.orders);
    const newestFile = after.find((file) => !files.some((old) => old.key === file.key))!;
    // The new commit's event arrives between late duplicates of old ones.
    await sendBodies(
      moto.sqsClient,
      queue,
      [files[0]!, newestFile, files[1]!, newestFile, files[2]!].map((file) => s3EventBody([file])),
    );
    expect((await drain(moto.sqsClient, queue, handler, context)).flatMap((p) => p.failedMessageIds)).toEqual([]);
    expect((await headVersion(ROOTS.orders))?.version).toBe(newest);
    expect(newest).toBeGreaterThan(before!.version!);
  });

  it("fails only the messages of a table whose head cannot be written; they end in the DLQ", async () => {
    // Damage the broken table's newest manifest, the one its head would be built from.
    const brokenFiles = await versionFiles(ROOTS.broken);
    const newestKey = brokenFiles[0]!.key; // V2 names: newest first
    const manifest = await moto.s3Client.send(new GetObjectCommand({ Bucket: BUCKET, Key: newestKey }));
    const bytes = await manifest.Body!.transformToByteArray();
    await moto.s3Client.send(new PutObjectCommand({ Bucket: BUCKET, Key: newestKey, Body: bytes.subarray(0, 24) }));

    await datasets.customers!.apply([{ op: "append", rows: 1 }]);
    const customersNewest = await datasets.customers!.table.version();
    const customerBodies = (await versionFiles(ROOTS.customers)).map((file) => s3EventBody([file]));
    const brokenBodies = brokenFiles.map((file) => s3EventBody([file]));
    const brokenIds = await sendBodies(moto.sqsClient, queue, brokenBodies);
    const customerIds = await sendBodies(moto.sqsClient, queue, customerBodies);

    const first = await pollOnce(moto.sqsClient, queue, handler, context);
    expect(first!.event.Records.map((r) => r.messageId).sort()).toEqual([...brokenIds, ...customerIds].sort());
    expect(first!.failedMessageIds.sort()).toEqual([...brokenIds].sort());
    expect((await headVersion(ROOTS.customers))?.version).toBe(customersNewest);

    // SQS retries the failed ones; after maxReceiveCount receives the redrive policy moves them to the DLQ.
    await drain(moto.sqsClient, queue, handler, context);
    const deadLetters = await receiveAll(moto.sqsClient, dlq.queueUrl);
    expect(deadLetters.map((m) => m.Body).sort()).toEqual([...brokenBodies].sort());
    expect(await headVersion(ROOTS.broken)).toBeNull();
  });

  it("writes no head inside a branch's folder and does not fail its commits", async () => {
    const orders = datasets.orders!.table;
    const branch = await (await orders.branches()).create("exp", "main", await orders.version());
    await branch.add([{ id: 900, name: "on-branch", score: 1 }]);
    branch.close();
    const branchRoot = `${ROOTS.orders}/tree/exp`;
    const branchFiles = await versionFiles(branchRoot);
    expect(branchFiles.length).toBeGreaterThan(0);

    await sendBodies(
      moto.sqsClient,
      queue,
      branchFiles.map((file) => s3EventBody([file])),
    );
    expect((await drain(moto.sqsClient, queue, handler, context)).flatMap((p) => p.failedMessageIds)).toEqual([]);
    expect(await listObjects(moto.s3Client, BUCKET, `${branchRoot}/_lakewarden/`)).toEqual([]);
    expect(await receiveAll(moto.sqsClient, dlq.queueUrl)).toEqual([]);
  });

  it("sends a message that is not an S3 event to the DLQ without holding up the rest", async () => {
    const poison = "this is not an S3 event";
    const good = s3EventBody([(await versionFiles(ROOTS.sales))[0]!]);
    const [poisonId] = await sendBodies(moto.sqsClient, queue, [poison, good]);
    const first = await pollOnce(moto.sqsClient, queue, handler, context);
    expect(first!.failedMessageIds).toEqual([poisonId]);
    await drain(moto.sqsClient, queue, handler, context);
    expect((await receiveAll(moto.sqsClient, dlq.queueUrl)).map((m) => m.Body)).toEqual([poison]);
  });

  it("logs the table and version of every head and reports heads written and commit-to-head lag as metrics", async () => {
    await datasets.sales!.apply([{ op: "append", rows: 1 }]);
    const version = await datasets.sales!.table.version();
    const newest = (await versionFiles(ROOTS.sales))[0]!;
    await sendBodies(moto.sqsClient, queue, [s3EventBody([newest]), S3_TEST_EVENT_BODY(BUCKET)]);
    const logs: { message: string; attributes: LogAttributes }[] = [];
    const metrics: { name: string; unit: string; value: number }[] = [];
    const record = (message: string, ...attributes: LogAttributes[]): void => {
      logs.push({ message, attributes: Object.assign({}, ...attributes) as LogAttributes });
    };
    const observed = createOnCommitHandler({
      scopes: { tables: [], prefixes: [`${WAREHOUSE}/`] },
      formats: [lanceFormat],
      openStore,
      log: { info: record, warn: record, error: record },
      metrics: { addMetric: (name, unit, value) => void metrics.push({ name, unit, value }) },
    });
    const poll = await pollOnce(moto.sqsClient, queue, observed as SqsHandler, context);
    expect(poll!.failedMessageIds).toEqual([]);
    expect(logs).toContainEqual(
      expect.objectContaining({
        message: "head written",
        attributes: expect.objectContaining({ table: `s3://${BUCKET}/${ROOTS.sales}`, version, action: "replaced" }),
      }),
    );
    expect(metrics.filter((m) => m.name === "HeadsWritten")).toEqual([{ name: "HeadsWritten", unit: "Count", value: 1 }]);
    expect(metrics.filter((m) => m.name === "EventsIgnored")).toHaveLength(1); // the test event
    const lag = metrics.filter((m) => m.name === "CommitToHeadLag");
    expect(lag).toHaveLength(1);
    expect(lag[0]!.unit).toBe("Milliseconds");
    expect(lag[0]!.value).toBeGreaterThanOrEqual(0);
  });
});
