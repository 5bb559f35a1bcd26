/**
 * Reading refs while LanceDB changes them: a tag or branch deleted between the listing of
 * `_refs/` and the GET of its file is simply gone, not an error. Found by the soak on S3
 * (bench/soak): a tag deleted at that moment failed the whole cleanup run and `lakewarden versions`.
 */
import { afterAll, describe, expect, it } from "vitest";
import { lanceFormat } from "../../../lib/formats/lance/lance-format.ts";
import { LocalStore } from "../../../lib/store/local-store.ts";
import type { ByteRange, GetResult } from "../../../lib/store/object-store.ts";
import { buildLanceDataset, makeTempDir, removeDir } from "../../support/lance-datasets.ts";

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await removeDir(dir);
});

/** A local store that runs `before` right before the GET of one key, once. */
class StoreWithHookBeforeGet extends LocalStore {
  private hook: { key: string; before: () => Promise<void> } | null;

  constructor(root: string, key: string, before: () => Promise<void>) {
    super(root);
    this.hook = { key, before };
  }

  override async get(key: string, range?: ByteRange): Promise<GetResult> {
    const hook = this.hook;
    if (hook && hook.key === key) {
      this.hook = null;
      await hook.before();
    }
    return super.get(key, range);
  }
}

describe("refs deleted while they are read", () => {
  it("a tag and a branch LanceDB deletes between the listing and the GET are left out; the others are read", async () => {
    const dbUri = await makeTempDir("lw-refs-race-");
    dirs.push(dbUri);
    const ds = await buildLanceDataset({
      dbUri,
      steps: [
        { op: "create", rows: 4 },
        { op: "append", rows: 2 },
        { op: "tag", name: "kept" },
      ],
    });
    await (await ds.table.tags()).create("going", 1);
    (await (await ds.table.branches()).create("going-branch", "main", 1)).close();
    (await (await ds.table.branches()).create("kept-branch", "main", 2)).close();

    const tagGoes = new StoreWithHookBeforeGet(ds.tableUri, "_refs/tags/going.json", async () => (await ds.table.tags()).delete("going"));
    expect(await lanceFormat.readRefs(tagGoes)).toEqual({
      tags: [{ name: "kept", version: 2, branch: null }],
      branches: [
        { name: "going-branch", parentBranch: null, parentVersion: 1 },
        { name: "kept-branch", parentBranch: null, parentVersion: 2 },
      ],
    });

    const branchGoes = new StoreWithHookBeforeGet(ds.tableUri, "_refs/branches/going-branch.json", async () => (await ds.table.branches()).delete("going-branch"));
    expect(await lanceFormat.readRefs(branchGoes)).toEqual({
      tags: [{ name: "kept", version: 2, branch: null }],
      branches: [{ name: "kept-branch", parentBranch: null, parentVersion: 2 }],
    });
    ds.close();
  });
});
