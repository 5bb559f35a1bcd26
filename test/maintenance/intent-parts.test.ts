import { afterEach, beforeEach, expect, it } from "vitest";
import { RUNS_PREFIX } from "../../lib/model/layout.ts";
import { provenByIntents } from "../../lib/maintenance/run-cleanup.ts";
import { intentPartFiles, intentFiles, listRunFiles, readIntents, writeIntent } from "../../lib/maintenance/run-files.ts";
import { LocalStore } from "../../lib/store/local-store.ts";
import { makeTempDir, removeDir } from "../support/lance-datasets.ts";

let dir: string;
let store: LocalStore;
beforeEach(async () => {
  dir = await makeTempDir("intent-parts-");
  store = new LocalStore(dir);
});
afterEach(() => removeDir(dir));

const now = new Date("2026-11-30T12:00:00Z");
const DAY = 86_400_000;

it("a long file list is written in parts before the intent, and read back in order with each file's time", async () => {
  const files = Array.from({ length: intentPartFiles() + 3 }, (_, i) => ({
    key: `data/${String(i).padStart(6, "0")}.lance`,
    lastModifiedMillis: now.getTime() - (i % 2 === 0 ? DAY : 30 * DAY),
  }));
  const written = await writeIntent(store, "20261130T120000000Z-run1", "run1", { records: [], files }, now);
  expect(written).toHaveLength(3);
  expect(written[0]).toBe(`${RUNS_PREFIX}20261130T120000000Z-run1.intent.json`);
  const { read, problems } = await readIntents(store, (await listRunFiles(store)).intents);
  expect(problems).toEqual([]);
  expect(read).toHaveLength(1);
  expect(read[0]!.parts).toEqual(written.slice(1));
  const back = [];
  for await (const file of intentFiles(store, read[0]!)) back.push(file);
  expect(back).toEqual(files);

  // Only files younger than the safety window need the intent's proof.
  const proven = await provenByIntents(store, read, { safetyWindowMs: 7 * DAY, deleteUnverified: false, now });
  expect(proven.size).toBe(Math.ceil(files.length / 2));
  expect(proven.has("data/000000.lance")).toBe(true);
  expect(proven.has("data/000001.lance")).toBe(false);
  expect(await provenByIntents(store, read, { safetyWindowMs: 7 * DAY, deleteUnverified: true, now })).toEqual(new Map());
});

it("a short list stays inline; a file of an intent without times counts as young", async () => {
  await writeIntent(store, "20261130T120000000Z-run2", "run2", { records: [], files: [{ key: "data/a.lance", lastModifiedMillis: now.getTime() - 30 * DAY }] }, now);
  await store.put(
    `${RUNS_PREFIX}20261129T120000000Z-old.intent.json`,
    new TextEncoder().encode(JSON.stringify({ run_id: "old", written_at: now.toISOString(), removing_versions: [], deleting_files: ["data/b.lance"] })),
  );
  const { read } = await readIntents(store, (await listRunFiles(store)).intents);
  expect(read.map((intent) => intent.parts)).toEqual([[], []]);
  const proven = await provenByIntents(store, read, { safetyWindowMs: 7 * DAY, deleteUnverified: false, now });
  expect([...proven.keys()]).toEqual(["data/b.lance"]);
});

it("parts a run wrote before dying ahead of its intent are orphans, removed by the next run that completes", async () => {
  const { buildLanceDataset } = await import("../support/lance-datasets.ts");
  const { runCleanup } = await import("../../lib/maintenance/run-cleanup.ts");
  const ds = await buildLanceDataset({
    dbUri: dir,
    steps: [
      { op: "create", rows: 10 },
      { op: "append", rows: 4 },
    ],
  });
  ds.close();
  const table = new LocalStore(ds.tableUri);
  const orphan = `${RUNS_PREFIX}20261130T110000000Z-dead.intent.json.files-0`;
  await table.put(orphan, new TextEncoder().encode(JSON.stringify({ keys: ["data/x.lance"], modified: [0] })));
  // A part whose intent is there is not an orphan.
  await writeIntent(
    table,
    "20261130T110500000Z-live",
    "live",
    { records: [], files: Array.from({ length: intentPartFiles() + 1 }, (_, i) => ({ key: `data/y${i}.lance`, lastModifiedMillis: 0 })) },
    now,
  );
  const before = await listRunFiles(table);
  expect(before.orphanIntentParts.map((part) => part.key)).toEqual([orphan]);
  const report = await runCleanup(table, { settings: { olderThanMs: 0 } });
  expect(report.status).toBe("completed");
  const after = [];
  for await (const object of table.list(RUNS_PREFIX)) after.push(object.key);
  expect(after.filter((key) => key.includes(".intent."))).toEqual([]);
});
