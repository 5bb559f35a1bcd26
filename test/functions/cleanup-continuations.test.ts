/**
 * cleanup-table continuations, as deployed (middy + Powertools, settings from the environment),
 * on LanceDB tables in moto's S3 and a moto FIFO queue with the table as message group: a run
 * that stops for time sends its table a continuation and acknowledges its own message, so a table
 * that needs three Lambda lifetimes ends in three runs, two continuations and one completed
 * receipt; a chain past its cap raises the alarm metric instead of continuing.
 *
 * Time is a clock that moves only when the run deletes a table file, one millisecond per key
 * (deletes go one key per request), and reading it never moves it: a budget of K milliseconds
 * is "delete K files, then stop". K is derived from the table (a third of what a dry run would
 * delete, plus one), so the three runs hold however often the pipeline reads the clock and
 * however many other requests it makes; the same on every machine.
 */
import { SendMessageCommand } from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeCleanupRequest, fifoAttributesOf } from "../../functions/shared/cleanup-request.ts";
import type { HandlerMetrics } from "../../functions/shared/observability.ts";
import { createCleanupTableLambda } from "../../functions/cleanup-table/lambda.ts";
import { settingsFromEnvironment } from "../../lib/maintenance/policy.ts";
import { filesRemovedCount } from "../../lib/maintenance/cleanup-report.ts";
import { runCleanup } from "../../lib/maintenance/run-cleanup.ts";
import type { ObjectStore } from "../../lib/store/object-store.ts";
import { openStore } from "../../lib/store/open-store.ts";
import { startMotoServer, type MotoHandle } from "../support/moto.ts";
import { buildLanceDataset, type DatasetStep, type LanceDataset } from "../support/lance-datasets.ts";
import { lambdaContext } from "./lambda-context.ts";
import { listObjects } from "./s3-events.ts";
import { drain, type QueueRef, type SqsHandler } from "./sqs-lambda.ts";

const BUCKET = "continuation-lake";
const WAREHOUSE = `s3://${BUCKET}/warehouse`;
const HISTORY: DatasetStep[] = [
  { op: "create", rows: 6 },
  { op: "overwrite", rows: 5 },
  { op: "append", rows: 2 },
  { op: "overwrite", rows: 4 },
  { op: "append", rows: 2 },
  { op: "overwrite", rows: 3 },
  { op: "append", rows: 2 },
];
/** What the Lambda context says is left; the handler's margin takes all of it but the budget. */
const REMAINING = 600_000;

let moto: MotoHandle;
let queue: QueueRef;
const datasets: Record<string, LanceDataset> = {};

beforeAll(async () => {
  moto = await startMotoServer({ buckets: [BUCKET] });
  for (const name of ["long", "capped"]) {
    datasets[name] = await buildLanceDataset({ dbUri: WAREHOUSE, tableName: name, storageOptions: moto.lanceStorageOptions, steps: HISTORY });
  }
  queue = await moto.createQueue("cleanups.fifo", { attributes: { FifoQueue: "true" } });
  Object.assign(process.env, moto.awsEnv, {
    LAKEWARDEN_TABLE_PREFIXES: JSON.stringify([`${WAREHOUSE}/`]),
    LAKEWARDEN_CLEANUP_QUEUE_URL: queue.queueUrl,
    LAKEWARDEN_OLDER_THAN: "0s",
    LAKEWARDEN_ALLOW_SHORT_RETENTION: "true",
    LAKEWARDEN_RETAIN_VERSIONS: "1",
    POWERTOOLS_LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "CRITICAL",
    POWERTOOLS_METRICS_DISABLED: "true",
  });
});

afterAll(async () => {
  for (const dataset of Object.values(datasets)) dataset.close();
  await moto?.stop();
});

/** Metric values added, by name. */
function recordingMetrics(): HandlerMetrics & { sums: Record<string, number> } {
  const sums: Record<string, number> = {};
  return { sums, addMetric: (name, _unit, value) => void (sums[name] = (sums[name] ?? 0) + value) };
}

/** A clock (milliseconds) that table-file deletes advance, one per key; reads leave it alone. */
interface DeletionClock {
  now: number;
}

/** `store`, and every store scoped from it, moving `clock` by the table files each delete removed. */
function advancingOnDeletes(store: ObjectStore, clock: DeletionClock): ObjectStore {
  return new Proxy(store, {
    get(target, property) {
      if (property === "deleteMany") {
        return async (keys: readonly string[]) => {
          const result = await target.deleteMany(keys);
          // lakewarden's own bookkeeping (progress, intents, lease) is not the work being budgeted.
          clock.now += result.deleted.filter((key) => !target.uriOf(key).includes("/_lakewarden/")).length;
          return result;
        };
      }
      if (property === "scope") return (subpath: string) => advancingOnDeletes(target.scope(subpath), clock);
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** Files one budget may delete so that the table needs exactly three: more than a third, less than a half. */
async function budgetForThreeRuns(name: string): Promise<number> {
  const store = openStore(`${WAREHOUSE}/${name}.lance`);
  const dryRun = await runCleanup(store, { settings: settingsFromEnvironment(process.env), dryRun: true });
  const files = filesRemovedCount(dryRun);
  const budget = Math.floor(files / 3) + 1;
  // Below 5 files no budget gives three runs that each make progress.
  expect(2 * budget, `${name}: ${files} files to delete`).toBeLessThan(files);
  return budget;
}

function handlerFor(metrics: HandlerMetrics, budget: number, overrides: { maxContinuations?: number } = {}): SqsHandler {
  const clock: DeletionClock = { now: Date.now() + 1_000 };
  return createCleanupTableLambda(process.env, {
    openStore: (uri) => advancingOnDeletes(openStore(uri), clock),
    // One key per delete request, one request at a time: the run checks its deadline between keys.
    runCleanup: (store, options) => runCleanup(store, { ...options, deleteBatchSize: 1, deleteConcurrency: 1 }),
    now: () => clock.now,
    stopMarginMs: REMAINING - budget,
    metrics,
    ...overrides,
  }) as unknown as SqsHandler;
}

async function requestCleanup(name: string): Promise<void> {
  const body = encodeCleanupRequest({ table: `${WAREHOUSE}/${name}.lance`, requestedAt: new Date().toISOString() });
  await moto.sqsClient.send(new SendMessageCommand({ QueueUrl: queue.queueUrl, MessageBody: body, ...fifoAttributesOf(body) }));
}

async function receipts(name: string): Promise<Array<{ status: string; budget: { chain_id: string; run_in_chain: number } }>> {
  const s3 = openStore(`${WAREHOUSE}/${name}.lance`);
  const keys = (await listObjects(moto.s3Client, BUCKET, `warehouse/${name}.lance/_lakewarden/runs/`))
    .map((o) => o.key.slice(`warehouse/${name}.lance/`.length))
    .filter((key) => key.endsWith(".json") && !key.includes("/progress/") && !key.endsWith(".intent.json"))
    .sort();
  const out = [];
  for (const key of keys) out.push(JSON.parse(new TextDecoder().decode((await s3.get(key)).body)));
  return out;
}

const versionCount = async (name: string): Promise<number> => (await listObjects(moto.s3Client, BUCKET, `warehouse/${name}.lance/_versions/`)).length;

describe("cleanup-table continuations", () => {
  it("a table that needs three budgets: three runs, two continuations, one receipt marked complete", async () => {
    const metrics = recordingMetrics();
    const handler = handlerFor(metrics, await budgetForThreeRuns("long"));
    await requestCleanup("long");
    const polls = await drain(
      moto.sqsClient,
      queue,
      handler,
      lambdaContext("cleanup-table", () => REMAINING),
    );
    expect(polls).toHaveLength(3);
    // Every message was acknowledged: the continuations, not redeliveries, carried the work.
    expect(polls.flatMap((p) => p.failedMessageIds)).toEqual([]);
    expect(polls.map((p) => JSON.parse(p.event.Records[0]!.body).continuation ?? 0)).toEqual([0, 1, 2]);
    expect(metrics.sums).toMatchObject({ CleanupRuns: 3, CleanupsStoppedForTime: 2, CleanupContinuations: 2 });
    expect(metrics.sums.ContinuationCapReached ?? 0).toBe(0);
    const written = await receipts("long");
    expect(written.map((r) => r.status)).toEqual(["stopped", "stopped", "completed"]);
    expect(new Set(written.map((r) => r.budget.chain_id)).size).toBe(1);
    expect(written.map((r) => r.budget.run_in_chain)).toEqual([1, 2, 3]);
    expect(await versionCount("long")).toBe(1);
    const table = await datasets.long!.db.openTable("long");
    try {
      expect(await table.countRows()).toBe(5);
    } finally {
      table.close();
    }
  });

  it("a chain past its cap stops continuing and raises the ContinuationCapReached metric", async () => {
    const metrics = recordingMetrics();
    const handler = handlerFor(metrics, await budgetForThreeRuns("capped"), { maxContinuations: 1 });
    await requestCleanup("capped");
    const polls = await drain(
      moto.sqsClient,
      queue,
      handler,
      lambdaContext("cleanup-table", () => REMAINING),
    );
    expect(polls).toHaveLength(2);
    expect(polls.flatMap((p) => p.failedMessageIds)).toEqual([]);
    expect(metrics.sums).toMatchObject({ CleanupsStoppedForTime: 2, CleanupContinuations: 1, ContinuationCapReached: 1 });
    expect((await receipts("capped")).map((r) => r.status)).toEqual(["stopped", "stopped"]);
    // The progress stays for the next scheduled request to resume.
    const progress = await listObjects(moto.s3Client, BUCKET, "warehouse/capped.lance/_lakewarden/runs/progress/");
    expect(progress.map((o) => o.key)).toContain("warehouse/capped.lance/_lakewarden/runs/progress/progress.json");
  });
});
