/**
 * What `lakewarden versions` costs in requests, with a current head or none, and that the
 * saving never changes the answer: one LIST covers the checkpoints, `_refs/` and `_versions/`
 * (`_transactions/` rolled up into one entry), so the newest checkpoint is the one read, as a
 * separate listing of each folder would find. Real LanceDB tables, on local disk and on S3
 * (fauxqs); counts come from the stores' own counters and from `--stats`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lanceFormat } from "../../lib/formats/lance/lance-format.ts";
import { readHistory } from "../../lib/head/timeline-source.ts";
import { writeTableHead } from "../../lib/head/write-table-head.ts";
import { runCheckpoint } from "../../lib/maintenance/run-checkpoint.ts";
import { LocalStore } from "../../lib/store/local-store.ts";
import type { ObjectStore } from "../../lib/store/object-store.ts";
import { openStore } from "../../lib/store/open-store.ts";
import { buildLanceDataset, makeTempDir, removeDir } from "../support/lance-datasets.ts";
import type { LanceDataset } from "../support/lance-datasets.ts";
import { startFauxqsServer, type FauxqsHandle } from "../support/fauxqs.ts";
import { lastLine, runLakewarden } from "../cli/run-executable.ts";

const NO_REQUESTS = { get: 0, head: 0, list: 0, put: 0, delete: 0 };
/**
 * A current head: the head's prefix and the newest checkpoint; one LIST for the checkpoints,
 * the refs and the version files (from `_lakewarden/checkpoints/` to `_versions/`, with
 * `_transactions/` rolled up into one entry).
 */
const CURRENT_HEAD_COST = { ...NO_REQUESTS, get: 2, list: 1 };

/** The same history, the usual way: checkpoints listed, the newest read. */
async function listedHistory(store: ObjectStore) {
  return readHistory(store, { format: lanceFormat });
}

describe("versions with a current head, local disk", () => {
  let dir: string;
  let dataset: LanceDataset;

  beforeAll(async () => {
    dir = await makeTempDir("lw-versions-requests-");
    dataset = await buildLanceDataset({
      dbUri: dir,
      steps: [
        { op: "create", rows: 4 },
        { op: "append", rows: 2 },
        { op: "delete", where: "id = 1" },
      ],
    });
  });
  afterAll(async () => {
    dataset?.close();
    await removeDir(dir);
  });

  it("2 GETs and 1 LIST (checkpoints, refs and version files in one listing)", async () => {
    const store = new LocalStore(dataset.tableUri);
    await runCheckpoint(store);
    await dataset.apply([
      { op: "append", rows: 1 },
      { op: "append", rows: 1 },
    ]);
    await writeTableHead(store, {});
    store.stats.reset();
    const timeline = await readHistory(store, { checkpointFromHead: true });
    expect(store.stats.snapshot()).toEqual(CURRENT_HEAD_COST);
    expect(timeline.sources).toEqual({ archive: 0, checkpoint: 3, recent: 2, manifests: 0 });
    const listed = await listedHistory(new LocalStore(dataset.tableUri));
    expect(timeline.records).toEqual(listed.records);
    expect(timeline.checkpoint?.key).toBe(listed.checkpoint?.key);

    // The command as a user runs it says the same.
    const result = await runLakewarden(["versions", dataset.tableUri, "--json", "--stats"]);
    expect(result.code).toBe(0);
    expect(JSON.parse(lastLine(result.stderr)).requests).toEqual(CURRENT_HEAD_COST);
    expect((JSON.parse(result.stdout) as { version: number }[]).map((r) => r.version)).toEqual(listed.records.map((r) => r.version));
  });

  it("in a .lance folder, the version files are listed while the head is read", async () => {
    const store = new LocalStore(dataset.tableUri);
    let listed!: () => void;
    const versionsListed = new Promise<void>((resolve) => (listed = resolve));
    // Any listing that covers `_versions/`.
    const covers = (prefix: string) => lanceFormat.versionsPrefix.startsWith(prefix);
    const list = store.list.bind(store);
    store.list = (prefix, options) => {
      if (covers(prefix)) listed();
      return list(prefix, options);
    };
    const listKeys = store.listKeys.bind(store);
    store.listKeys = (prefix, options) => {
      if (covers(prefix)) listed();
      return listKeys(prefix, options);
    };
    const get = store.get.bind(store);
    // The head's read answers only once the version files are being listed: a reader that listed after it would never finish.
    store.get = async (key, range) => {
      if (key === "_lakewarden/head") await versionsListed;
      return get(key, range);
    };
    store.stats.reset();
    const timeline = await readHistory(store, { checkpointFromHead: true });
    expect(store.stats.snapshot()).toEqual(CURRENT_HEAD_COST);
    expect(timeline.records).toEqual((await listedHistory(new LocalStore(dataset.tableUri))).records);
  });

  it("a checkpoint written after the head, of its version, is the one read", async () => {
    const store = new LocalStore(dataset.tableUri);
    await runCheckpoint(store);
    store.stats.reset();
    const timeline = await readHistory(store, { checkpointFromHead: true });
    expect(timeline.checkpoint?.version).toBe(5);
    // The listing names it: the head and it, nothing else.
    expect(store.stats.snapshot()).toEqual(CURRENT_HEAD_COST);
    expect(timeline.records).toEqual((await listedHistory(store)).records);
  });

  it("a version whose record only a checkpoint the head did not see holds: the checkpoints are listed", async () => {
    const store = new LocalStore(dataset.tableUri);
    await dataset.apply([{ op: "append", rows: 1 }]);
    await runCheckpoint(store); // covers 6
    await dataset.apply([{ op: "append", rows: 1 }]);
    // Version 6 removed (its record is in checkpoint 6 alone), then a head that names checkpoint 5:
    // a head written while that checkpoint was being written, and its version file removed.
    const six = (await lanceFormat.listVersionFiles(store)).find((file) => file.version === 6)!;
    await store.deleteMany([six.key]);
    await writeTableHead(store, { checkpointVersion: 5 });
    store.stats.reset();
    const timeline = await readHistory(store, { checkpointFromHead: true });
    expect(timeline.checkpoint?.version).toBe(6);
    expect(store.stats.snapshot().list).toBe(1);
    const removed = timeline.records.find((r) => r.version === 6);
    expect(removed?.is_cleaned_up).toBe(true);
    expect(timeline.records).toEqual((await listedHistory(store)).records);
  });

  it("no head: the newest checkpoint names the format (no detection listings, no pin read)", async () => {
    const store = new LocalStore(dataset.tableUri);
    await store.deleteMany(["_lakewarden/head", "_lakewarden/format"]);
    store.stats.reset();
    const timeline = await readHistory(store, { checkpointFromHead: true });
    expect(timeline.format).toBe(lanceFormat);
    // The head (absent), the checkpoint, the one manifest newer than it; one LIST for the checkpoints, refs and version files.
    expect(timeline.sources.manifests).toBe(1);
    expect(store.stats.snapshot()).toEqual({ ...NO_REQUESTS, get: 3, list: 1 });
    expect(timeline.records).toEqual((await listedHistory(store)).records);
  });

  it("a stale head: the checkpoints are listed, and the newer version read from its manifest", async () => {
    const store = new LocalStore(dataset.tableUri);
    await writeTableHead(store, {});
    await dataset.apply([{ op: "append", rows: 1 }]);
    store.stats.reset();
    const timeline = await readHistory(store, { checkpointFromHead: true });
    expect(store.stats.snapshot().list).toBe(1);
    expect(timeline.sources.manifests).toBe(1);
    expect(timeline.records).toEqual((await listedHistory(store)).records);
    expect(timeline.records.at(-1)?.version).toBe(8);
  });

  it("a tag made after the head (no commit) is seen: the one listing covers _refs/", async () => {
    const store = new LocalStore(dataset.tableUri);
    await writeTableHead(store, {});
    const before = await readHistory(store, { checkpointFromHead: true });
    expect(before.records.find((r) => r.version === 2)?.is_tagged).toBe(false);
    await dataset.apply([{ op: "tag", name: "after-head", version: 2 }]);
    store.stats.reset();
    const timeline = await readHistory(store, { checkpointFromHead: true });
    expect(timeline.records.filter((r) => r.is_tagged).map((r) => r.version)).toEqual([2]);
    expect(timeline.refs.tags.map((t) => t.name)).toEqual(["after-head"]);
    // The tag file is the third GET.
    expect(store.stats.snapshot()).toEqual({ ...CURRENT_HEAD_COST, get: 3 });
    expect(timeline.records).toEqual((await listedHistory(store)).records);
  });
});

describe("versions with a current head, S3 (fauxqs)", () => {
  let server: FauxqsHandle;
  let dataset: LanceDataset;

  beforeAll(async () => {
    server = await startFauxqsServer({ buckets: ["lake"] });
    dataset = await buildLanceDataset({
      dbUri: "s3://lake/db",
      storageOptions: { ...server.lanceStorageOptions },
      steps: [
        { op: "create", rows: 4 },
        { op: "append", rows: 2 },
      ],
    });
  });
  afterAll(async () => {
    dataset?.close();
    await server?.stop();
  });

  it("2 GETs and 1 LIST, the same records as a listing", async () => {
    const store = openStore(dataset.tableUri, { s3: { endpoint: server.endpoint, credentials: server.credentials } });
    await runCheckpoint(store);
    await dataset.apply([
      { op: "append", rows: 1 },
      { op: "delete", where: "id = 2" },
    ]);
    await writeTableHead(store, {});
    const result = await runLakewarden(["versions", dataset.tableUri, "--json", "--stats"], server.awsEnv);
    expect(result.code).toBe(0);
    expect(JSON.parse(lastLine(result.stderr)).requests).toEqual(CURRENT_HEAD_COST);
    const records = (await listedHistory(store)).records;
    expect(JSON.parse(result.stdout)).toEqual(JSON.parse(JSON.stringify(records)));
  });
});
