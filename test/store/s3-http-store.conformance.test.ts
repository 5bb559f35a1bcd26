/**
 * The ObjectStore contract for the functions' small S3 client (S3HttpStore) on moto's server,
 * which enforces If-Match / If-None-Match itself: the same suite as S3Store's, the 1,001-key
 * paging and batched deletes included.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll } from "vitest";
import { connectS3Http, S3HttpStore } from "../../lib/store/s3-http-store.ts";
import { startMotoServer, type MotoHandle } from "../support/moto.ts";
import { describeObjectStoreConformance } from "./object-store-conformance.ts";

let moto: MotoHandle;
const BUCKET = "conformance";

beforeAll(async () => {
  moto = await startMotoServer({ buckets: [BUCKET] });
});

afterAll(async () => {
  await moto?.stop();
});

describeObjectStoreConformance("S3HttpStore on moto_server", async () => ({
  store: new S3HttpStore({ connection: connectS3Http({}, moto.awsEnv), bucket: BUCKET, prefix: `run-${randomUUID()}` }),
}));
