/**
 * readVersionRecords against LanceDB's listVersions() on tables LanceDB wrote to S3
 * (the fauxqs emulator, started here), in both version-file naming schemes.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lanceFormat } from "../../lib/formats/lance/lance-format.ts";
import { MANIFEST_SUFFIX_READ, readManifestFile } from "../../lib/formats/lance/manifest-file.ts";
import { openStore } from "../../lib/store/index.ts";
import { readVersionRecords } from "../../lib/versions/read-version-records.ts";
import { startFauxqsServer, type FauxqsHandle } from "../support/fauxqs.ts";
import { buildLanceDataset, type LanceDataset, type ManifestNaming } from "../support/lance-datasets.ts";
import { expectRecordsMatchLanceDb } from "./lancedb-comparison.ts";

const BUCKET = "lake";
let fauxqs: FauxqsHandle;

beforeAll(async () => {
  fauxqs = await startFauxqsServer({ buckets: [BUCKET] });
});
afterAll(async () => {
  await fauxqs?.stop();
});

function s3Store(tableUri: string) {
  return openStore(tableUri, {
    s3: { endpoint: fauxqs.endpoint, region: fauxqs.region, credentials: fauxqs.credentials },
  });
}

describe.each<ManifestNaming>(["v2", "v1"])("readVersionRecords on an S3 %s table", (naming) => {
  let dataset: LanceDataset;

  beforeAll(async () => {
    dataset = await buildLanceDataset({
      dbUri: `s3://${BUCKET}/db-${naming}`,
      naming,
      storageOptions: fauxqs.lanceStorageOptions,
    });
  });
  afterAll(() => dataset?.close());

  it("matches LanceDB's listVersions() field by field, tags included", async () => {
    const store = s3Store(dataset.tableUri);
    const records = await readVersionRecords(store, lanceFormat);
    await expectRecordsMatchLanceDb(records, dataset.table);
    expect(records.map((r) => r.operation_type)).toEqual(dataset.written.map((w) => w.operation));
    expect(records.filter((r) => r.is_tagged).length).toBe(new Set(Object.values(dataset.tags)).size);
  });

  it("finds the latest version (one LIST for V2 names)", async () => {
    const store = s3Store(dataset.tableUri);
    const latest = await lanceFormat.latestVersionFile(store);
    expect(latest?.version).toBe(dataset.written.at(-1)!.version);
    if (naming === "v2") expect(store.stats.snapshot()).toMatchObject({ list: 1, get: 0, head: 0 });
  });

  it("resolves a given version by HEAD in either scheme", async () => {
    const store = s3Store(dataset.tableUri);
    const file = await lanceFormat.findVersionFile(store, 2);
    expect(file.version).toBe(2);
    expect(file.key).toBe(naming === "v2" ? "_versions/18446744073709551613.manifest" : "_versions/2.manifest");
    expect(store.stats.snapshot().head).toBe(naming === "v2" ? 1 : 2);
  });
});

describe("reading manifests from S3", () => {
  it("reads a manifest larger than the first 64 KiB read: suffix GET, then the rest", async () => {
    const big = await buildLanceDataset({
      dbUri: `s3://${BUCKET}/db-big`,
      steps: [
        { op: "create", rows: 5 },
        { op: "append", rows: 5 },
      ],
      schemaMetadata: { padding: "p".repeat(100_000) },
      storageOptions: fauxqs.lanceStorageOptions,
    });
    try {
      const store = s3Store(big.tableUri);
      const [file] = await lanceFormat.listVersionFiles(store);
      expect(file!.size).toBeGreaterThan(MANIFEST_SUFFIX_READ);
      store.stats.reset();
      const read = await readManifestFile(store, file!.key);
      expect(read.bytes.length).toBe(file!.size);
      expect(store.stats.snapshot().get).toBe(2);
      await expectRecordsMatchLanceDb(await readVersionRecords(store, lanceFormat), big.table);
    } finally {
      big.close();
    }
  });

  it("reads a small manifest of unknown size even where a long suffix range is refused", async () => {
    // S3 clamps a suffix range to the object; fauxqs answers 416 instead.
    const dataset = await buildLanceDataset({
      dbUri: `s3://${BUCKET}/db-small`,
      steps: [{ op: "create", rows: 3 }],
      storageOptions: fauxqs.lanceStorageOptions,
    });
    try {
      const store = s3Store(dataset.tableUri);
      const [file] = await lanceFormat.listVersionFiles(store);
      const read = await readManifestFile(store, file!.key);
      expect(read.bytes.length).toBe(file!.size);
    } finally {
      dataset.close();
    }
  });
});
