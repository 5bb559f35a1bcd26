import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LocalStore } from "../../lib/store/local-store.ts";
import { describeObjectStoreConformance } from "./object-store-conformance.ts";

describeObjectStoreConformance("LocalStore", async () => {
  const dir = await mkdtemp(join(tmpdir(), "lakewarden-local-"));
  return { store: new LocalStore(join(dir, "root")), cleanup: () => rm(dir, { recursive: true, force: true }) };
});
