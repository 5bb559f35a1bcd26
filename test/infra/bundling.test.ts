/**
 * The one test that really bundles: NodejsFunction runs the local esbuild for each function,
 * as `cdk deploy` would. Then each bundle must hold no LanceDB and no test code, and must load
 * and run on its own under Node 22 (ESM with CommonJS dependencies needs the require shim), and
 * each function's cold start must load no more than issue 27's targets.
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

// Three esbuild runs: about 10 s on a quiet machine, minutes on a loaded one.
beforeAll(async () => {
  outdir = await mkdtemp(join(tmpdir(), "lakewarden-bundling-"));
  bundles = await bundleFunctions(outdir, projectContext());
}, 360_000);

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

  it("ships every chunk its files import, and finds one that is missing", () => {
    for (const bundle of bundles) {
      const dynamic = [...bundle.chunks.values()].flatMap((c) => c.dynamic);
      // schedule-cleanup runs all of its code on every event: one file, nothing loaded later.
      if (bundle.name === "schedule-cleanup") expect([...bundle.chunks.keys()]).toEqual(["index.mjs"]);
      else expect(dynamic.length, `${bundle.name} loads some code on first use`).toBeGreaterThan(0);
      for (const chunk of dynamic) expect(bundle.chunks.has(chunk), `${bundle.name}: ${chunk}`).toBe(true);
    }
    const chunks = new Map(bundles[0]!.chunks);
    chunks.set("index.mjs", { ...chunks.get("index.mjs")!, dynamic: ["gone-ABC123.mjs"] });
    expect(bundleProblems({ ...bundles[0]!, chunks })).toEqual(["on-commit: index.mjs imports ./gone-ABC123.mjs, which the asset does not hold"]);
  });

  it("loads at start only what the function runs for a deployment with no catalog table", () => {
    const startOf = (name: string) => bundles.find((b) => b.name === name)!.startSources.join("\n");
    // Loaded on first use by every function: the Glue SDK, a format's decoders (protobuf, Avro, Parquet), the row readers.
    const rowReaders = ["lib/scan/rows.ts", "lib/scan/arrow-batches.ts", "lib/formats/parquet-rows.ts", "lib/formats/delta/scan-rows.ts", "lib/formats/iceberg/scan-rows.ts"];
    for (const name of ["on-commit", "schedule-cleanup", "cleanup-table"]) {
      // The catalog clients and their SDKs: only a deployment that names a catalog table loads them.
      const catalogs = ["@aws-sdk/client-secrets-manager/", "@aws-sdk/client-s3tables/", "lib/catalog/iceberg-rest.ts", "lib/catalog/catalog-secret.ts", "lib/catalog/s3tables.ts"];
      for (const lazy of [...catalogs, "@aws-sdk/client-glue/", "protobufjs/", "avsc/", "hyparquet/", "lib/formats/lance/manifest-reader.ts", ...rowReaders]) {
        expect(startOf(name), `${name} loads ${lazy} at start`).not.toContain(lazy);
      }
    }
    // The scheduler lists tables and sends messages: no head, no cleanup, no Arrow.
    for (const path of ["apache-arrow/", "lib/maintenance/", "lib/head/", "lib/checkpoint/"]) expect(startOf("schedule-cleanup")).not.toContain(path);
    // S3 and SQS go through the small client (lib/store/s3-http-store.ts): no AWS SDK at start, and
    // schedule-cleanup, which never reads a table, bundles none of it and no format but its folder names.
    for (const name of ["on-commit", "schedule-cleanup", "cleanup-table"]) {
      for (const sdk of ["@aws-sdk/", "@smithy/"]) expect(startOf(name), `${name} loads ${sdk} at start`).not.toContain(sdk);
    }
    const scheduler = bundles.find((b) => b.name === "schedule-cleanup")!;
    for (const path of ["@aws-sdk/", "lib/formats/index.ts", "-format.ts"]) expect(scheduler.sources.join("\n")).not.toContain(path);
    // Issue 27's targets, met (bench/results/bundle-sizes.md: 500, 99 and 592 KiB when they were set as the guard).
    const targets = { "on-commit": 600, "schedule-cleanup": 300, "cleanup-table": 900 };
    for (const bundle of bundles) expect(bundle.startBytes, `${bundle.name} at start`).toBeLessThanOrEqual(targets[bundle.name] * 1024);
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
        {
          messageId: "m-2",
          receiptHandle: "r-2",
          body: "garbage",
          attributes: { ApproximateReceiveCount: "1", SentTimestamp: "0", SenderId: "s", ApproximateFirstReceiveTimestamp: "0" },
          messageAttributes: {},
          md5OfBody: "",
          eventSource: "aws:sqs",
          eventSourceARN: "arn:aws:sqs:us-east-1:123456789012:commits",
          awsRegion: "us-east-1",
        },
      ],
    };
    expect(await onCommit(event, lambdaContext("on-commit"))).toEqual({ batchItemFailures: [{ itemIdentifier: "m-2" }] });
  });
});
