/**
 * A removed version whose manifest comes back under another name while the run deletes (a writer
 * copying manifests to new names, as LanceDB's path migration does) is alive again: the run holds
 * back the files of removed versions (the version's data among them) and says so, and the next
 * run finishes the job.
 */
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseVersionKey, versionKey } from "../../lib/formats/lance/version-names.ts";
import { runCleanup } from "../../lib/maintenance/run-cleanup.ts";
import type { DeleteResult } from "../../lib/store/object-store.ts";
import { LocalStore } from "../../lib/store/local-store.ts";
import { buildLanceDataset, makeTempDir, removeDir } from "../support/lance-datasets.ts";

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await removeDir(dir);
});

/** Puts the first version file it deletes back under its V1 name, once, right after the delete. */
class CopyingBackStore extends LocalStore {
  copiedBack: number | null = null;

  override async deleteMany(keys: readonly string[]): Promise<DeleteResult> {
    const manifest = this.copiedBack === null ? keys.find((key) => parseVersionKey(key)?.naming === "v2") : undefined;
    const body = manifest ? (await this.get(manifest)).body : null;
    const result = await super.deleteMany(keys);
    if (manifest && body) {
      const version = parseVersionKey(manifest)!.version;
      await this.put(versionKey(version, "v1"), body);
      this.copiedBack = version;
    }
    return result;
  }
}

describe("a removed version's manifest copied back while the run deletes", () => {
  it("keeps the files of removed versions for the next run, which removes them", async () => {
    const dbUri = await makeTempDir("lw-reappeared-");
    dirs.push(dbUri);
    const ds = await buildLanceDataset({
      dbUri,
      naming: "v2",
      steps: [
        { op: "create", rows: 10 },
        { op: "append", rows: 5 },
        { op: "overwrite", rows: 8 },
        { op: "append", rows: 4 },
      ],
    });
    ds.close();
    const dataFiles = async () => (await readdir(join(ds.tableUri, "data"))).sort();
    const before = await dataFiles();
    const store = new CopyingBackStore(ds.tableUri);
    const settings = { olderThanMs: 0, retainVersions: 1 };
    const now = () => new Date(Date.now() + 1000);
    const first = await runCleanup(store, { settings, now });
    expect(store.copiedBack).not.toBeNull();
    expect(first.warnings.join("\n")).toContain(`removed version ${store.copiedBack} appeared again`);
    // The data of the versions before the overwrite: unreferenced by the kept version, held back with the copied-back one.
    expect(await dataFiles()).toEqual(before);

    const second = await runCleanup(new LocalStore(ds.tableUri), { settings, now });
    expect(second.status).toBe("completed");
    expect((await dataFiles()).length).toBeLessThan(before.length);
  });
});
