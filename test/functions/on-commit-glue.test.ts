/**
 * on-commit on Iceberg tables whose commit pointer the AWS Glue Data Catalog owns: the
 * athena-example fixture (Athena wrote it; its metadata files are catalog-named NNNNN-uuid) with
 * two more commits appended in the test, in moto's S3, events sent through a moto SQS queue,
 * LAKEWARDEN_GLUE_TABLES naming the Glue entries. The Glue client is the real SDK the Lambda
 * builds from its environment (AWS_ENDPOINT_URL_GLUE points it at moto's Glue, through the
 * recording pass-through of test/support/glue-server.ts).
 * The handler's clock is the test's: a pause while it waits for the catalog moves that clock on
 * (and, in one test, is when the catalog takes the commit), so no test waits for real time.
 */
import { randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { GetObjectCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOnCommitLambda } from "../../functions/on-commit/lambda.ts";
import type { HandlerLog, HandlerMetrics } from "../../functions/shared/observability.ts";
import { readStoredHead } from "../../lib/head/stored-head.ts";
import { openStore } from "../../lib/store/open-store.ts";
import { startGlueServer, type GlueServer } from "../support/glue-server.ts";
import { startMotoServer, type MotoHandle } from "../support/moto.ts";
import { appendCatalogCommits, athenaCatalogFiles } from "../support/catalog-commits.ts";
import { copyIcebergFixture, icebirdLiveFiles, listFiles, type FixtureCopy } from "../support/iceberg-fixtures.ts";
import { lambdaContext } from "./lambda-context.ts";
import { listObjects, s3EventBody, type ObjectCreated } from "./s3-events.ts";
import { pollOnce, sendBodies, type SqsHandler } from "./sqs-lambda.ts";

const BUCKET = "glue-commits";
const ATHENA_CATALOG_FILES = athenaCatalogFiles();
const ORDERS = "warehouse/athena_orders";
const REFUSED = "warehouse/athena_refused";
/** One of the deployment's tables, but named in no catalog setting. */
const UNCONFIGURED = "warehouse/athena_unconfigured";
const { ACCEPTED, SECOND, THIRD } = ATHENA_CATALOG_FILES;

let moto: MotoHandle;
let glue: GlueServer;
let copy: FixtureCopy;
let handler: SqsHandler;
let clock = 0;
/** What the handler does while it pauses for the catalog (besides moving the clock on). */
let duringPause: () => Promise<void> | void = () => {};
const pauses: number[] = [];
const logged: { level: string; message: string; attributes: Record<string, unknown> }[] = [];
const metrics: { name: string; value: number }[] = [];
const savedEnv = { ...process.env };

const uri = (root: string) => `s3://${BUCKET}/${root}`;
const metadataUri = (root: string, name: string) => `${uri(root)}/metadata/${name}`;
const recorder: HandlerLog = {
  info: (message, ...attributes) => void logged.push({ level: "info", message, attributes: Object.assign({}, ...attributes) }),
  warn: (message, ...attributes) => void logged.push({ level: "warn", message, attributes: Object.assign({}, ...attributes) }),
  error: (message, ...attributes) => void logged.push({ level: "error", message, attributes: Object.assign({}, ...attributes) }),
};
const metricRecorder: HandlerMetrics = { addMetric: (name, _unit, value) => void metrics.push({ name, value }) };

beforeAll(async () => {
  moto = await startMotoServer({ buckets: [BUCKET] });
  glue = await startGlueServer(moto);
  Object.assign(process.env, moto.awsEnv, {
    AWS_ENDPOINT_URL_GLUE: glue.endpoint,
    LAKEWARDEN_TABLE_PREFIXES: JSON.stringify([uri("warehouse/")]),
    LAKEWARDEN_TABLE_ROOTS: JSON.stringify([uri(ORDERS), uri(REFUSED), uri(UNCONFIGURED)]),
    LAKEWARDEN_GLUE_TABLES: JSON.stringify({
      [uri(ORDERS)]: { database: "sales", table: "orders" },
      [uri(REFUSED)]: { database: "sales", table: "refused" },
    }),
    POWERTOOLS_LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "CRITICAL",
    POWERTOOLS_METRICS_DISABLED: "true",
  });
  handler = createOnCommitLambda(process.env, {
    log: recorder,
    metrics: metricRecorder,
    now: () => clock,
    sleep: async (ms) => {
      pauses.push(ms);
      clock += ms;
      await duringPause();
    },
  }) as unknown as SqsHandler;
  copy = await copyIcebergFixture("athena-example");
  await appendCatalogCommits(copy.dir, ATHENA_CATALOG_FILES);
  for (const root of [ORDERS, REFUSED, UNCONFIGURED]) {
    for (const key of await listFiles(copy.dir)) {
      await moto.s3Client.send(new PutObjectCommand({ Bucket: BUCKET, Key: `${root}/${key}`, Body: await readFile(join(copy.dir, key)) }));
    }
  }
});

afterAll(async () => {
  process.env = savedEnv;
  await copy?.remove();
  await glue?.stop();
  await moto?.stop();
});

async function object(root: string, name: string): Promise<ObjectCreated> {
  const found = (await listObjects(moto.s3Client, BUCKET, `${root}/metadata/${name}`))[0];
  if (!found) throw new Error(`no ${name} under ${root}`);
  return found;
}

/** Sends one event per metadata file (created just now, as S3 would say) and runs the Lambda on them: the failed message ids. */
async function commitEvents(root: string, names: string[]): Promise<string[]> {
  const files = await Promise.all(names.map((name) => object(root, name)));
  clock = Date.now();
  const queue = await moto.createQueue(`glue-commits-${randomUUID().slice(0, 8)}`);
  await sendBodies(
    moto.sqsClient,
    queue,
    files.map((file) => s3EventBody([{ ...file, lastModified: new Date(clock) }])),
  );
  const poll = await pollOnce(moto.sqsClient, queue, handler, lambdaContext("on-commit"));
  expect(poll!.event.Records).toHaveLength(names.length);
  return poll!.failedMessageIds;
}

/** The stored head's version file and its raw metadata bytes, or null without a head. */
async function head(root: string): Promise<{ key: string; raw: Buffer; version: number } | null> {
  const stored = await readStoredHead(openStore(uri(root)));
  if (stored.state === "missing") return null;
  if (stored.state !== "readable") throw new Error(`unreadable head: ${stored.problem}`);
  return { key: stored.content.snapshot.versionFile.key, raw: Buffer.from(stored.content.snapshot.raw), version: stored.content.tableVersion };
}

async function storedBytes(root: string, key: string): Promise<Buffer> {
  const got = await moto.s3Client.send(new GetObjectCommand({ Bucket: BUCKET, Key: `${root}/${key}` }));
  return Buffer.from(await got.Body!.transformToByteArray());
}

/** Every object under the root, key → bytes (hex). */
async function objects(root: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const o of await listObjects(moto.s3Client, BUCKET, `${root}/`)) out.set(o.key, (await storedBytes(root, o.key.slice(root.length + 1))).toString("hex"));
  return out;
}

const getTables = (from: number, table: string) => glue.requests.slice(from).filter((r) => r.target === "AWSGlue.GetTable" && r.body.Name === table);
const notCurrentLines = (from: number) => logged.slice(from).filter((l) => l.message.startsWith("not the catalog's current metadata"));

describe("on-commit on an Iceberg table whose pointer the Glue Data Catalog owns", () => {
  it("writes the head of the file the catalog names when an event names a newer file the catalog never takes, and logs that file", async () => {
    await glue.setTable("sales", "orders", { tableType: "EXTERNAL_TABLE", parameters: { table_type: "ICEBERG", metadata_location: metadataUri(ORDERS, ACCEPTED) } });
    // The appended commits are real to an independent reader: the newest file is a table state, just not the catalog's.
    expect((await icebirdLiveFiles(copy.dir, SECOND)).length).toBe((await icebirdLiveFiles(copy.dir, ACCEPTED)).length + 1);
    const [asked, from] = [glue.requests.length, logged.length];
    pauses.length = 0;

    expect(await commitEvents(ORDERS, [ACCEPTED, SECOND])).toEqual([]);

    const written = await head(ORDERS);
    expect(written?.key).toBe(`metadata/${ACCEPTED}`);
    expect(written?.raw.equals(await storedBytes(ORDERS, `metadata/${ACCEPTED}`))).toBe(true);
    // It asked the catalog again while the newer file was young enough to be a commit in flight, then gave up on it.
    expect(pauses.length).toBeGreaterThan(0);
    expect(pauses.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(20_000);
    expect(getTables(asked, "orders")).toHaveLength(pauses.length + 1);
    expect(notCurrentLines(from)).toEqual([
      expect.objectContaining({
        level: "warn",
        attributes: expect.objectContaining({ table: uri(ORDERS), object: metadataUri(ORDERS, SECOND), newerThanCatalog: true, pointer: metadataUri(ORDERS, ACCEPTED) }),
      }),
    ]);
    expect(logged.slice(from).find((l) => l.message === "head written")?.attributes).toMatchObject({
      table: uri(ORDERS),
      version: 1,
      catalogTable: 'Glue table "orders" in database "sales"',
    });
  });

  it("an event for a file older than the catalog's pointer is a late one: no wait, the head stays", async () => {
    const before = await head(ORDERS);
    const [asked, from] = [glue.requests.length, logged.length];
    pauses.length = 0;
    await glue.setTable("sales", "orders", { parameters: { table_type: "ICEBERG", metadata_location: metadataUri(ORDERS, ACCEPTED) } });
    expect(await commitEvents(ORDERS, ["00000-eedf51e6-8c09-463b-8850-844ee6ec1de0.metadata.json"])).toEqual([]);
    expect(pauses).toEqual([]);
    expect(getTables(asked, "orders")).toHaveLength(1);
    expect(notCurrentLines(from)).toEqual([expect.objectContaining({ level: "info", attributes: expect.objectContaining({ newerThanCatalog: false }) })]);
    expect(logged.slice(from).find((l) => l.message === "head already current")).toBeDefined();
    expect(await head(ORDERS)).toEqual(before);
  });

  it("when the catalog moves forward, the next event writes the newer head", async () => {
    await glue.setTable("sales", "orders", { parameters: { table_type: "ICEBERG", metadata_location: metadataUri(ORDERS, SECOND) } });
    const from = logged.length;
    pauses.length = 0;
    expect(await commitEvents(ORDERS, [SECOND])).toEqual([]);
    const written = await head(ORDERS);
    expect(written?.key).toBe(`metadata/${SECOND}`);
    expect(written?.raw.equals(await storedBytes(ORDERS, `metadata/${SECOND}`))).toBe(true);
    expect(written?.version).toBe(2);
    expect(pauses).toEqual([]);
    expect(notCurrentLines(from)).toEqual([]);
  });

  it("an event that arrives before the catalog's swap waits for it: the head names the commit once the catalog takes it", async () => {
    await glue.setTable("sales", "orders", { parameters: { table_type: "ICEBERG", metadata_location: metadataUri(ORDERS, SECOND) } });
    const [asked, from] = [glue.requests.length, logged.length];
    pauses.length = 0;
    duringPause = () => glue.setTable("sales", "orders", { parameters: { table_type: "ICEBERG", metadata_location: metadataUri(ORDERS, THIRD) } });
    try {
      expect(await commitEvents(ORDERS, [THIRD])).toEqual([]);
    } finally {
      duringPause = () => {};
    }
    expect(pauses).toHaveLength(1);
    expect(getTables(asked, "orders")).toHaveLength(2);
    expect((await head(ORDERS))?.key).toBe(`metadata/${THIRD}`);
    expect(notCurrentLines(from)).toEqual([]);
  });

  const refusals: [string, () => Promise<void>, RegExp][] = [
    [
      "GetTable answers EntityNotFoundException",
      () => glue.dropTable("sales", "refused"),
      /^GlueLookupError: Glue table "refused" in database "sales": not found in the Glue Data Catalog \(EntityNotFoundException: Table refused not found\.\)/,
    ],
    [
      "GetTable answers AccessDeniedException",
      async () => {
        await glue.setTable("sales", "refused", { parameters: { table_type: "ICEBERG", metadata_location: metadataUri(REFUSED, ACCEPTED) } });
        glue.failTable("sales", "refused", "AccessDeniedException");
      },
      /^GlueLookupError: Glue table "refused" in database "sales": access denied \(AccessDeniedException: .*\): the role needs glue:GetTable/,
    ],
    [
      "the Glue table is not Iceberg",
      async () => {
        glue.failTable("sales", "refused", null);
        await glue.setTable("sales", "refused", { tableType: "EXTERNAL_TABLE", parameters: { classification: "parquet" } });
      },
      /^CatalogTableError: Glue table "refused" in database "sales": is not a table lakewarden .* through a catalog \(iceberg: has no table_type parameter/,
    ],
    [
      "its metadata_location is under another table's root",
      () => glue.setTable("sales", "refused", { parameters: { table_type: "ICEBERG", metadata_location: metadataUri(ORDERS, THIRD) } }),
      /^CatalogTableError: Glue table "refused" in database "sales": metadata_location ".*athena_orders\/metadata\/00003-.*" is not under the table root, s3:\/\/glue-commits\/warehouse\/athena_refused/,
    ],
  ];

  it.each(refusals)("writes no head when %s: one line, a HeadWriteFailures metric, the message failed, the table and _lakewarden/ unchanged", async (_, arrange, line) => {
    await arrange();
    const before = await objects(REFUSED);
    const [from, metricsFrom] = [logged.length, metrics.length];
    const failed = await commitEvents(REFUSED, [THIRD]);
    expect(failed).toHaveLength(1);
    const errors = logged.slice(from).filter((l) => l.level === "error");
    expect(errors).toHaveLength(1);
    expect(errors[0]!.message).toBe("head not written");
    expect(errors[0]!.attributes.table).toBe(uri(REFUSED));
    expect(String(errors[0]!.attributes.error).split("\n")).toHaveLength(1);
    expect(String(errors[0]!.attributes.error)).toMatch(line);
    expect(metrics.slice(metricsFrom)).toEqual([{ name: "HeadWriteFailures", value: 1 }]);
    expect(await objects(REFUSED)).toEqual(before);
    expect([...before.keys()].filter((key) => key.includes("/_lakewarden/"))).toEqual([]);
  });

  it("acknowledges a catalog-named table no catalog setting names: one warning naming the settings, no head, no retry", async () => {
    const before = await objects(UNCONFIGURED);
    const [from, metricsFrom] = [logged.length, metrics.length];
    // Retrying would be refused the same way until the deployment names the table's catalog: not failed, so never dead-lettered.
    expect(await commitEvents(UNCONFIGURED, [SECOND, THIRD])).toEqual([]);
    const lines = logged.slice(from);
    expect(lines).toEqual([
      {
        level: "warn",
        message: "catalog-owned table with no catalog configured: no head",
        attributes: expect.objectContaining({ table: uri(UNCONFIGURED), messages: 2 }),
      },
    ]);
    expect(String(lines[0]!.attributes.reason)).toContain(`metadata files are named NNNNN-uuid (newest metadata/${THIRD})`);
    expect(String(lines[0]!.attributes.reason)).toContain("glueTables or restCatalogTables");
    expect(metrics.slice(metricsFrom)).toEqual([]);
    expect(await objects(UNCONFIGURED)).toEqual(before);
    expect([...before.keys()].filter((key) => key.includes("/_lakewarden/"))).toEqual([]);
  });
});
