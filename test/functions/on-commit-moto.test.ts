/**
 * on-commit as deployed, driven by moto's own S3 event notifications: the bucket's notification
 * configuration is the CDK stack's (commitNotificationFilters of the registered formats, one table
 * root and one table prefix), so moto decides which writes become SQS messages, and the messages
 * handed to the Lambda are the ones moto sent. A Lance table written by LanceDB, a Delta table
 * (simple_table) and an Iceberg table (spark-bunnies) put file by file with their commit files
 * last. Stores are plain: moto enforces the head's conditional writes itself.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import type { Context } from "aws-lambda";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOnCommitLambda } from "../../functions/on-commit/lambda.ts";
import { decodeS3EventKey } from "../../functions/shared/s3-event.ts";
import { commitNotificationFilters } from "../../lib/formats/index.ts";
import { loadTableState } from "../../lib/head/loader.ts";
import { openStore } from "../../lib/store/open-store.ts";
import { copyFixtureDir } from "../support/fixtures.ts";
import { copyIcebergFixture, listFiles } from "../support/iceberg-fixtures.ts";
import { buildLanceDataset, type LanceDataset } from "../support/lance-datasets.ts";
import { startMotoServer, type MotoHandle } from "../support/moto.ts";
import { lambdaContext } from "./lambda-context.ts";
import { drain, receiveAll, type PollResult, type QueueRef, type SqsHandler } from "./sqs-lambda.ts";

const BUCKET = "notified-lake";
/** A table named by its root (LAKEWARDEN_TABLES): notified through its format folders' filters. */
const DELTA_ROOT = "tables/simple_table";
/** Tables under a prefix (LAKEWARDEN_TABLE_PREFIXES): notified through the commit-file suffixes. */
const PREFIX = "warehouse/";
const ICEBERG_ROOT = "warehouse/bunnies";

let moto: MotoHandle;
let queue: QueueRef;
let dlq: QueueRef;
let handler: SqsHandler;
let context: Context;
let lance: LanceDataset | undefined;
const savedEnv = { ...process.env };

beforeAll(async () => {
  moto = await startMotoServer({ buckets: [BUCKET] });
  const created = await moto.createQueue("commits", { dlq: { maxReceiveCount: 2 } });
  queue = created;
  dlq = created.dlq!;
  await moto.notifyQueue(BUCKET, queue.queueArn, commitNotificationFilters([DELTA_ROOT], [PREFIX]));
  Object.assign(process.env, moto.awsEnv, {
    LAKEWARDEN_TABLES: JSON.stringify([`s3://${BUCKET}/${DELTA_ROOT}`]),
    LAKEWARDEN_TABLE_PREFIXES: JSON.stringify([`s3://${BUCKET}/${PREFIX}`]),
    POWERTOOLS_LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "CRITICAL",
    POWERTOOLS_METRICS_DISABLED: "true",
  });
  handler = createOnCommitLambda(process.env) as unknown as SqsHandler;
  context = lambdaContext("on-commit");
  // Whatever moto sent when the configuration was put (S3 sends an s3:TestEvent) is not a commit.
  await drain(moto.sqsClient, queue, handler, context);
});

afterAll(async () => {
  lance?.close();
  process.env = savedEnv;
  await moto?.stop();
});

/** The object keys of the S3 records in the messages the Lambda was handed. */
function notifiedKeys(polls: PollResult[]): string[] {
  return polls.flatMap((poll) =>
    poll.event.Records.flatMap((record) => {
      const body = JSON.parse(record.body) as { Records?: { eventSource: string; eventName: string; s3: { bucket: { name: string }; object: { key: string } } }[] };
      return (body.Records ?? []).map((r) => {
        expect(r).toMatchObject({ eventSource: "aws:s3", eventName: expect.stringMatching(/^ObjectCreated:/), s3: { bucket: { name: BUCKET } } });
        return decodeS3EventKey(r.s3.object.key, record.messageId);
      });
    }),
  );
}

async function putFiles(dir: string, root: string, keys: readonly string[]): Promise<void> {
  for (const key of keys) {
    await moto.s3Client.send(new PutObjectCommand({ Bucket: BUCKET, Key: `${root}/${key}`, Body: await readFile(join(dir, ...key.split("/"))) }));
  }
}

/** The handler's messages, all of them handled; the head of `root` is the latest version's. */
async function expectCurrentHead(root: string): Promise<{ keys: string[]; version: number }> {
  const polls = await drain(moto.sqsClient, queue, handler, context);
  expect(polls.flatMap((p) => p.failedMessageIds)).toEqual([]);
  expect(await receiveAll(moto.sqsClient, dlq.queueUrl)).toEqual([]);
  const state = await loadTableState(openStore(`s3://${BUCKET}/${root}`));
  expect(state.source).toBe("head");
  expect(state.warning).toBeNull();
  return { keys: notifiedKeys(polls), version: state.version };
}

describe("on-commit from moto's S3 notifications", () => {
  it("a Lance commit by LanceDB: one message per manifest, none for data files; the head is the latest version's", async () => {
    lance = await buildLanceDataset({
      dbUri: `s3://${BUCKET}/warehouse`,
      tableName: "orders",
      storageOptions: moto.lanceStorageOptions,
      steps: [
        { op: "create", rows: 5 },
        { op: "append", rows: 3 },
        { op: "append", rows: 2 },
      ],
    });
    const { keys, version } = await expectCurrentHead("warehouse/orders.lance");
    expect(version).toBe(await lance.table.version());
    const ordersKeys = keys.filter((key) => key.startsWith("warehouse/orders.lance/"));
    expect(ordersKeys).toHaveLength(version);
    for (const key of keys) expect(key).toMatch(/\/_versions\/[^/]+\.manifest$/);

    // The next commit moves the head on.
    await lance.apply([{ op: "append", rows: 1 }]);
    const next = await expectCurrentHead("warehouse/orders.lance");
    expect(next.version).toBe(version + 1);
  });

  it("a Delta commit (simple_table put with its log last): messages only for _delta_log/*.json; the head is version 4's", async () => {
    const copy = await copyFixtureDir("delta", "simple_table");
    try {
      const files = await listFiles(copy.dir);
      const log = files.filter((key) => key.startsWith("_delta_log/")).sort();
      await putFiles(
        copy.dir,
        DELTA_ROOT,
        files.filter((key) => !key.startsWith("_delta_log/")),
      );
      await putFiles(copy.dir, DELTA_ROOT, log);
      const { keys, version } = await expectCurrentHead(DELTA_ROOT);
      expect(version).toBe(4);
      expect(keys.sort()).toEqual(log.filter((key) => key.endsWith(".json")).map((key) => `${DELTA_ROOT}/${key}`));
    } finally {
      await copy.remove();
    }
  });

  it("an Iceberg commit (spark-bunnies put with its metadata files last): messages only for *.metadata.json; the head is current", async () => {
    const copy = await copyIcebergFixture("spark-bunnies");
    try {
      const files = await listFiles(copy.dir);
      const isMetadata = (key: string) => key.endsWith(".metadata.json") || key.endsWith("version-hint.text");
      const metadata = files.filter(isMetadata).sort((a, b) => a.localeCompare(b, "en", { numeric: true }));
      await putFiles(
        copy.dir,
        ICEBERG_ROOT,
        files.filter((key) => !isMetadata(key)),
      );
      await putFiles(copy.dir, ICEBERG_ROOT, metadata);
      const { keys } = await expectCurrentHead(ICEBERG_ROOT);
      expect(keys.sort()).toEqual(
        metadata
          .filter((key) => key.endsWith(".metadata.json"))
          .map((key) => `${ICEBERG_ROOT}/${key}`)
          .sort(),
      );
    } finally {
      await copy.remove();
    }
  });
});
