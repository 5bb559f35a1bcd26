import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FaultInjectingStore } from "../support/fault-injecting-store.ts";
import { LocalStore } from "../../lib/store/local-store.ts";
import { withS3ConditionalSemantics } from "../support/s3-semantics-store.ts";
import { describeObjectStoreConformance } from "./object-store-conformance.ts";

async function freshLocalStore(): Promise<{ store: LocalStore; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), "lakewarden-local-"));
  return { store: new LocalStore(join(dir, "root")), cleanup: () => rm(dir, { recursive: true, force: true }) };
}

describeObjectStoreConformance("LocalStore", freshLocalStore);

// The wrappers must be transparent when they have nothing to add: same answers, same counts.
describeObjectStoreConformance("LocalStore inside the S3-semantics and (idle) fault-injecting wrappers", async () => {
  const { store, cleanup } = await freshLocalStore();
  return { store: new FaultInjectingStore(withS3ConditionalSemantics(store)), cleanup };
});
