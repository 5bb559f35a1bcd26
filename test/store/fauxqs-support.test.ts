/** The fauxqs test server itself: LanceDB writes through it, S3Store reads it, SQS queues work. */
import { DeleteMessageCommand, GetQueueAttributesCommand, ReceiveMessageCommand, SendMessageCommand } from "@aws-sdk/client-sqs";
import * as lancedb from "@lancedb/lancedb";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { S3Store } from "../../lib/store/s3-store.ts";
import { startFauxqsServer } from "../support/fauxqs.ts";
import type { FauxqsHandle } from "../support/fauxqs.ts";

let fauxqs: FauxqsHandle;

beforeAll(async () => {
  fauxqs = await startFauxqsServer({ buckets: ["lake"] });
});

afterAll(async () => {
  await fauxqs?.stop();
});

describe("fauxqs test server", () => {
  test("LanceDB writes and reads a table on it with lanceStorageOptions", async () => {
    const db = await lancedb.connect("s3://lake/db", { storageOptions: fauxqs.lanceStorageOptions });
    const table = await db.createTable("t", [
      { id: 1, name: "one" },
      { id: 2, name: "two" },
    ]);
    await table.add([{ id: 3, name: "three" }]);
    expect(await table.countRows()).toBe(3);
    expect((await table.listVersions()).map((v) => v.version)).toEqual([1, 2]);
    table.close();
    db.close();

    const store = new S3Store({ client: fauxqs.s3Client, bucket: "lake", prefix: "db/t.lance", endpoint: fauxqs.endpoint });
    const keys: string[] = [];
    for await (const info of store.list("")) keys.push(info.key);
    expect(keys.filter((k) => k.startsWith("_versions/") && k.endsWith(".manifest"))).toHaveLength(2);
    expect(keys.some((k) => k.startsWith("data/") && k.endsWith(".lance"))).toBe(true);
    expect(await store.listPrefixes("")).toEqual(expect.arrayContaining(["_versions/", "data/"]));
  });

  test("createBucket makes a bucket S3 clients can use", async () => {
    await fauxqs.createBucket("fresh-bucket");
    const store = new S3Store({ client: fauxqs.s3Client, bucket: "fresh-bucket", endpoint: fauxqs.endpoint });
    await store.put("k", new TextEncoder().encode("x"));
    expect((await store.head("k")).size).toBe(1);
  });

  test("createQueue with a DLQ: messages flow, and the redrive policy points at the DLQ", async () => {
    const queue = await fauxqs.createQueue("commits", { dlq: { maxReceiveCount: 5 } });
    expect(queue.dlq?.queueName).toBe("commits-dlq");
    const attributes = await fauxqs.sqsClient.send(new GetQueueAttributesCommand({ QueueUrl: queue.queueUrl, AttributeNames: ["RedrivePolicy"] }));
    expect(JSON.parse(attributes.Attributes?.RedrivePolicy ?? "{}")).toMatchObject({
      deadLetterTargetArn: queue.dlq?.queueArn,
      maxReceiveCount: expect.anything(),
    });
    await fauxqs.sqsClient.send(new SendMessageCommand({ QueueUrl: queue.queueUrl, MessageBody: '{"table":"t"}' }));
    const received = await fauxqs.sqsClient.send(new ReceiveMessageCommand({ QueueUrl: queue.queueUrl, WaitTimeSeconds: 1 }));
    expect(received.Messages?.map((m) => m.Body)).toEqual(['{"table":"t"}']);
    await fauxqs.sqsClient.send(new DeleteMessageCommand({ QueueUrl: queue.queueUrl, ReceiptHandle: received.Messages?.[0]?.ReceiptHandle }));
  });

  test("a queue without a DLQ has no redrive policy", async () => {
    const queue = await fauxqs.createQueue("plain");
    expect(queue.dlq).toBeUndefined();
    const attributes = await fauxqs.sqsClient.send(new GetQueueAttributesCommand({ QueueUrl: queue.queueUrl, AttributeNames: ["All"] }));
    expect(attributes.Attributes?.RedrivePolicy).toBeUndefined();
  });
});
