/** The head on S3 (fauxqs behind the S3-semantics wrapper): the same request budgets as on disk. */
import { randomUUID } from "node:crypto";
import { readFile, readdir } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lanceFormat } from "../../lib/formats/lance/lance-format.ts";
import { openTable } from "../../lib/head/loader.ts";
import { writeTableHead } from "../../lib/head/write-table-head.ts";
import { S3SemanticsStore } from "../support/s3-semantics-store.ts";
import { S3Store } from "../../lib/store/s3-store.ts";
import { startFauxqsServer } from "../support/fauxqs.ts";
import type { FauxqsHandle } from "../support/fauxqs.ts";
import { buildLanceDataset, makeTempDir, removeDir } from "../support/lance-datasets.ts";
import type { LanceDataset } from "../support/lance-datasets.ts";

const BUCKET = "head-loader";
const NO_REQUESTS = { get: 0, head: 0, list: 0, put: 0, delete: 0 };

let dir: string;
let dataset: LanceDataset;
let fauxqs: FauxqsHandle;
let prefix: string;

const s3 = () => new S3SemanticsStore(new S3Store({ client: fauxqs.s3Client, bucket: BUCKET, prefix, endpoint: fauxqs.endpoint }));

beforeAll(async () => {
  dir = await makeTempDir("lw-head-s3-");
  dataset = await buildLanceDataset({ dbUri: dir });
  fauxqs = await startFauxqsServer({ buckets: [BUCKET] });
  prefix = `lake/${randomUUID()}/t.lance`;
  const upload = s3();
  const entries = await readdir(dataset.tableUri, { recursive: true, withFileTypes: true });
  for (const entry of entries.filter((e) => e.isFile())) {
    const key = relative(dataset.tableUri, join(entry.parentPath, entry.name)).split(sep).join("/");
    await upload.put(key, await readFile(join(entry.parentPath, entry.name)));
  }
});
afterAll(async () => {
  dataset?.close();
  await fauxqs?.stop();
  await removeDir(dir);
});

describe("head on S3", () => {
  it("cold load of a current head is one GET plus one LIST; warm check one LIST", async () => {
    const writer = s3();
    const written = await writeTableHead(writer, { checkpointVersion: null });
    expect(written.action).toBe("created");
    expect(written.built?.footers).toBeGreaterThan(0);

    const store = s3();
    let clock = 0;
    const table = await openTable(store, { now: () => clock });
    expect(store.stats.snapshot()).toEqual({ ...NO_REQUESTS, get: 1, list: 1 });
    const state = table.current()!;
    expect(state).toMatchObject({ source: "head", version: dataset.written.at(-1)!.version });
    const manifest = await lanceFormat.readSnapshot(store, (await lanceFormat.latestVersionFile(store))!);
    expect(state.snapshot.liveFiles).toEqual(manifest.liveFiles);
    expect(state.snapshot.schema).toEqual(manifest.schema);

    store.stats.reset();
    clock += 999;
    await table.latest();
    expect(store.stats.snapshot()).toEqual(NO_REQUESTS);
    clock += 1;
    await table.latest();
    expect(store.stats.snapshot()).toEqual({ ...NO_REQUESTS, list: 1 });
  });
});
