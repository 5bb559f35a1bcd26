/**
 * cleanup-table on an Iceberg table whose commit pointer the AWS Glue Data Catalog owns (the
 * athena-example fixture: Athena wrote it, its metadata files are catalog-named NNNNN-uuid), in
 * moto's S3, with the deployment's LAKEWARDEN_GLUE_TABLES naming its Glue entry. The Glue client
 * is the real SDK the Lambda builds from its environment (AWS_ENDPOINT_URL_GLUE points it at
 * moto's Glue, through the recording pass-through of test/support/glue-server.ts). The result is
 * read back with icebird, independently of the code under test; every refusal leaves the table's
 * objects byte-identical.
 */
import { createHash, randomUUID } from "node:crypto";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { GetObjectCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCleanupTableLambda } from "../../functions/cleanup-table/lambda.ts";
import { encodeCleanupRequest } from "../../functions/shared/cleanup-request.ts";
import type { HandlerLog } from "../../functions/shared/observability.ts";
import { DAY_MS } from "../../lib/formats/iceberg/retention.ts";
import { startGlueServer, type GlueServer } from "../support/glue-server.ts";
import { startMotoServer, type MotoHandle } from "../support/moto.ts";
import { copyIcebergFixture, fileExists, icebirdLiveFiles, listFiles, type FixtureCopy } from "../support/iceberg-fixtures.ts";
import { reach } from "../support/iceberg-histories.ts";
import { lambdaContext } from "./lambda-context.ts";
import { listObjects } from "./s3-events.ts";
import { pollOnce, sendBodies, type SqsHandler } from "./sqs-lambda.ts";

const BUCKET = "glue-lake";
const CLEANED = "warehouse/athena_orders";
const REFUSED = "warehouse/athena_refused";
const CURRENT = "00001-aaf0d033-d06b-43c7-be60-67f83abd4aca.metadata.json";
/** A commit written and never swapped in by the catalog: newer than the catalog's pointer. */
const UNACCEPTED = `00002-${randomUUID()}.metadata.json`;
const STRAYS = ["data/sNoYhg/stray-orphan.parquet", "metadata/stray-m0.avro"];

let moto: MotoHandle;
let glue: GlueServer;
let copy: FixtureCopy;
let scratch: string;
let handler: SqsHandler;
const logged: { level: string; message: string; attributes: Record<string, unknown> }[] = [];
const savedEnv = { ...process.env };

const uri = (root: string) => `s3://${BUCKET}/${root}`;
const recorder: HandlerLog = {
  info: (message, ...attributes) => void logged.push({ level: "info", message, attributes: Object.assign({}, ...attributes) }),
  warn: (message, ...attributes) => void logged.push({ level: "warn", message, attributes: Object.assign({}, ...attributes) }),
  error: (message, ...attributes) => void logged.push({ level: "error", message, attributes: Object.assign({}, ...attributes) }),
};

beforeAll(async () => {
  moto = await startMotoServer({ buckets: [BUCKET] });
  glue = await startGlueServer(moto);
  for (const key of ["LAKEWARDEN_OLDER_THAN", "LAKEWARDEN_RETAIN_VERSIONS", "LAKEWARDEN_PROTECT_BEFORE", "LAKEWARDEN_SAFETY_WINDOW"]) delete process.env[key];
  Object.assign(process.env, moto.awsEnv, {
    AWS_ENDPOINT_URL_GLUE: glue.endpoint,
    LAKEWARDEN_TABLE_PREFIXES: JSON.stringify([uri("warehouse/")]),
    LAKEWARDEN_TABLE_ROOTS: JSON.stringify([uri(CLEANED), uri(REFUSED)]),
    LAKEWARDEN_GLUE_TABLES: JSON.stringify({
      [uri(CLEANED)]: { database: "sales", table: "orders" },
      [uri(REFUSED)]: { database: "sales", table: "refused" },
    }),
    POWERTOOLS_LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "CRITICAL",
    POWERTOOLS_METRICS_DISABLED: "true",
  });
  handler = createCleanupTableLambda(process.env, {
    // S3 stamps every upload now; the run's clock is a month on, so the strays are old enough to go.
    now: () => Date.now() + 30 * DAY_MS,
    log: recorder,
  }) as unknown as SqsHandler;
  copy = await copyIcebergFixture("athena-example");
  await writeFile(join(copy.dir, "metadata", UNACCEPTED), await readFile(join(copy.dir, "metadata", CURRENT)));
  await writeFile(join(copy.dir, STRAYS[0]!), "not a file any snapshot names");
  await writeFile(join(copy.dir, STRAYS[1]!), await readFile(join(copy.dir, "metadata/3d82674b-df1e-49b5-a7a9-05b61567065a-m0.avro")));
  for (const root of [CLEANED, REFUSED]) {
    for (const key of await listFiles(copy.dir)) {
      await moto.s3Client.send(new PutObjectCommand({ Bucket: BUCKET, Key: `${root}/${key}`, Body: await readFile(join(copy.dir, key)) }));
    }
  }
  scratch = await mkdtemp(join(tmpdir(), "lw-glue-lambda-"));
});

afterAll(async () => {
  process.env = savedEnv;
  await copy?.remove();
  if (scratch) await rm(scratch, { recursive: true, force: true });
  await glue?.stop();
  await moto?.stop();
});

async function bodies(root: string): Promise<Map<string, Uint8Array>> {
  const out = new Map<string, Uint8Array>();
  for (const object of await listObjects(moto.s3Client, BUCKET, `${root}/`)) {
    const body = await moto.s3Client.send(new GetObjectCommand({ Bucket: BUCKET, Key: object.key }));
    out.set(object.key.slice(root.length + 1), await body.Body!.transformToByteArray());
  }
  return out;
}

/** Every object under the table root, key → SHA-256 of its bytes. */
async function objects(root: string): Promise<Map<string, string>> {
  return new Map([...(await bodies(root))].map(([key, bytes]) => [key, createHash("sha256").update(bytes).digest("hex")]));
}

const tableObjects = async (root: string) => new Map([...(await objects(root))].filter(([key]) => !key.startsWith("_lakewarden/")));

async function download(root: string, into: string): Promise<void> {
  for (const [key, bytes] of await bodies(root)) {
    await mkdir(dirname(join(into, key)), { recursive: true });
    await writeFile(join(into, key), bytes);
  }
}

async function cleanOnce(root: string): Promise<string[]> {
  const queue = await moto.createQueue(`glue-${randomUUID().slice(0, 8)}`);
  await sendBodies(moto.sqsClient, queue, [encodeCleanupRequest({ table: uri(root), requestedAt: new Date().toISOString() })]);
  const poll = await pollOnce(
    moto.sqsClient,
    queue,
    handler,
    lambdaContext("cleanup-table", () => 15 * 60_000),
  );
  return poll!.failedMessageIds;
}

describe("cleanup-table on an Iceberg table whose pointer the Glue Data Catalog owns", () => {
  it("reads metadata_location with GetTable right before the run and cleans the table at it: orphans go, the catalog's snapshot and a newer unaccepted commit stay", async () => {
    await glue.setTable("sales", "orders", {
      tableType: "EXTERNAL_TABLE",
      parameters: {
        table_type: "ICEBERG",
        metadata_location: `${uri(CLEANED)}/metadata/${CURRENT}`,
        previous_metadata_location: `${uri(CLEANED)}/metadata/00000-eedf51e6-8c09-463b-8850-844ee6ec1de0.metadata.json`,
      },
      location: uri(CLEANED),
    });
    const liveBefore = await icebirdLiveFiles(copy.dir, CURRENT);
    expect(liveBefore.length).toBeGreaterThan(0);
    const before = await objects(CLEANED);
    const asked = glue.requests.length;

    expect(await cleanOnce(CLEANED)).toEqual([]);

    expect(glue.requests.slice(asked)).toEqual([{ target: "AWSGlue.GetTable", body: { DatabaseName: "sales", Name: "orders" }, signedFor: "glue" }]);
    expect(logged.find((l) => l.message === "commit pointer read from the catalog")?.attributes).toMatchObject({
      table: uri(CLEANED),
      pointer: `${uri(CLEANED)}/metadata/${CURRENT}`,
    });
    const after = await objects(CLEANED);
    const tableKeys = (m: Map<string, string>) => [...m.keys()].filter((k) => !k.startsWith("_lakewarden/")).sort();
    expect(
      tableKeys(before)
        .filter((k) => !after.has(k))
        .sort(),
    ).toEqual([...STRAYS].sort());
    expect(tableKeys(after).filter((k) => !before.has(k))).toEqual([]);
    for (const key of tableKeys(after)) expect(after.get(key), key).toBe(before.get(key));
    expect(after.has(`metadata/${UNACCEPTED}`)).toBe(true);

    const downloaded = join(scratch, "cleaned");
    await download(CLEANED, downloaded);
    expect(await icebirdLiveFiles(downloaded, CURRENT)).toEqual(liveBefore);
    for (const key of await reach(downloaded, CURRENT, 0)) expect(await fileExists(downloaded, key), key).toBe(true);
  });

  const refusals: [string, () => Promise<void>, RegExp][] = [
    [
      "the Glue table is not Iceberg",
      () => glue.setTable("sales", "refused", { tableType: "EXTERNAL_TABLE", parameters: { classification: "parquet" }, location: uri(REFUSED) }),
      /^Glue table "refused" in database "sales": is not a table lakewarden reads through a catalog \(iceberg: has no table_type parameter, not ICEBERG \(table type EXTERNAL_TABLE\)\); nothing read, written or deleted/,
    ],
    [
      "its metadata_location is under another table's root",
      () => glue.setTable("sales", "refused", { parameters: { table_type: "ICEBERG", metadata_location: `${uri(CLEANED)}/metadata/${CURRENT}` } }),
      /^Glue table "refused" in database "sales": metadata_location ".*athena_orders\/metadata\/00001-.*" is not under the table root, s3:\/\/glue-lake\/warehouse\/athena_refused/,
    ],
    [
      "GetTable answers EntityNotFoundException",
      () => glue.dropTable("sales", "refused"),
      /^Glue table "refused" in database "sales": not found in the Glue Data Catalog \(EntityNotFoundException: Table refused not found\.\); nothing read, written or deleted$/,
    ],
    [
      "GetTable answers AccessDeniedException",
      async () => {
        await glue.setTable("sales", "refused", { parameters: { table_type: "ICEBERG", metadata_location: `${uri(REFUSED)}/metadata/${CURRENT}` } });
        glue.failTable("sales", "refused", "AccessDeniedException");
      },
      /^Glue table "refused" in database "sales": access denied \(AccessDeniedException: .*glue:GetTable.*\): the role needs glue:GetTable on the catalog, the database and the table; nothing read, written or deleted$/,
    ],
  ];

  it("without a Glue entry the same table is refused as any catalog-named table is (the newest file may be a commit the catalog never took)", async () => {
    const { LAKEWARDEN_GLUE_TABLES: _, ...env } = process.env;
    const withoutGlue = createCleanupTableLambda(env, { now: () => Date.now() + 30 * DAY_MS, log: recorder }) as unknown as SqsHandler;
    const before = await objects(REFUSED);
    const from = logged.length;
    const queue = await moto.createQueue(`glue-${randomUUID().slice(0, 8)}`);
    await sendBodies(moto.sqsClient, queue, [encodeCleanupRequest({ table: uri(REFUSED), requestedAt: new Date().toISOString() })]);
    const poll = await pollOnce(
      moto.sqsClient,
      queue,
      withoutGlue,
      lambdaContext("cleanup-table", () => 15 * 60_000),
    );
    expect(poll!.failedMessageIds).toHaveLength(1);
    const errors = logged.slice(from).filter((l) => l.level === "error");
    expect(errors).toHaveLength(1);
    expect(String(errors[0]!.attributes.error)).toContain(`metadata files are named NNNNN-uuid (newest metadata/${UNACCEPTED})`);
    // That refusal comes from the run itself, which keeps its lease and receipt under _lakewarden/: the table is untouched.
    expect(await tableObjects(REFUSED)).toEqual(new Map([...before].filter(([key]) => !key.startsWith("_lakewarden/"))));
  });

  it("a metadata_location under the root that names no file stops the run before anything is deleted", async () => {
    const missing = `${uri(REFUSED)}/metadata/00009-${randomUUID()}.metadata.json`;
    glue.failTable("sales", "refused", null);
    await glue.setTable("sales", "refused", { parameters: { table_type: "ICEBERG", metadata_location: missing } });
    const before = await tableObjects(REFUSED);
    const from = logged.length;
    expect(await cleanOnce(REFUSED)).toHaveLength(1);
    const errors = logged.slice(from).filter((l) => l.level === "error");
    expect(errors).toHaveLength(1);
    expect(String(errors[0]!.attributes.error)).toBe(`NotFoundError: ${missing}: not found`);
    expect(await tableObjects(REFUSED)).toEqual(before);
  });

  it.each(refusals)("refuses with one line, the message failed and the table byte-identical, when %s", async (_, arrange, line) => {
    await arrange();
    const before = await objects(REFUSED);
    const from = logged.length;
    expect(await cleanOnce(REFUSED)).toHaveLength(1);
    const errors = logged.slice(from).filter((l) => l.level === "error");
    expect(errors).toHaveLength(1);
    expect(errors[0]!.attributes.table).toBe(uri(REFUSED));
    const summary = String(errors[0]!.attributes.error);
    expect(summary.split("\n")).toHaveLength(1);
    expect(summary.replace(/^\w+: /, "")).toMatch(line);
    expect(await objects(REFUSED)).toEqual(before);
  });
});
