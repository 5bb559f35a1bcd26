/**
 * A cold load without a format: when the location's name suggests one (LanceDB's `.lance`
 * folders), its newest version is listed alongside the head's first read, not after the head
 * names the format: one round trip instead of two. The guess never decides: a Delta table in a
 * folder named `.lance` still loads as Delta from its head, at the cost of unused LISTs.
 */
import { rename } from "node:fs/promises";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deltaFormat } from "../../lib/formats/delta/delta-format.ts";
import { lanceFormat } from "../../lib/formats/lance/lance-format.ts";
import { loadTableState } from "../../lib/head/loader.ts";
import { HEAD_KEY } from "../../lib/head/stored-head.ts";
import { writeTableHead } from "../../lib/head/write-table-head.ts";
import { LocalStore } from "../../lib/store/local-store.ts";
import { copyFixtureDir } from "../support/fixtures.ts";
import { buildLanceDataset, makeTempDir, removeDir } from "../support/lance-datasets.ts";
import type { LanceDataset } from "../support/lance-datasets.ts";

const NO_REQUESTS = { get: 0, head: 0, list: 0, put: 0, delete: 0 };

let dir: string;
let dataset: LanceDataset;

beforeAll(async () => {
  dir = await makeTempDir("lw-loader-early-");
  dataset = await buildLanceDataset({
    dbUri: dir,
    steps: [
      { op: "create", rows: 4 },
      { op: "append", rows: 2 },
    ],
  });
});
afterAll(async () => {
  dataset?.close();
  await removeDir(dir);
});

describe("cold load of a location named like a format", () => {
  it("lists the newest Lance version while the head's first read is in flight", async () => {
    const store = new LocalStore(dataset.tableUri);
    expect(store.uri).toMatch(/\.lance$/);
    await writeTableHead(store, {});
    let listed!: () => void;
    const listStarted = new Promise<void>((resolve) => (listed = resolve));
    const list = store.list.bind(store);
    store.list = (prefix, options) => {
      listed();
      return list(prefix, options);
    };
    const get = store.get.bind(store);
    // The head's read answers only once the LIST has started: a loader that listed after it would never finish.
    store.get = async (key, range) => {
      if (key === HEAD_KEY) await listStarted;
      return get(key, range);
    };
    store.stats.reset();
    const state = await loadTableState(store);
    expect(state).toMatchObject({ source: "head", format: lanceFormat, warning: null });
    expect(store.stats.snapshot()).toEqual({ ...NO_REQUESTS, get: 1, list: 1 });
  });

  it("a Delta table in a folder named .lance loads as Delta from its head; the guess costs Lance's look at its empty folder", async () => {
    const copy = await copyFixtureDir("delta", "delta-0.2.0");
    try {
      const renamed = join(dirname(copy.dir), "looks-like.lance");
      await rename(copy.dir, renamed);
      const store = new LocalStore(renamed);
      await writeTableHead(store, { format: deltaFormat });
      // Lance's look starts only once Delta's own listing has ended: the load is then done but for
      // the guess, and counts its LISTs only if it waits for them (a loaded machine's order, made sure).
      let deltaListed!: () => void;
      const deltaDone = new Promise<void>((resolve) => (deltaListed = resolve));
      const list = store.list.bind(store);
      store.list = (prefix, options) => {
        if (prefix.startsWith("_versions/")) {
          return (async function* () {
            await deltaDone;
            yield* list(prefix, options);
          })();
        }
        if (!prefix.startsWith("_delta_log/")) return list(prefix, options);
        return (async function* () {
          try {
            yield* list(prefix, options);
          } finally {
            deltaListed();
          }
        })();
      };
      store.stats.reset();
      const state = await loadTableState(store);
      const requests = store.stats.snapshot();
      expect(state).toMatchObject({ source: "head", format: deltaFormat, warning: null });
      const expected = await deltaFormat.readSnapshot(store, (await deltaFormat.latestVersionFile(store))!);
      expect(state.snapshot.liveFiles).toEqual(expected.liveFiles);
      // Lance's `_versions/` (empty: looked at twice, as a rename may hide its files from one listing) and Delta's own.
      expect(requests.list).toBe(3);
    } finally {
      await copy.remove();
    }
  });
});
