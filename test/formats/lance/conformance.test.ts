/** Lance joins the format conformance suite with real LanceDB 0.31 tables, both version namings. */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll } from "vitest";
import { lanceFormat } from "../../../lib/formats/lance/lance-format.ts";
import { LocalStore } from "../../../lib/store/local-store.ts";
import type { ObjectStore } from "../../../lib/store/object-store.ts";
import { withManifest } from "../../support/manifest-surgery.ts";
import { buildLanceDataset, makeTempDir, removeDir, STANDARD_HISTORY, type ManifestNaming } from "../../support/lance-datasets.ts";
import { copyTree } from "../../maintenance/lance-checks.ts";
import { describeFormatConformance, type ConformanceTable } from "../conformance.ts";

const built = new Map<ManifestNaming, string>();
const dirs: string[] = [];
beforeAll(async () => {
  for (const naming of ["v1", "v2"] as const) {
    const dbUri = await makeTempDir(`lw-conformance-${naming}-`);
    dirs.push(dbUri);
    const ds = await buildLanceDataset({ dbUri, naming, steps: STANDARD_HISTORY });
    ds.close();
    built.set(naming, ds.tableUri);
  }
});
afterAll(async () => {
  for (const dir of dirs) await removeDir(dir);
});

function table(naming: ManifestNaming): ConformanceTable {
  return {
    name: `LanceDB table, ${naming} version names, tags, index, deletions`,
    complete: true,
    async open() {
      const dir = await makeTempDir("lw-conformance-copy-");
      await copyTree(built.get(naming)!, dir);
      return { store: new LocalStore(dir), dispose: () => removeDir(dir) };
    },
  };
}

describeFormatConformance({
  format: lanceFormat,
  tables: [table("v2"), table("v1")],
  async notThisFormat() {
    const empty = await makeTempDir("lw-conformance-empty-");
    return [{ store: new LocalStore(empty), dispose: () => removeDir(empty) }];
  },
  async breakLatestPath(store: ObjectStore) {
    const latest = (await lanceFormat.latestVersionFile(store))!;
    const path = join(fileURLToPath(store.uri), latest.key);
    // An absolute URI inside the root: Lance writes data paths relative to data/, so it cannot say what this names.
    const absolute = `${store.uri}/data/elsewhere.lance`;
    await writeFile(
      path,
      withManifest(await readFile(path), path, (m) => {
        m.fragments[0]!.files[0]!.path = absolute;
      }),
    );
    return absolute;
  },
});
