/**
 * `openTable(location)` without a catalog on a table whose metadata files are all catalog-named
 * (`NNNNN-uuid.metadata.json`, as Glue, Hive and REST catalog writers name them) refuses, as
 * cleanup does, naming the ways to give it the catalog's word (`{ catalog }`, or the CLI's
 * `--glue-table` / `--catalog` / `--metadata-location`).
 *
 * Why: such a writer writes the next file before the catalog swaps its pointer, so the newest file
 * may be a commit the catalog refused or never heard back from. A reader that took it would answer
 * with rows of a table state that never existed, and read data files that the table's owner may
 * delete as orphans of the failed commit. Without the catalog no listing can tell the two apart:
 * the refused commit below is byte-for-byte a valid commit on top of the accepted one.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { CatalogPointerRequiredError } from "../../lib/formats/errors.ts";
import { icebergFormat } from "../../lib/formats/iceberg/iceberg-format.ts";
import { openTable } from "../../lib/head/loader.ts";
import { writeTableHead } from "../../lib/head/write-table-head.ts";
import { LocalStore } from "../../lib/store/local-store.ts";
import { appendCatalogCommits, athenaCatalogFiles } from "../support/catalog-commits.ts";
import { copyIcebergFixture, icebirdLiveFiles } from "../support/iceberg-fixtures.ts";

async function catalogNamedTable() {
  const copy = await copyIcebergFixture("athena-example");
  onTestFinished(copy.remove);
  const files = athenaCatalogFiles();
  // ACCEPTED is the catalog's pointer; SECOND and THIRD are commits written and never swapped in.
  await appendCatalogCommits(copy.dir, files);
  return { dir: copy.dir, files };
}

/** The keys of every GET made on `store` from now on. */
function recordGets(store: LocalStore): string[] {
  const keys: string[] = [];
  const get = store.get.bind(store);
  store.get = (key, range) => {
    keys.push(key);
    return get(key, range);
  };
  return keys;
}

const REFUSAL = (newest: string) =>
  new RegExp(
    `metadata files are named NNNNN-uuid \\(newest metadata/${newest}\\): a catalog owns which one is current.*--glue-table.*--catalog .*openTable\\(location, \\{ catalog \\}\\).*--metadata-location`,
  );

describe("openTable without a catalog on a table whose metadata files a catalog names", () => {
  it("refuses, as cleanup does, naming the catalog options; no metadata file is read", async () => {
    const { dir, files } = await catalogNamedTable();
    const store = new LocalStore(dir);
    const gets = recordGets(store);
    const opened = openTable(store);
    await expect(opened).rejects.toThrow(CatalogPointerRequiredError);
    await expect(opened).rejects.toThrow(REFUSAL(files.THIRD));
    expect(gets.filter((key) => key.endsWith(".metadata.json"))).toEqual([]);
  });

  it("refuses with a head in place: a head written for the newest file is not taken as current", async () => {
    const { dir, files } = await catalogNamedTable();
    const store = new LocalStore(dir);
    // A head for the newest file, as a reader without the catalog wrote it before readers refused.
    await writeTableHead(store, { format: icebergFormat.at!(`metadata/${files.THIRD}`) });
    await expect(openTable(dir)).rejects.toThrow(REFUSAL(files.THIRD));
    await expect(openTable(dir, { format: icebergFormat })).rejects.toThrow(CatalogPointerRequiredError);
  });

  it("reads the catalog's state when given its pointer: none of the data only the unaccepted commits added", async () => {
    const { dir, files } = await catalogNamedTable();
    const state = await (await openTable(dir, { format: icebergFormat.at!(`metadata/${files.ACCEPTED}`) })).latest();
    expect(state.snapshot.versionFile.key).toBe(`metadata/${files.ACCEPTED}`);
    // What the catalog's state holds, read independently (icebird).
    const accepted = (await icebirdLiveFiles(dir, files.ACCEPTED)).map((file) => file.key).sort();
    expect(state.snapshot.liveFiles.flatMap((file) => file.paths).sort()).toEqual(accepted);
    expect(accepted.filter((key) => key.includes("appended"))).toEqual([]);
  });

  it("a version hint says a file-system writer keeps the pointer: read as before, the newest file", async () => {
    const { dir, files } = await catalogNamedTable();
    await writeFile(join(dir, "metadata/version-hint.text"), "3");
    const state = await (await openTable(dir)).latest();
    expect(state.snapshot.versionFile.key).toBe(`metadata/${files.THIRD}`);
  });
});
