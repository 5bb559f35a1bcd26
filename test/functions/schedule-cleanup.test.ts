/**
 * schedule-cleanup through its Lambda entry (middy + Powertools), against tables LanceDB wrote
 * to moto's S3, sending to a real moto SQS queue.
 */
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { ReceiveMessageCommand as ReceiveSqsMessage, type Message } from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseCleanupRequest } from "../../functions/shared/cleanup-request.ts";
import { startMotoServer, type MotoHandle } from "../support/moto.ts";
import { buildLanceDataset } from "../support/lance-datasets.ts";
import { lambdaContext } from "./lambda-context.ts";

const BUCKET = "schedule-lake";
let moto: MotoHandle;
let queueUrl: string;

beforeAll(async () => {
  moto = await startMotoServer({ buckets: [BUCKET] });
  for (const [dbUri, tableName] of [
    [`s3://${BUCKET}/warehouse`, "orders"],
    [`s3://${BUCKET}/warehouse/ventes été`, "sales"],
    [`s3://${BUCKET}/named`, "kept"],
    [`s3://${BUCKET}/elsewhere`, "ignored"],
  ] as const) {
    const dataset = await buildLanceDataset({ dbUri, tableName, storageOptions: moto.lanceStorageOptions, steps: [{ op: "create", rows: 5 }] });
    dataset.close();
  }
  // A folder with files but no table, which discovery must walk past.
  await moto.s3Client.send(new PutObjectCommand({ Bucket: BUCKET, Key: "warehouse/docs/readme.txt", Body: "not a table" }));
  queueUrl = (await moto.createQueue("cleanup-requests")).queueUrl;
  Object.assign(process.env, moto.awsEnv, {
    LAKEWARDEN_TABLES: JSON.stringify([`s3://${BUCKET}/named/kept.lance`]),
    LAKEWARDEN_TABLE_PREFIXES: JSON.stringify([`s3://${BUCKET}/warehouse/`]),
    LAKEWARDEN_CLEANUP_QUEUE_URL: queueUrl,
    POWERTOOLS_LOG_LEVEL: "WARN",
  });
});

afterAll(async () => {
  await moto?.stop();
});

async function receiveAll(url: string): Promise<Message[]> {
  const messages: Message[] = [];
  for (;;) {
    const received = await moto.sqsClient.send(new ReceiveSqsMessage({ QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }));
    if (!received.Messages?.length) return messages;
    messages.push(...received.Messages);
  }
}

describe("schedule-cleanup", () => {
  it("enqueues one cleanup request per named and discovered table, and nothing else", async () => {
    const { handler } = await import("../../functions/schedule-cleanup/index.ts");
    const scheduledEvent = {
      version: "0",
      id: "53dc4d37-cffa-4f76-80c9-8b7d4a4d2eaa",
      "detail-type": "Scheduled Event",
      source: "aws.events",
      account: "123456789012",
      time: "2026-03-01T03:00:00Z",
      region: "us-east-1",
      resources: ["arn:aws:events:us-east-1:123456789012:rule/lakewarden-cleanup"],
      detail: {},
    };
    const result = await handler(scheduledEvent, lambdaContext("schedule-cleanup"));
    const expected = [
      `s3://${BUCKET}/named/kept.lance`,
      `s3://${BUCKET}/warehouse/orders.lance`,
      // LanceDB percent-encodes its database path into the S3 keys it writes: these are the real keys.
      `s3://${BUCKET}/warehouse/ventes%20%C3%A9t%C3%A9/sales.lance`,
      // Not listed: LanceDB's own catalog tables `warehouse/__manifest`, the non-table `docs/`, `elsewhere/`.
    ];
    expect(result.tables).toEqual(expected);
    const messages = await receiveAll(queueUrl);
    const tables = messages.map((m) => parseCleanupRequest(m.Body ?? "", m.MessageId ?? "").table).sort();
    expect(tables).toEqual(expected);
  });

  it("with table roots configured (IAM names only those), skips discovered tables outside them", async () => {
    const { createScheduleCleanupLambda } = await import("../../functions/schedule-cleanup/lambda.ts");
    const rootsQueue = (await moto.createQueue("cleanup-requests-roots")).queueUrl;
    const handler = createScheduleCleanupLambda({
      ...process.env,
      LAKEWARDEN_TABLE_ROOTS: JSON.stringify([`s3://${BUCKET}/warehouse/orders.lance`]),
      LAKEWARDEN_CLEANUP_QUEUE_URL: rootsQueue,
    });
    const result = await handler({}, lambdaContext("schedule-cleanup"));
    const expected = [`s3://${BUCKET}/named/kept.lance`, `s3://${BUCKET}/warehouse/orders.lance`];
    expect(result.tables).toEqual(expected);
    const messages = await receiveAll(rootsQueue);
    expect(messages.map((m) => parseCleanupRequest(m.Body ?? "", m.MessageId ?? "").table).sort()).toEqual(expected);
  });
});
