/**
 * A table with LanceDB's MemWAL write path has a system index, `__lance_mem_wal`, that owns no
 * `_indices/` folder: cleanup must not take it for a missing file.
 */
import { Field, Schema, Utf8 } from "apache-arrow";
import * as lancedb from "@lancedb/lancedb";
import { afterAll, describe, expect, it } from "vitest";
import { lanceFormat } from "../../../lib/formats/lance/lance-format.ts";
import { runCleanup } from "../../../lib/maintenance/run-cleanup.ts";
import { LocalStore } from "../../../lib/store/local-store.ts";
import { makeTempDir, removeDir } from "../../support/lance-datasets.ts";

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await removeDir(dir);
});

describe("MemWAL tables", () => {
  it("clean without warnings: the MemWAL index owns no folder", async () => {
    const dir = await makeTempDir("lw-memwal-");
    dirs.push(dir);
    const db = await lancedb.connect(dir);
    const schema = new Schema([new Field("id", new Utf8(), false), new Field("name", new Utf8(), true)]);
    const table = await db.createTable(
      "t",
      lancedb.makeArrowTable(
        [
          { id: "1", name: "a" },
          { id: "2", name: "b" },
        ],
        { schema },
      ),
    );
    await table.add(lancedb.makeArrowTable([{ id: "3", name: "c" }], { schema }));
    await table.setUnenforcedPrimaryKey("id");
    await table.setLsmWriteSpec({ specType: "unsharded" });
    await table.add(lancedb.makeArrowTable([{ id: "4", name: "d" }], { schema }));
    table.close();
    db.close();

    const store = new LocalStore(`${dir}/t.lance`);
    const latest = (await lanceFormat.latestVersionFile(store))!;
    const manifest = await lanceFormat.readSnapshot(store, latest);
    // The index is there (named in the manifest) and names no folder for cleanup to look for.
    expect(manifest.referencedFiles.filter((f) => f.role === "index")).toEqual([]);

    const report = await runCleanup(store, { settings: { olderThanMs: 0 }, now: () => new Date(Date.now() + 1000) });
    expect(report.status).toBe("completed");
    expect(report.versions_removed.length).toBeGreaterThan(0);
    expect(report.warnings).toEqual([]);
    expect(report.reference_check).toMatchObject({ ok: true, missingBeforeRun: [] });
  });
});
