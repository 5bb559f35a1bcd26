import { randomUUID } from "node:crypto";
import { afterAll, beforeAll } from "vitest";
import { RequestStats } from "../../lib/store/object-store.ts";
import { openStore } from "../../lib/store/open-store.ts";
import { S3Store } from "../../lib/store/s3-store.ts";
import { withS3ConditionalSemantics } from "../support/s3-semantics-store.ts";
import { startFauxqsServer } from "../support/fauxqs.ts";
import type { FauxqsHandle } from "../support/fauxqs.ts";
import { describeObjectStoreConformance } from "./object-store-conformance.ts";

let fauxqs: FauxqsHandle;
const BUCKET = "conformance";

beforeAll(async () => {
  fauxqs = await startFauxqsServer({ buckets: [BUCKET] });
});

afterAll(async () => {
  await fauxqs?.stop();
});

// fauxqs ignores conditional headers: the wrapper answers as S3 documents.
describeObjectStoreConformance("S3Store on fauxqs (with S3 conditional semantics)", async () => ({
  store: withS3ConditionalSemantics(new S3Store({ client: fauxqs.s3Client, bucket: BUCKET, prefix: `run-${randomUUID()}`, endpoint: fauxqs.endpoint })),
}));

// A real endpoint: LAKEWARDEN_TEST_S3_URI=s3://bucket/prefix plus the standard AWS environment.
const realUri = process.env.LAKEWARDEN_TEST_S3_URI;
describeObjectStoreConformance(
  "S3Store on LAKEWARDEN_TEST_S3_URI",
  async () => {
    const root = openStore(`${realUri?.replace(/\/+$/, "")}/lakewarden-conformance-${randomUUID()}`, { stats: new RequestStats() });
    return {
      store: root,
      cleanup: async () => {
        const keys: string[] = [];
        for await (const info of root.list("")) keys.push(info.key);
        await root.deleteMany(keys);
      },
    };
  },
  realUri ? { losersMayConflict: true } : { skipReason: "set LAKEWARDEN_TEST_S3_URI=s3://bucket/prefix and AWS credentials to run against real S3" },
);
