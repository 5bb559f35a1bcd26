/**
 * LAKEWARDEN_MIN_WORK_PER_RUN as cleanup-table reads it: the objects of new work a run does
 * before its time budget (the Lambda's remaining time less the stop margin) may stop it. A
 * spark-bunnies copy with an old stray file in moto's S3; the Lambda context leaves a budget of
 * 1 ms. With the default the run stops for time; with a minimum above the table's whole work it
 * finishes and the stray is gone.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { HeadObjectCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_STOP_MARGIN_MS } from "../../functions/cleanup-table/cleanup-table.ts";
import { createCleanupTableLambda } from "../../functions/cleanup-table/lambda.ts";
import { encodeCleanupRequest } from "../../functions/shared/cleanup-request.ts";
import type { HandlerLog } from "../../functions/shared/observability.ts";
import { DAY_MS } from "../../lib/formats/iceberg/retention.ts";
import { startMotoServer, type MotoHandle } from "../support/moto.ts";
import { copyIcebergFixture, listFiles, type FixtureCopy } from "../support/iceberg-fixtures.ts";
import { lambdaContext } from "./lambda-context.ts";
import { pollOnce, sendBodies, type SqsHandler } from "./sqs-lambda.ts";

const BUCKET = "min-work-lake";
const STRAY = "data/stray-orphan.parquet";
let moto: MotoHandle;
let copy: FixtureCopy;
const savedEnv = { ...process.env };
const logged: { message: string; attributes: Record<string, unknown> }[] = [];
const log: HandlerLog = {
  info: (message, ...attributes) => void logged.push({ message, attributes: Object.assign({}, ...attributes) }),
  warn: (message, ...attributes) => void logged.push({ message, attributes: Object.assign({}, ...attributes) }),
  error: (message, ...attributes) => void logged.push({ message, attributes: Object.assign({}, ...attributes) }),
};

beforeAll(async () => {
  moto = await startMotoServer({ buckets: [BUCKET] });
  for (const key of ["LAKEWARDEN_OLDER_THAN", "LAKEWARDEN_RETAIN_VERSIONS", "LAKEWARDEN_PROTECT_BEFORE", "LAKEWARDEN_SAFETY_WINDOW", "LAKEWARDEN_CLEANUP_QUEUE_URL"])
    delete process.env[key];
  Object.assign(process.env, moto.awsEnv, {
    LAKEWARDEN_TABLE_PREFIXES: JSON.stringify([`s3://${BUCKET}/warehouse/`]),
    POWERTOOLS_LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "CRITICAL",
    POWERTOOLS_METRICS_DISABLED: "true",
  });
  copy = await copyIcebergFixture("spark-bunnies");
  for (const root of ["warehouse/default", "warehouse/minimum"]) {
    for (const key of await listFiles(copy.dir)) {
      await moto.s3Client.send(new PutObjectCommand({ Bucket: BUCKET, Key: `${root}/${key}`, Body: await readFile(join(copy.dir, key)) }));
    }
    await moto.s3Client.send(new PutObjectCommand({ Bucket: BUCKET, Key: `${root}/${STRAY}`, Body: "no snapshot names this" }));
  }
});

afterAll(async () => {
  process.env = savedEnv;
  await copy?.remove();
  await moto?.stop();
});

async function exists(key: string): Promise<boolean> {
  return moto.s3Client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: key })).then(
    () => true,
    () => false,
  );
}

/** One message for `root` through a handler whose Lambda context leaves a 1 ms budget. */
async function runWith(env: NodeJS.ProcessEnv, root: string): Promise<{ failed: number; status: unknown }> {
  const handler = createCleanupTableLambda(env, {
    // Uploads are stamped now; a month on, the stray is old enough to go.
    now: () => Date.now() + 30 * DAY_MS,
    log,
  }) as unknown as SqsHandler;
  const queue = await moto.createQueue(`min-work-${root.split("/").pop()}`);
  await sendBodies(moto.sqsClient, queue, [encodeCleanupRequest({ table: `s3://${BUCKET}/${root}`, requestedAt: new Date().toISOString() })]);
  const from = logged.length;
  const poll = await pollOnce(
    moto.sqsClient,
    queue,
    handler,
    lambdaContext("cleanup-table", () => DEFAULT_STOP_MARGIN_MS + 1),
  );
  const run = logged.slice(from).find((l) => l.message.startsWith("cleanup "));
  return { failed: poll!.failedMessageIds.length, status: run?.attributes.status };
}

describe("cleanup-table with LAKEWARDEN_MIN_WORK_PER_RUN", () => {
  it("the default lets a 1 ms budget stop the run; a minimum above the table's work lets it finish", async () => {
    const stopped = await runWith(process.env, "warehouse/default");
    // No queue to continue on: the stopped run's message fails and SQS would redeliver it.
    expect(stopped).toEqual({ failed: 1, status: "stopped" });
    expect(await exists(`warehouse/default/${STRAY}`)).toBe(true);

    const finished = await runWith({ ...process.env, LAKEWARDEN_MIN_WORK_PER_RUN: "1000000" }, "warehouse/minimum");
    expect(finished).toEqual({ failed: 0, status: "completed" });
    expect(await exists(`warehouse/minimum/${STRAY}`)).toBe(false);
  });

  it("refuses a value that is not a whole number of at least 1, naming the variable", () => {
    for (const value of ["0", "some", "2.5"]) {
      expect(() => createCleanupTableLambda({ ...process.env, LAKEWARDEN_MIN_WORK_PER_RUN: value })).toThrow(
        `environment variable LAKEWARDEN_MIN_WORK_PER_RUN: "${value}" is not a whole number ≥ 1`,
      );
    }
  });
});
