/**
 * A cleanup lists its checkpoint folder at its start and for each archive, not again to prune: the prune
 * after the last archive starts from that archive's listing with the file it wrote. Its decisions
 * are the ones a fresh listing gives: over runs that leave more checkpoints than are kept, each
 * run prunes the oldest and the folder holds the newest two, as listed afterwards. And the newest
 * checkpoint the run's start read is not read and decoded again by its first archive.
 */
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCleanup } from "../../lib/maintenance/run-cleanup.ts";
import { CHECKPOINTS_PREFIX } from "../../lib/model/layout.ts";
import type { ByteRange, GetResult, ListOptions, ObjectInfo } from "../../lib/store/object-store.ts";
import { LocalStore } from "../../lib/store/local-store.ts";
import { buildLanceDataset, makeTempDir, removeDir } from "../support/lance-datasets.ts";

/** A local store that remembers the prefix of every listing it serves and every key it reads. */
class ListingRecorder extends LocalStore {
  readonly listed: string[] = [];
  readonly read: string[] = [];

  override async *list(prefix: string, options: ListOptions = {}): AsyncIterable<ObjectInfo> {
    this.listed.push(prefix);
    yield* super.list(prefix, options);
  }

  override get(key: string, range?: ByteRange): Promise<GetResult> {
    this.read.push(key);
    return super.get(key, range);
  }
}

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await removeDir(dir);
});

async function cutoffAfterCommits(): Promise<Date> {
  await new Promise((resolve) => setTimeout(resolve, 20));
  return new Date();
}

describe("cleanup's checkpoint listings", () => {
  it("one at the start and one per archive, none more to prune; each run prunes the oldest checkpoint and keeps the newest two", async () => {
    const dbUri = await makeTempDir("lw-checkpoint-listing-");
    dirs.push(dbUri);
    const ds = await buildLanceDataset({
      dbUri,
      steps: [
        { op: "create", rows: 10 },
        { op: "append", rows: 5 },
        { op: "append", rows: 5 },
      ],
    });
    const folder = join(ds.tableUri, CHECKPOINTS_PREFIX);
    const pruned: string[][] = [];
    const checkpointReads: number[] = [];
    for (let run = 0; run < 4; run++) {
      if (run > 0) await ds.apply([{ op: "append", rows: 5 }]);
      const store = new ListingRecorder(ds.tableUri);
      const cutoff = await cutoffAfterCommits();
      const report = await runCleanup(store, { settings: { olderThanMs: 0 }, now: () => cutoff });
      expect(report.status).toBe("completed");
      // The run's start loads the newest checkpoint, then each archive loads it again.
      expect(store.listed.filter((prefix) => prefix === CHECKPOINTS_PREFIX)).toHaveLength(3);
      pruned.push(report.checkpoints_pruned);
      checkpointReads.push(store.read.filter((key) => key.startsWith(CHECKPOINTS_PREFIX)).length);
    }
    ds.close();
    const left = (await readdir(folder)).filter((name) => name.endsWith(".arrow")).sort();
    expect(left).toHaveLength(2);
    // Runs 3 and 4 each found three checkpoints: the oldest went.
    expect(pruned.slice(0, 2)).toEqual([[], []]);
    expect(pruned[2]).toHaveLength(1);
    expect(pruned[3]).toHaveLength(1);
    expect([...pruned[2]!, ...pruned[3]!].some((key) => left.some((name) => key.endsWith(name)))).toBe(false);
    // The newest checkpoint is read once a run, at its start (the first archive takes it from there
    // while the file is unchanged), and the one pruned once, to prove a newer one holds its rows.
    expect(checkpointReads).toEqual([0, 1, 2, 2]);
  });
});
