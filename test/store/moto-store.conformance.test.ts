/**
 * The ObjectStore contract on moto's server: S3Store with no wrapper, so every conditional-write
 * answer (412, 404 for If-Match on a missing key, one winner among racing writers) is the server's.
 * The same conditional tests run against fauxqs with no wrapper, which ignores the conditions, and
 * are expected to fail there: they test the server, not a wrapper's imitation of it.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll } from "vitest";
import { S3Store } from "../../lib/store/s3-store.ts";
import { startFauxqsServer, type FauxqsHandle } from "../support/fauxqs.ts";
import { startMotoServer, type MotoHandle } from "../support/moto.ts";
import { describeConditionalPutConformance, describeObjectStoreConformance } from "./object-store-conformance.ts";

let moto: MotoHandle;
let fauxqs: FauxqsHandle;
const BUCKET = "conformance";

beforeAll(async () => {
  [moto, fauxqs] = await Promise.all([startMotoServer({ buckets: [BUCKET] }), startFauxqsServer({ buckets: [BUCKET] })]);
});

afterAll(async () => {
  await Promise.all([moto?.stop(), fauxqs?.stop()]);
});

// The 1,001-key tests are left to fauxqs and local disk (s3-store / local-store conformance): ~30 s here.
describeObjectStoreConformance(
  "S3Store on moto_server",
  async () => ({ store: new S3Store({ client: moto.s3Client, bucket: BUCKET, prefix: `run-${randomUUID()}`, endpoint: moto.endpoint }) }),
  { manyKeys: false },
);

describeConditionalPutConformance(
  "S3Store on fauxqs without the conditional wrapper (ignores the conditions: every test must fail)",
  async () => ({ store: new S3Store({ client: fauxqs.s3Client, bucket: BUCKET, prefix: `run-${randomUUID()}`, endpoint: fauxqs.endpoint }) }),
  { expectFailure: true },
);
