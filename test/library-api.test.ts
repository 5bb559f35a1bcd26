/** The library entry point (lib/index.ts) used the way its doc comment shows, on a real table. */
import { afterAll, beforeAll, expect, it } from "vitest";
import * as lakewarden from "../lib/index.ts";
import { buildLanceDataset, makeTempDir, removeDir, type LanceDataset } from "./support/lance-datasets.ts";

let dir: string;
let dataset: LanceDataset;

beforeAll(async () => {
  dir = await makeTempDir("lw-library-");
  dataset = await buildLanceDataset({ dbUri: dir });
});
afterAll(async () => {
  dataset?.close();
  await removeDir(dir);
});

it("writes the head, opens the table from it, cleans up and reads the whole history", async () => {
  const store = lakewarden.openStore(dataset.tableUri);
  const written = await lakewarden.writeTableHead(store);
  expect(written.action).toBe("created");

  const table = await lakewarden.openTable(dataset.tableUri);
  const state = await table.latest();
  expect(state.source).toBe("head");
  expect(state.version).toBe(dataset.written.at(-1)!.version);
  expect(state.snapshot.record.total_rows).toBe(await dataset.table.countRows());

  const report = await lakewarden.runCleanup(store, { settings: { olderThanMs: 0 } });
  expect(report.status).toBe("completed");
  expect(report.versions_removed.length).toBeGreaterThan(0);

  const timeline = await lakewarden.readTimeline(store, lakewarden.formatByName("lance"));
  expect(timeline.records.map((r) => r.version)).toEqual(dataset.written.map((w) => w.version));
  expect(timeline.records.filter((r) => r.is_cleaned_up).map((r) => r.version)).toEqual(report.versions_removed);
});
