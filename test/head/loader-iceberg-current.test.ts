/**
 * An Iceberg cold load trusts a head from the listing of `metadata/` alone only when the head was
 * written for its metadata file's current snapshot and the listing shows that same file (key,
 * size, ETag) still the newest. Every other head reads the metadata file, and a stale or foreign
 * one is still dropped: a head of an older snapshot of the current file, a head whose metadata
 * file was replaced in place, a head a newer commit superseded, a head written before heads
 * recorded the snapshot as current (read the long way, still used).
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { icebergFormat } from "../../lib/formats/iceberg/iceberg-format.ts";
import type { TableFormat } from "../../lib/formats/table-format.ts";
import { loadTableState } from "../../lib/head/loader.ts";
import { writeTableHead } from "../../lib/head/write-table-head.ts";
import { LocalStore } from "../../lib/store/local-store.ts";
import { appendSnapshot, copyIcebergFixture, type FixtureCopy } from "../support/iceberg-fixtures.ts";
import { BUNNIES, BUNNIES_IDS } from "../support/iceberg-histories.ts";

let copy: FixtureCopy;
let store: LocalStore;

/** Every key the store is asked for during `run`. */
async function keysRead<T>(run: () => Promise<T>): Promise<{ result: T; keys: string[] }> {
  const keys: string[] = [];
  const get = store.get.bind(store);
  store.get = (key, range) => {
    keys.push(key);
    return get(key, range);
  };
  try {
    return { result: await run(), keys };
  } finally {
    store.get = get;
  }
}

beforeEach(async () => {
  copy = await copyIcebergFixture("spark-bunnies");
  store = new LocalStore(copy.dir);
});
afterEach(async () => {
  await copy.remove();
});

describe("iceberg cold load: a head is current from the listing alone only when it was its file's current snapshot", () => {
  it("a head of the current snapshot is used without reading the metadata file", async () => {
    await writeTableHead(store, { format: icebergFormat });
    const { result: state, keys } = await keysRead(() => loadTableState(store, { format: icebergFormat }));
    expect(state).toMatchObject({ source: "head", warning: null });
    expect(state.snapshot.versionFile).toMatchObject({ key: "metadata/v5.metadata.json", id: BUNNIES_IDS.s3, currentInFile: true });
    expect(keys.filter((key) => key.endsWith(".metadata.json"))).toEqual([]);
  });

  it("a head of an older snapshot in the same metadata file is stale: the metadata file is read, the latest snapshot loaded", async () => {
    const s2 = (await icebergFormat.listVersionFiles(store)).find((file) => file.id === BUNNIES_IDS.s2)!;
    expect(s2).toMatchObject({ key: "metadata/v5.metadata.json" });
    expect(s2.currentInFile).toBeUndefined();
    await writeTableHead(store, { format: icebergFormat, version: s2.version });
    const { result: state, keys } = await keysRead(() => loadTableState(store, { format: icebergFormat }));
    expect(state.source).toBe("manifest");
    expect(state.warning?.reason).toBe("head-stale");
    expect(state.snapshot.record.version_id).toBe(BUNNIES_IDS.s3);
    expect(keys).toContain("metadata/v5.metadata.json");
  });

  it("a head whose metadata file was replaced in place (same name, rolled back to s2) is dropped", async () => {
    await writeTableHead(store, { format: icebergFormat });
    const path = join(copy.dir, "metadata/v5.metadata.json");
    const text = await readFile(path, "utf8");
    const rolledBack = text.replace(/("current-snapshot-id"\s*:\s*)\d+/, `$1${BUNNIES_IDS.s2}`);
    expect(rolledBack).not.toBe(text);
    await writeFile(path, rolledBack);
    const state = await loadTableState(store, { format: icebergFormat });
    expect(state.source).toBe("manifest");
    expect(state.warning?.reason).toBe("head-ahead");
    expect(state.snapshot.record.version_id).toBe(BUNNIES_IDS.s2);
  });

  it("a metadata file replaced in place is read again in the same process, not taken from what was read before", async () => {
    const first = await loadTableState(store, { format: icebergFormat });
    expect(first.snapshot.record.version_id).toBe(BUNNIES_IDS.s3);
    const path = join(copy.dir, "metadata/v5.metadata.json");
    const rolledBack = (await readFile(path, "utf8")).replace(/("current-snapshot-id"\s*:\s*)\d+/, `$1${BUNNIES_IDS.s2}`);
    await writeFile(path, rolledBack);
    const again = await loadTableState(store, { format: icebergFormat });
    expect(again.snapshot.record.version_id).toBe(BUNNIES_IDS.s2);
    expect(new TextDecoder().decode(again.snapshot.raw)).toBe(rolledBack);
  });

  it("a head a newer commit superseded is stale", async () => {
    await writeTableHead(store, { format: icebergFormat });
    const appended = await appendSnapshot(copy.dir, { files: [{ path: `${BUNNIES}/data/extra-00001.parquet`, recordCount: 20, sizeInBytes: 3560 }] });
    const state = await loadTableState(store, { format: icebergFormat });
    expect(state.source).toBe("manifest");
    expect(state.warning?.reason).toBe("head-stale");
    expect(state.snapshot.versionFile).toMatchObject({ key: appended.metadataKey, id: appended.snapshotId, currentInFile: true });
  });

  it("a head that does not record its snapshot as current (written before it did) is checked by reading the metadata file, and used", async () => {
    const unmarked: TableFormat = {
      ...icebergFormat,
      latestVersionFile: async (s) => {
        const { currentInFile: _dropped, ...file } = (await icebergFormat.latestVersionFile(s))!;
        return file;
      },
    };
    await writeTableHead(store, { format: unmarked });
    const { result: state, keys } = await keysRead(() => loadTableState(store, { format: icebergFormat }));
    expect(state).toMatchObject({ source: "head", warning: null });
    expect(keys).toContain("metadata/v5.metadata.json");
  });

  it("a version hint naming a file by its stem is not trusted from the listing: the file it names is read", async () => {
    await writeTableHead(store, { format: icebergFormat });
    await writeFile(join(copy.dir, "metadata/version-hint.text"), "nosuchstem");
    const { result: state, keys } = await keysRead(() => loadTableState(store, { format: icebergFormat }));
    expect(state).toMatchObject({ source: "head", warning: null });
    expect(keys).toContain("metadata/v5.metadata.json");
  });
});
