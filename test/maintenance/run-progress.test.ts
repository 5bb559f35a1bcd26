import { afterEach, beforeEach, expect, it } from "vitest";
import { RUN_PROGRESS_KEY, RUN_PROGRESS_PREFIX } from "../../lib/model/layout.ts";
import { loadProgress, saveProgress } from "../../lib/maintenance/run-progress.ts";
import { LocalStore } from "../../lib/store/local-store.ts";
import { makeTempDir, removeDir } from "../support/lance-datasets.ts";

let dir: string;
let store: LocalStore;
beforeEach(async () => {
  dir = await makeTempDir("run-progress-");
  store = new LocalStore(dir);
});
afterEach(() => removeDir(dir));

const now = new Date("2026-11-30T12:00:00Z");
const objects = [
  { key: "data/a.lance", size: 10, etag: '"x"', lastModified: new Date("2026-11-01T00:00:00Z") },
  { key: "data/b.lance", size: 20, etag: '"y"', lastModified: new Date("2026-11-02T00:00:00Z") },
  { key: "data/c.lance", size: 30, etag: '"z"', lastModified: new Date("2026-11-03T00:00:00Z") },
];
const plain = (listed: Iterable<{ key: string; size: number; lastModified: Date }>) => [...listed].map((o) => [o.key, o.size, o.lastModified.toISOString()]);
const filesOf = async () => {
  const files = [];
  for await (const object of store.list(RUN_PROGRESS_PREFIX)) files.push(object);
  return files;
};

it("a saved listing loads back, object for object, minus the keys deleted since", async () => {
  await saveProgress(store, null, {
    runKey: "r1",
    chainId: "chain",
    chainStartedAt: now,
    latestAtStart: 7,
    scan: null,
    listedNow: objects,
    cursor: { prefixIndex: 1, after: "data/c.lance", done: false },
    deletedNow: ["data/b.lance"],
    now,
  });
  const { saved, problem } = await loadProgress(store, await filesOf(), now);
  expect(problem).toBeNull();
  expect(plain(saved!.listed)).toEqual(plain([objects[0]!, objects[2]!]));
  expect(saved!.cursor).toEqual({ prefixIndex: 1, after: "data/c.lance", done: false });
});

it("a listing segment saved in the older shape (one array per object) still loads", async () => {
  const segment = `${RUN_PROGRESS_PREFIX}r1.listing.json`;
  const put = (key: string, value: unknown) => store.put(key, new TextEncoder().encode(JSON.stringify(value)));
  await put(segment, objects.map((o) => [o.key, o.size, o.etag, o.lastModified.getTime()]));
  await put(RUN_PROGRESS_KEY, {
    format: 1,
    chain_id: "chain",
    started_at: now.toISOString(),
    updated_at: now.toISOString(),
    runs: 1,
    latest_at_start: 7,
    cursor: { prefix_index: 1, after: "data/c.lance", done: false },
    segments: { scan: [], listing: [segment], deleted: [] },
  });
  const { saved, problem } = await loadProgress(store, await filesOf(), now);
  expect(problem).toBeNull();
  expect(plain(saved!.listed)).toEqual(plain(objects));
});
