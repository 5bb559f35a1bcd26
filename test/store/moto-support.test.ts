/** moto's server itself (test/support/moto.ts): LanceDB writes through it, S3 enforces conditions, notifications reach SQS, Glue answers. */
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { ReceiveMessageCommand } from "@aws-sdk/client-sqs";
import { CreateDatabaseCommand, CreateTableCommand, GetTableCommand } from "@aws-sdk/client-glue";
import * as lancedb from "@lancedb/lancedb";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { decodeS3EventKey } from "../../functions/shared/s3-event.ts";
import { S3Store } from "../../lib/store/s3-store.ts";
import { startMotoServer, type MotoHandle } from "../support/moto.ts";

let moto: MotoHandle;
let startedInMs = 0;

beforeAll(async () => {
  const started = Date.now();
  moto = await startMotoServer({ buckets: ["lake"] });
  startedInMs = Date.now() - started;
});

afterAll(async () => {
  await moto?.stop();
});

describe("moto test server", () => {
  test("listens on loopback only, on a port of its own", () => {
    expect(moto.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(startedInMs).toBeGreaterThan(0);
  });

  test("LanceDB writes and reads a table on it with lanceStorageOptions", async () => {
    const db = await lancedb.connect("s3://lake/db", { storageOptions: moto.lanceStorageOptions });
    const table = await db.createTable("t", [{ id: 1 }, { id: 2 }]);
    await table.add([{ id: 3 }]);
    expect(await table.countRows()).toBe(3);
    table.close();
    db.close();
    const store = new S3Store({ client: moto.s3Client, bucket: "lake", prefix: "db/t.lance", endpoint: moto.endpoint });
    const keys: string[] = [];
    for await (const info of store.list("_versions/")) keys.push(info.key);
    expect(keys.filter((k) => k.endsWith(".manifest"))).toHaveLength(2);
  });

  test("the server itself refuses a create-only put of an existing key and an If-Match of another ETag (412)", async () => {
    const first = await moto.s3Client.send(new PutObjectCommand({ Bucket: "lake", Key: "raw", Body: "one", IfNoneMatch: "*" }));
    await expect(moto.s3Client.send(new PutObjectCommand({ Bucket: "lake", Key: "raw", Body: "two", IfNoneMatch: "*" }))).rejects.toMatchObject({
      $metadata: { httpStatusCode: 412 },
    });
    await expect(moto.s3Client.send(new PutObjectCommand({ Bucket: "lake", Key: "raw", Body: "two", IfMatch: '"0123"' }))).rejects.toMatchObject({
      $metadata: { httpStatusCode: 412 },
    });
    await moto.s3Client.send(new PutObjectCommand({ Bucket: "lake", Key: "raw", Body: "two", IfMatch: first.ETag }));
  });

  test("a bucket notification sends an ObjectCreated event of a matching key to the queue, and none for others", async () => {
    const queue = await moto.createQueue("events");
    await moto.notifyQueue("lake", queue.queueArn, [{ prefix: "t/_versions/", suffix: ".manifest" }]);
    await moto.s3Client.send(new PutObjectCommand({ Bucket: "lake", Key: "t/data/x.lance", Body: "d" }));
    await moto.s3Client.send(new PutObjectCommand({ Bucket: "lake", Key: "t/_versions/1.manifest", Body: "m" }));
    const received = await moto.sqsClient.send(new ReceiveMessageCommand({ QueueUrl: queue.queueUrl, MaxNumberOfMessages: 10 }));
    const records = (received.Messages ?? []).flatMap((m) => (JSON.parse(m.Body ?? "{}") as { Records?: { eventName: string; s3: { object: { key: string } } }[] }).Records ?? []);
    // moto form-encodes the whole key, "/" too (S3 leaves "/" alone): the handler's decoding takes both.
    expect(records.map((r) => [r.eventName, decodeS3EventKey(r.s3.object.key, "test")])).toEqual([["ObjectCreated:Put", "t/_versions/1.manifest"]]);
  });

  test("Glue keeps a database and a table entry", async () => {
    await moto.glueClient.send(new CreateDatabaseCommand({ DatabaseInput: { Name: "db" } }));
    await moto.glueClient.send(
      new CreateTableCommand({
        DatabaseName: "db",
        TableInput: { Name: "t", TableType: "EXTERNAL_TABLE", Parameters: { table_type: "ICEBERG", metadata_location: "s3://lake/t/metadata/1.json" } },
      }),
    );
    const got = await moto.glueClient.send(new GetTableCommand({ DatabaseName: "db", Name: "t" }));
    expect(got.Table?.Parameters).toMatchObject({ metadata_location: "s3://lake/t/metadata/1.json" });
  });
});
