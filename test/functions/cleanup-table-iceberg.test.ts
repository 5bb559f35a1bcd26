/**
 * cleanup-table as deployed (settings from the environment, none of lakewarden's retention set:
 * the deployment's default) on an Iceberg table in moto's S3: it expires exactly what the
 * table's per-ref snapshot retention expires. The table is a spark-bunnies copy with a tag, an
 * expired tag and an expired branch, uploaded as is; after the run it is downloaded and checked
 * with icebird, independently of the code under test.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { GetObjectCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeCleanupRequest } from "../../functions/shared/cleanup-request.ts";
import { createCleanupTableLambda } from "../../functions/cleanup-table/lambda.ts";
import { icebergFormat } from "../../lib/formats/iceberg/iceberg-format.ts";
import { DAY_MS } from "../../lib/formats/iceberg/retention.ts";
import { openStore } from "../../lib/store/open-store.ts";
import { readTimeline } from "../../lib/versions/timeline.ts";
import { startMotoServer, type MotoHandle } from "../support/moto.ts";
import { copyIcebergFixture, icebirdLiveFiles, listFiles, rewriteMetadata, snapshotsByTextPass, type FixtureCopy } from "../support/iceberg-fixtures.ts";
import { buildHistory, currentMetadataName, everySnapshotReads, reach, refNames } from "../support/iceberg-histories.ts";
import { lambdaContext } from "./lambda-context.ts";
import { listObjects } from "./s3-events.ts";
import { pollOnce, sendBodies, type QueueRef, type SqsHandler } from "./sqs-lambda.ts";

const BUCKET = "iceberg-lake";
const ROOT = "warehouse/bunnies";
let moto: MotoHandle;
let queue: QueueRef;
let handler: SqsHandler;
let copy: FixtureCopy;
let downloaded: string | null = null;

beforeAll(async () => {
  moto = await startMotoServer({ buckets: [BUCKET] });
  queue = await moto.createQueue("iceberg-cleanups", { dlq: { maxReceiveCount: 2 } });
  for (const key of ["LAKEWARDEN_OLDER_THAN", "LAKEWARDEN_RETAIN_VERSIONS", "LAKEWARDEN_PROTECT_BEFORE"]) delete process.env[key];
  Object.assign(process.env, moto.awsEnv, {
    LAKEWARDEN_TABLE_PREFIXES: JSON.stringify([`s3://${BUCKET}/warehouse/`]),
    POWERTOOLS_LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "CRITICAL",
    POWERTOOLS_METRICS_DISABLED: "true",
  });
  handler = createCleanupTableLambda(process.env) as unknown as SqsHandler;
  copy = await copyIcebergFixture("spark-bunnies");
});

afterAll(async () => {
  await copy?.remove();
  if (downloaded) await rm(downloaded, { recursive: true, force: true });
  await moto?.stop();
});

async function download(into: string): Promise<void> {
  for (const object of await listObjects(moto.s3Client, BUCKET, `${ROOT}/`)) {
    const key = object.key.slice(ROOT.length + 1);
    const body = await moto.s3Client.send(new GetObjectCommand({ Bucket: BUCKET, Key: object.key }));
    await mkdir(dirname(join(into, key)), { recursive: true });
    await writeFile(join(into, key), await body.Body!.transformToByteArray());
  }
}

describe("cleanup-table on an Iceberg table in S3", () => {
  it("expires what the table's snapshot retention expires, drops the expired refs, and leaves every remaining snapshot whole", async () => {
    const now = Date.now();
    const { ids, metadata } = await buildHistory(
      copy.dir,
      {
        commits: [
          { name: "x1", ageMs: 7 * DAY_MS, branch: "stale", parent: "@s3", refs: { stale: { type: "branch", "max-ref-age-ms": 2 * DAY_MS } } },
          { name: "x2", ageMs: 3 * DAY_MS, branch: "stale" },
        ],
        refs: { first: { "snapshot-id": "@s1", type: "tag" }, old: { "snapshot-id": "@s2", type: "tag", "max-ref-age-ms": DAY_MS } },
      },
      now,
    );
    const nameOf = new Map(Object.entries(ids).map(([name, id]) => [id, name]));
    const before = await snapshotsByTextPass(join(copy.dir, "metadata", metadata));
    const remain = ["s1", "s3", "x2"];
    const reached = await Promise.all(before.map((_, i) => reach(copy.dir, metadata, i)));
    const kept = new Set(before.flatMap((s, i) => (remain.includes(nameOf.get(s.id)!) ? reached[i]! : [])));
    const onlyExpired = [...new Set(reached.flat())].filter((k) => !kept.has(k)).sort();
    expect(onlyExpired.length).toBeGreaterThan(0);
    const liveBefore = await icebirdLiveFiles(copy.dir, metadata);
    const filesBefore = await listFiles(copy.dir);
    for (const key of filesBefore) {
      await moto.s3Client.send(new PutObjectCommand({ Bucket: BUCKET, Key: `${ROOT}/${key}`, Body: await readFile(join(copy.dir, key)) }));
    }

    await sendBodies(moto.sqsClient, queue, [encodeCleanupRequest({ table: `s3://${BUCKET}/${ROOT}`, requestedAt: new Date().toISOString() })]);
    const poll = await pollOnce(
      moto.sqsClient,
      queue,
      handler,
      lambdaContext("cleanup-table", () => 15 * 60_000),
    );
    expect(poll!.failedMessageIds).toEqual([]);

    downloaded = await mkdtemp(join(tmpdir(), "lw-iceberg-lambda-"));
    await download(downloaded);
    const after = await currentMetadataName(downloaded);
    expect(after).not.toBe(metadata);
    const remaining = await snapshotsByTextPass(join(downloaded, "metadata", after));
    expect(remaining.map((s) => nameOf.get(s.id)).sort()).toEqual(remain);
    expect(await refNames(downloaded, after)).toEqual(["first", "main"]);
    expect(await icebirdLiveFiles(downloaded, after)).toEqual(liveBefore);
    await everySnapshotReads(downloaded);
    const filesAfter = new Set((await listFiles(downloaded)).filter((k) => !k.startsWith("_lakewarden/")));
    expect(filesBefore.filter((k) => !filesAfter.has(k)).sort()).toEqual(onlyExpired);
    expect([...filesAfter].filter((k) => !filesBefore.includes(k))).toEqual([`metadata/${after}`]);

    const timeline = await readTimeline(openStore(`s3://${BUCKET}/${ROOT}`), icebergFormat);
    expect(timeline.records.map((r) => [nameOf.get(r.version_id!), r.is_cleaned_up]).sort()).toEqual(
      before.map((s) => [nameOf.get(s.id), !remain.includes(nameOf.get(s.id)!)]).sort(),
    );
  });

  it("leaves a table with gc.enabled=false alone and acknowledges the request (a retry would be refused the same way)", async () => {
    const optOut = await copyIcebergFixture("spark-bunnies");
    try {
      await rewriteMetadata(optOut.dir, (json) => {
        json.properties = { ...(json.properties as object), "gc.enabled": "false", "history.expire.max-snapshot-age-ms": "1" } as never;
      });
      const root = "warehouse/no-gc";
      const files = await listFiles(optOut.dir);
      for (const key of files) await moto.s3Client.send(new PutObjectCommand({ Bucket: BUCKET, Key: `${root}/${key}`, Body: await readFile(join(optOut.dir, key)) }));
      await sendBodies(moto.sqsClient, queue, [encodeCleanupRequest({ table: `s3://${BUCKET}/${root}`, requestedAt: new Date().toISOString() })]);
      const poll = await pollOnce(
        moto.sqsClient,
        queue,
        handler,
        lambdaContext("cleanup-table", () => 15 * 60_000),
      );
      expect(poll!.failedMessageIds).toEqual([]);
      const after = (await listObjects(moto.s3Client, BUCKET, `${root}/`)).map((o) => o.key.slice(root.length + 1)).filter((k) => !k.startsWith("_lakewarden/"));
      expect(after.sort()).toEqual([...files].sort());
    } finally {
      await optOut.remove();
    }
  });
});
