import { afterEach, beforeEach, expect, it } from "vitest";
import { RUN_PROGRESS_KEY, RUN_PROGRESS_PREFIX } from "../../lib/model/layout.ts";
import { segmentItems, deletedEarlier, loadProgress, saveProgress } from "../../lib/maintenance/run-progress.ts";
import { LocalStore } from "../../lib/store/local-store.ts";
import { ReferenceTable } from "../../lib/maintenance/version-references.ts";
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

const base = { runKey: "r1", chainId: "chain", chainStartedAt: now, latestAtStart: 7, scan: null, now };

it("a saved listing loads back, object for object; what a run listed is added to it", async () => {
  await saveProgress(store, null, { ...base, listing: { added: objects.slice(0, 2) }, cursor: { prefixIndex: 0, after: "data/b.lance", done: false }, deletedNow: [] });
  const first = await loadProgress(store, await filesOf(), now);
  await saveProgress(store, first.saved, {
    ...base,
    runKey: "r2",
    listing: { added: objects.slice(2) },
    cursor: { prefixIndex: 1, after: "data/c.lance", done: false },
    deletedNow: [],
  });
  const { saved, problem } = await loadProgress(store, await filesOf(), now);
  expect(problem).toBeNull();
  expect(plain(saved!.listed)).toEqual(plain(objects));
  expect(saved!.cursor).toEqual({ prefixIndex: 1, after: "data/c.lance", done: false });
});

it("a run that deleted replaces the saved listing with what is left, and its deleted keys are read back for the check", async () => {
  await saveProgress(store, null, { ...base, listing: { added: objects }, cursor: { prefixIndex: 1, after: null, done: true }, deletedNow: [] });
  const first = await loadProgress(store, await filesOf(), now);
  await saveProgress(store, first.saved, { ...base, runKey: "r2", listing: { remaining: [objects[0]!, objects[2]!] }, cursor: null, deletedNow: ["data/b.lance"] });
  const { saved } = await loadProgress(store, await filesOf(), now);
  expect(plain(saved!.listed)).toEqual(plain([objects[0]!, objects[2]!]));
  const deleted: string[] = [];
  for await (const key of deletedEarlier(store, saved!)) deleted.push(key);
  expect(deleted).toEqual(["data/b.lance"]);
  // The replaced segment is gone: only what progress.json names is left.
  const names = (await filesOf()).map((f) => f.key).sort();
  expect(names).toEqual([RUN_PROGRESS_KEY, ...saved!.segments.listing, ...saved!.segments.deleted].sort());
});

it("a long listing is saved in segments of segmentItems() objects and loads back in order", async () => {
  const many = Array.from({ length: segmentItems() + 5 }, (_, i) => ({
    key: `data/${String(i).padStart(6, "0")}.lance`,
    size: i,
    etag: "",
    lastModified: new Date(1_700_000_000_000 + i),
  }));
  await saveProgress(store, null, { ...base, listing: { added: many }, cursor: { prefixIndex: 1, after: null, done: true }, deletedNow: [] });
  const { saved } = await loadProgress(store, await filesOf(), now);
  expect(saved!.segments.listing).toHaveLength(2);
  expect(plain(saved!.listed)).toEqual(plain(many));
});

it("progress saved in the first format (listing minus deleted segments) is not used: the chain starts over", async () => {
  const segment = `${RUN_PROGRESS_PREFIX}r1.listing.json`;
  const put = (key: string, value: unknown) => store.put(key, new TextEncoder().encode(JSON.stringify(value)));
  await put(
    segment,
    objects.map((o) => [o.key, o.size, o.etag, o.lastModified.getTime()]),
  );
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
  expect(saved).toBeNull();
  expect(problem).toBe("saved cleanup progress has format 1, not 2: starting over");
});

it("the versions read are saved in segments of about segmentItems() references and load back whole", async () => {
  const refsEach = 10;
  const versions = Math.ceil((3 * segmentItems()) / refsEach);
  const table = new ReferenceTable();
  const scan = new Map(
    Array.from({ length: versions }, (_, i) => {
      const version = i + 1;
      const file = { version, key: `_versions/${version}.manifest`, size: 100, etag: `"${version}"`, lastModified: new Date(1_700_000_000_000 + version) };
      const references = Array.from({ length: refsEach }, (__, r) => ({ path: `data/${version}-${r}.lance`, role: "data" as const }));
      return [version, { file, record: { version } as never, references: table.encode(references), unresolved: [], config: {}, round: 0 }];
    }),
  );
  await saveProgress(store, null, { ...base, scan, listing: { added: [] }, cursor: null, deletedNow: [] });
  const { saved, problem } = await loadProgress(store, await filesOf(), now);
  expect(problem).toBeNull();
  expect(saved!.segments.scan.length).toBeGreaterThanOrEqual(3);
  expect([...saved!.scan.keys()]).toEqual([...scan.keys()]);
  expect(saved!.scan.get(versions)!.references.list()).toEqual(scan.get(versions)!.references.list());
});
