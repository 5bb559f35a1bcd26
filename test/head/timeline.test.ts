/**
 * The head's part of the timeline: with a checkpoint and a current head, the whole history is
 * two GETs (checkpoint + head) and the listings, whatever the number of versions since the
 * checkpoint; without a usable head the same timeline comes from the manifests.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lanceFormat } from "../../lib/formats/lance/lance-format.ts";
import { HEAD_KEY } from "../../lib/head/stored-head.ts";
import { writeTableHead } from "../../lib/head/write-table-head.ts";
import { runCheckpoint } from "../../lib/maintenance/run-checkpoint.ts";
import { LocalStore } from "../../lib/store/local-store.ts";
import { readVersionRecords } from "../../lib/versions/read-version-records.ts";
import { readHistory } from "../../lib/head/timeline-source.ts";
import { readTimeline } from "../../lib/versions/timeline.ts";
import { buildLanceDataset, makeTempDir, removeDir } from "../support/lance-datasets.ts";
import type { LanceDataset } from "../support/lance-datasets.ts";

let dir: string;
let dataset: LanceDataset;

beforeAll(async () => {
  dir = await makeTempDir("lw-head-timeline-");
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

describe("timeline = newest checkpoint + head (+ manifests neither covers)", () => {
  it("reads no manifest when the head is current", async () => {
    const store = new LocalStore(dataset.tableUri);
    await runCheckpoint(store);
    await dataset.apply([
      { op: "append", rows: 1 },
      { op: "append", rows: 1 },
      { op: "update", where: "id = 2", values: { name: "'two'" } },
      { op: "append", rows: 1 },
    ]);
    const head = await writeTableHead(store, {});
    expect(head.built?.recentVersions).toBe(4);

    store.stats.reset();
    const timeline = await readHistory(store, { format: lanceFormat });
    expect(timeline.sources).toEqual({ archive: 0, checkpoint: 3, recent: 4, manifests: 0 });
    // The checkpoint and the head; the rest are listings (versions, checkpoints, refs).
    expect(store.stats.snapshot().get).toBe(2);
    expect(timeline.records).toEqual(await readVersionRecords(new LocalStore(dataset.tableUri), lanceFormat));
  });

  it("reads only the manifests newer than the head", async () => {
    await dataset.apply([{ op: "append", rows: 1 }]);
    const store = new LocalStore(dataset.tableUri);
    const timeline = await readHistory(store, { format: lanceFormat });
    expect(timeline.sources).toEqual({ archive: 0, checkpoint: 3, recent: 4, manifests: 1 });
    expect(timeline.records).toEqual(await readVersionRecords(store, lanceFormat));
  });

  it("falls back to the manifests when the head is unreadable, or when asked not to use it", async () => {
    const store = new LocalStore(dataset.tableUri);
    const expected = await readVersionRecords(store, lanceFormat);
    expect((await readTimeline(store, lanceFormat)).records).toEqual(expected);
    await store.put(HEAD_KEY, new TextEncoder().encode("not a head"));
    const timeline = await readHistory(store, { format: lanceFormat });
    expect(timeline.sources).toEqual({ archive: 0, checkpoint: 3, recent: 0, manifests: 5 });
    expect(timeline.records).toEqual(expected);
  });
});
