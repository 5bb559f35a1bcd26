/**
 * The one test that really bundles: NodejsFunction runs the local esbuild for each function,
 * as `cdk deploy` would. Then each bundle must hold no LanceDB and no test code, and must load
 * and run on its own under Node 22 (ESM with CommonJS dependencies needs the require shim).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { SQSBatchResponse, SQSEvent } from "aws-lambda";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bundleFunctions, bundleProblems, type FunctionBundle } from "../../infra/bundle-report.ts";
import { lambdaContext } from "../functions/lambda-context.ts";
import { projectContext } from "./cdk-app.ts";

let outdir: string;
let bundles: FunctionBundle[];

beforeAll(async () => {
  outdir = await mkdtemp(join(tmpdir(), "lakewarden-bundling-"));
  bundles = await bundleFunctions(outdir, projectContext());
});

afterAll(async () => {
  await rm(outdir, { recursive: true, force: true });
});

describe("function bundles", () => {
  it("bundles every function, with lakewarden's own code and no LanceDB or test code", () => {
    expect(bundles.map((b) => b.name)).toEqual(["on-commit", "schedule-cleanup", "cleanup-table"]);
    for (const bundle of bundles) {
      expect(bundleProblems(bundle)).toEqual([]);
      expect(bundle.sources).toContain(`functions/${bundle.name}/index.ts`);
      expect(bundle.bundleBytes).toBeGreaterThan(0);
    }
  });

  it("finds forbidden inputs when they are there", () => {
    const fake: FunctionBundle = { ...bundles[0]!, sources: ["node_modules/@lancedb/lancedb/dist/index.js", "test/support/fauxqs.ts"] };
    expect(bundleProblems(fake)).toHaveLength(2);
  });

  it("loads each bundle on its own, and the on-commit bundle answers an S3 test event", async () => {
    Object.assign(process.env, {
      LAKEWARDEN_TABLE_PREFIXES: JSON.stringify(["s3://bundle-lake/lake/"]),
      LAKEWARDEN_CLEANUP_QUEUE_URL: "https://sqs.us-east-1.amazonaws.com/123456789012/cleanup",
      AWS_REGION: "us-east-1",
      POWERTOOLS_LOG_LEVEL: "CRITICAL",
      POWERTOOLS_METRICS_DISABLED: "true",
    });
    const handlers: Record<string, unknown> = {};
    for (const bundle of bundles) {
      const module = (await import(pathToFileURL(join(bundle.directory, "index.mjs")).href)) as { handler: unknown };
      expect(typeof module.handler, bundle.name).toBe("function");
      handlers[bundle.name] = module.handler;
    }
    const onCommit = handlers["on-commit"] as (event: SQSEvent, context: unknown) => Promise<SQSBatchResponse>;
    const testEvent = JSON.stringify({ Service: "Amazon S3", Event: "s3:TestEvent", Time: "2026-03-01T00:00:00Z", Bucket: "bundle-lake" });
    const event: SQSEvent = {
      Records: [
        {
          messageId: "m-1",
          receiptHandle: "r-1",
          body: testEvent,
          attributes: { ApproximateReceiveCount: "1", SentTimestamp: "0", SenderId: "s", ApproximateFirstReceiveTimestamp: "0" },
          messageAttributes: {},
          md5OfBody: "",
          eventSource: "aws:sqs",
          eventSourceARN: "arn:aws:sqs:us-east-1:123456789012:commits",
          awsRegion: "us-east-1",
        },
        { messageId: "m-2", receiptHandle: "r-2", body: "garbage", attributes: { ApproximateReceiveCount: "1", SentTimestamp: "0", SenderId: "s", ApproximateFirstReceiveTimestamp: "0" }, messageAttributes: {}, md5OfBody: "", eventSource: "aws:sqs", eventSourceARN: "arn:aws:sqs:us-east-1:123456789012:commits", awsRegion: "us-east-1" },
      ],
    };
    expect(await onCommit(event, lambdaContext("on-commit"))).toEqual({ batchItemFailures: [{ itemIdentifier: "m-2" }] });
  });
});
