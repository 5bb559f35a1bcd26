/**
 * Where a version's transaction comes from: inline in the manifest file, else the
 * `_transactions/` file the manifest names; a missing transaction file leaves the
 * transaction fields empty rather than failing the version.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lanceFormat } from "../../../lib/formats/lance/lance-format.ts";
import { readLanceVersion } from "../../../lib/formats/lance/read-version.ts";
import { versionFileName } from "../../../lib/formats/lance/version-names.ts";
import { openStore, type ObjectStore } from "../../../lib/store/index.ts";
import { withManifest } from "../../support/manifest-surgery.ts";
import { buildLanceDataset, makeTempDir, removeDir, type LanceDataset } from "../../support/lance-datasets.ts";

let dir: string;
let dataset: LanceDataset;
let store: ObjectStore;

beforeAll(async () => {
  dir = await makeTempDir("lw-read-version-");
  dataset = await buildLanceDataset({
    dbUri: join(dir, "db"),
    steps: [
      { op: "create", rows: 6 },
      { op: "delete", where: "id = 1" },
    ],
  });
  store = openStore(dataset.tableUri);
});
afterAll(async () => {
  dataset?.close();
  await removeDir(dir);
});

/** Writes version 2's manifest again as version 3, rewritten by `mutate`, and reads it. */
async function readRewritten(mutate: Parameters<typeof withManifest>[2]) {
  const source = join(dataset.tableUri, "_versions", versionFileName(2, "v2"));
  const key = `_versions/${versionFileName(3, "v2")}`;
  const bytes = withManifest(new Uint8Array(await readFile(source)), source, (manifest) => {
    manifest.version = "3";
    mutate(manifest);
  });
  await store.put(key, bytes);
  try {
    return await readLanceVersion(store, key);
  } finally {
    await store.deleteMany([key]);
  }
}

describe("readLanceVersion", () => {
  it("takes the inline transaction without reading the transaction file", async () => {
    const [, file] = await lanceFormat.listVersionFiles(store);
    store.stats.reset();
    const { transaction, manifest } = await readLanceVersion(store, file!.key, file!.size);
    expect(transaction).toMatchObject({ readVersion: 1, operation: "Delete" });
    expect(manifest.transactionFile).toBe(`1-${transaction!.uuid}.txn`);
    expect(store.stats.snapshot().get).toBe(1);
  });

  it("reads the transaction file when the transaction is not inline", async () => {
    const inline = (await readLanceVersion(store, `_versions/${versionFileName(2, "v2")}`)).transaction;
    const version = await readRewritten((manifest) => {
      delete manifest.transaction_section;
    });
    expect(version.transaction).toEqual(inline);
  });

  it("leaves the transaction empty when its file is gone", async () => {
    const version = await readRewritten((manifest) => {
      delete manifest.transaction_section;
      manifest.transaction_file = "1-00000000-0000-0000-0000-000000000000.txn";
    });
    expect(version.transaction).toBeNull();
    expect(version.manifest.version).toBe(3);
  });
});
