/**
 * The commit Lambda's handler on Delta commits: an S3 object-created event for
 * `_delta_log/{v:020}.json` writes the table's head for that version; events for the log's
 * other `.json` files (UUID checkpoints, compactions) name no commit and are acknowledged.
 * The handler runs in-process on an SQS event; the bucket is a fixture copy on disk.
 */
import { stat } from "node:fs/promises";
import { join } from "node:path";
import type { SQSEvent } from "aws-lambda";
import { describe, expect, it } from "vitest";
import { createOnCommitHandler } from "../../../functions/on-commit/on-commit.ts";
import { readStoredHead } from "../../../lib/head/stored-head.ts";
import { LocalStore } from "../../../lib/store/local-store.ts";
import { copyFixture } from "../../support/fixtures.ts";
import { lambdaContext } from "../../functions/lambda-context.ts";
import { s3EventBody } from "../../functions/s3-events.ts";

const BUCKET = "lake-bucket";
const ROOT = "lake/orders";

describe("on-commit with Delta tables", () => {
  it("writes the head for the newest commit named; other log .json files are not commits", async () => {
    const dir = await copyFixture("delta", "checkpoint-v2-table");
    const store = new LocalStore(dir);
    const objects = await Promise.all(
      ["_delta_log/00000000000000000008.json", "_delta_log/00000000000000000009.json", "_delta_log/00000000000000000008.checkpoint.e5ac4dc4-be27-4106-8a55-609707487f83.json"].map(
        async (key) => {
          const info = await stat(join(dir, key));
          return { bucket: BUCKET, key: `${ROOT}/${key}`, size: info.size, eTag: "0123", lastModified: info.mtime };
        },
      ),
    );
    const event: SQSEvent = {
      Records: objects.map((object, i) => ({
        messageId: `m${i}`,
        receiptHandle: `r${i}`,
        body: s3EventBody([object]),
        attributes: { ApproximateReceiveCount: "1", SentTimestamp: "0", SenderId: "s", ApproximateFirstReceiveTimestamp: "0" },
        messageAttributes: {},
        md5OfBody: "",
        eventSource: "aws:sqs",
        eventSourceARN: "arn:aws:sqs:us-east-1:123456789012:commits",
        awsRegion: "us-east-1",
      })),
    };
    const logs: string[] = [];
    const handler = createOnCommitHandler({
      scopes: { tables: [`s3://${BUCKET}/${ROOT}`], prefixes: [] },
      openStore: (uri) => {
        if (uri !== `s3://${BUCKET}/${ROOT}`) throw new Error(`unexpected table ${uri}`);
        return store;
      },
      log: { info: (m) => void logs.push(m), warn: (m) => void logs.push(m), error: (m) => void logs.push(m) },
      metrics: { addMetric: () => undefined },
    });
    const response = await handler(event, lambdaContext("on-commit"));
    expect(response.batchItemFailures).toEqual([]);
    const head = await readStoredHead(store);
    expect(head.state).toBe("readable");
    if (head.state === "readable") {
      expect(head.content.format).toBe("delta");
      expect(head.content.tableVersion).toBe(9);
    }
    // One head for the two commits (the newest, 9); the UUID checkpoint's event is acknowledged, not a commit.
    expect(logs.sort()).toEqual(["event ignored: not a new version file", "head written"]);
  });
});
