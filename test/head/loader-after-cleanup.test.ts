/**
 * A warm TableHandle across a cleanup. "Version N+1 does not exist" does not prove N is the
 * latest once a cleanup may have removed N+1: cleanup keeps N when a tag pins it and removes
 * the versions after it that nothing pins. Found by the soak (bench/soak): a warm handle
 * stayed on a tagged version while hundreds of newer ones were committed.
 */
import { afterAll, describe, expect, it } from "vitest";
import { lanceFormat } from "../../lib/formats/lance/lance-format.ts";
import { openTable } from "../../lib/head/loader.ts";
import { runCleanup } from "../../lib/maintenance/run-cleanup.ts";
import { LocalStore } from "../../lib/store/local-store.ts";
import { buildLanceDataset, makeTempDir, removeDir, type DatasetStep } from "../support/lance-datasets.ts";

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await removeDir(dir);
});

async function table(steps: readonly DatasetStep[]) {
  const dbUri = await makeTempDir("lw-head-gap-");
  dirs.push(dbUri);
  const ds = await buildLanceDataset({ dbUri, steps });
  return { ds, store: new LocalStore(ds.tableUri) };
}

const cleanupNow = (store: LocalStore) => runCleanup(store, { settings: { olderThanMs: 0, retainVersions: 1 }, now: () => new Date(Date.now() + 1000) });

describe("a warm handle after cleanup removed the version after the one it holds", () => {
  it("the held version is tagged (kept), the next one removed: the handle still finds the latest", async () => {
    const { ds, store } = await table([
      { op: "create", rows: 5 },
      { op: "append", rows: 3 },
    ]);
    const handle = await openTable(store, { versionCheckInterval: 0 });
    expect(handle.current()!.version).toBe(2);
    await (await ds.table.tags()).create("pinned", 2);
    await ds.apply([
      { op: "append", rows: 4 },
      { op: "delete", where: "id = 1" },
    ]);
    ds.close();
    const report = await cleanupNow(store);
    expect(report.versions_removed).toEqual([1, 3]);
    expect((await lanceFormat.listVersionFiles(store)).map((f) => f.version)).toEqual([2, 4]);

    const state = await handle.latest();
    expect(state.version).toBe(4);
    expect(state.snapshot.record.total_rows).toBe(11);
  });

  it("the held version and the next one both removed: the handle never answers with a version that is gone", async () => {
    const { ds, store } = await table([
      { op: "create", rows: 5 },
      { op: "append", rows: 3 },
    ]);
    const handle = await openTable(store, { versionCheckInterval: 0 });
    await ds.apply([
      { op: "append", rows: 4 },
      { op: "overwrite", rows: 2 },
    ]);
    ds.close();
    expect((await cleanupNow(store)).versions_removed).toEqual([1, 2, 3]);

    const state = await handle.latest();
    expect(state.version).toBe(4);
    expect(state.snapshot.record.total_rows).toBe(2);
  });

  it("with nothing new, a check is still one request and keeps the state", async () => {
    const { ds, store } = await table([{ op: "create", rows: 5 }]);
    ds.close();
    const handle = await openTable(store, { versionCheckInterval: 0 });
    const first = handle.current()!;
    store.stats.reset();
    const again = await handle.latest();
    expect(again.version).toBe(first.version);
    expect(again.snapshot).toBe(first.snapshot);
    const requests = store.stats.snapshot();
    expect(requests.get + requests.head + requests.list + requests.put + requests.delete).toBe(1);
  });
});
