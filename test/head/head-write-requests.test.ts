/**
 * The LISTs a head write costs: the checkpoint boundary comes from the previous head's (a HEAD
 * per checkpoint name a checkpoint written since could have), so a write after a commit lists
 * nothing when the version is given and only the newest version name when it is not. Whatever
 * the boundary, the head carries every version after it (real LanceDB table, local disk).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lanceFormat } from "../../lib/formats/lance/lance-format.ts";
import { MAX_CHECKPOINT_PROBES } from "../../lib/head/checkpoint-boundary.ts";
import { readStoredHead } from "../../lib/head/stored-head.ts";
import { readHistory } from "../../lib/head/timeline-source.ts";
import { writeTableHead } from "../../lib/head/write-table-head.ts";
import { runCheckpoint } from "../../lib/maintenance/run-checkpoint.ts";
import { LocalStore } from "../../lib/store/local-store.ts";
import { buildLanceDataset, makeTempDir, removeDir } from "../support/lance-datasets.ts";
import type { LanceDataset } from "../support/lance-datasets.ts";

let dir: string;
let dataset: LanceDataset;

beforeAll(async () => {
  dir = await makeTempDir("lw-head-write-requests-");
  dataset = await buildLanceDataset({
    dbUri: dir,
    steps: [
      { op: "create", rows: 4 },
      { op: "append", rows: 4 },
    ],
  });
});
afterAll(async () => {
  dataset?.close();
  await removeDir(dir);
});

async function storedHead(store: LocalStore) {
  const stored = await readStoredHead(store);
  if (stored.state !== "readable") throw new Error(`head is ${stored.state}`);
  return stored.content;
}

const latestVersion = async (store: LocalStore) => (await lanceFormat.latestVersionFile(store))!.version;

describe("head write requests", () => {
  it("the first head lists the checkpoints; the next ones probe from its boundary", async () => {
    const store = new LocalStore(dataset.tableUri);
    await runCheckpoint(store);
    const checkpointed = await latestVersion(store);
    store.stats.reset();
    // The format given: without a head or a pin to name it, detection would list each format's folder.
    await writeTableHead(store, { format: lanceFormat });
    // The newest version name and the checkpoint names: no head to start from.
    expect(store.stats.snapshot().list).toBe(2);
    expect((await storedHead(store)).recentVersions.after).toBe(checkpointed);

    await dataset.apply([{ op: "append", rows: 1 }]);
    store.stats.reset();
    await writeTableHead(store, {});
    // `lakewarden head write` without a version: the newest version name only.
    expect(store.stats.snapshot()).toMatchObject({ list: 1, put: 1 });

    await dataset.apply([{ op: "append", rows: 1 }]);
    const version = await latestVersion(store);
    store.stats.reset();
    await writeTableHead(store, { version });
    // After a commit (the version given): no LIST; a HEAD per candidate name (the previous head's version and this one) and the version file's.
    expect(store.stats.snapshot()).toMatchObject({ list: 0, head: 3, put: 1 });
    const head = await storedHead(store);
    expect(head.recentVersions.after).toBe(checkpointed);
    expect(head.recentVersions.records.map((r) => r.version)).toEqual([checkpointed + 1, checkpointed + 2]);
  });

  it("a checkpoint written after the previous head is found by name", async () => {
    const store = new LocalStore(dataset.tableUri);
    await runCheckpoint(store);
    const checkpointed = await latestVersion(store);
    await dataset.apply([{ op: "append", rows: 1 }]);
    store.stats.reset();
    await writeTableHead(store, { version: checkpointed + 1 });
    expect(store.stats.snapshot().list).toBe(0);
    const head = await storedHead(store);
    expect(head.recentVersions.after).toBe(checkpointed);
    expect(head.recentVersions.records.map((r) => r.version)).toEqual([checkpointed + 1]);
  });

  it("many versions behind the previous head: one LIST of the checkpoints, and the boundary from it", async () => {
    const store = new LocalStore(dataset.tableUri);
    await dataset.apply(Array.from({ length: MAX_CHECKPOINT_PROBES }, () => ({ op: "append" as const, rows: 1 })));
    await runCheckpoint(store);
    const checkpointed = await latestVersion(store);
    await dataset.apply([{ op: "append", rows: 1 }]);
    store.stats.reset();
    await writeTableHead(store, { version: checkpointed + 1 });
    expect(store.stats.snapshot().list).toBe(1);
    expect((await storedHead(store)).recentVersions.after).toBe(checkpointed);
  });

  it("versions read through these heads equal the listed history", async () => {
    const store = new LocalStore(dataset.tableUri);
    const viaHead = await readHistory(store, { checkpointFromHead: true });
    expect(viaHead.sources.recent).toBeGreaterThan(0);
    expect(viaHead.records).toEqual((await readHistory(store, { format: lanceFormat })).records);
  });
});
