import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { deleteInBatches } from "../../lib/maintenance/delete-batches.ts";
import { LocalStore } from "../../lib/store/local-store.ts";
import { makeTempDir, removeDir } from "../support/lance-datasets.ts";

let dir: string;
let store: LocalStore;
const keys = Array.from({ length: 12 }, (_, i) => `data/f${String(i).padStart(2, "0")}.lance`);

beforeEach(async () => {
  dir = await makeTempDir("lw-delete-batches-");
  store = new LocalStore(dir);
  for (const key of keys) await store.put(key, new Uint8Array([1]));
});
afterEach(() => removeDir(dir));

async function remaining(): Promise<string[]> {
  const left: string[] = [];
  for await (const object of store.list("data/")) left.push(object.key);
  return left;
}

describe("deleteInBatches", () => {
  it("deletes every key, one batch per request, several batches in flight", async () => {
    const result = await deleteInBatches(store, keys, { batchSize: 5, concurrency: 2 });
    expect([...result.deleted].sort()).toEqual(keys);
    expect(result).toMatchObject({ failed: [], stopped: false });
    expect(store.stats.snapshot().delete).toBe(3);
    expect(await remaining()).toEqual([]);
  });

  it("when a batch's preparation throws (lease lost), no lane starts another batch and none is still deleting once it rejects", async () => {
    let calls = 0;
    const run = deleteInBatches(store, keys, {
      batchSize: 1,
      concurrency: 4,
      beforeBatch: async () => {
        calls++;
        // The first lanes are slow, so the failing one is not the last to finish.
        if (calls === 3) throw new Error("lease lost");
        await new Promise((resolve) => setTimeout(resolve, 20));
      },
    });
    await expect(run).rejects.toThrow("lease lost");
    const leftWhenSettled = await remaining();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await remaining()).toEqual(leftWhenSettled);
    // The lanes already past their preparation finish their batch; nothing new starts.
    expect(leftWhenSettled.length).toBeGreaterThanOrEqual(keys.length - 4);
  });
});
