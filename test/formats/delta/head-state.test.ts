/**
 * The head's view of the latest version: live files (keys, sizes, DV files) equal DuckDB's
 * independent replay on every fixture; totals equal what Spark wrote in the latest version's
 * `.crc` (tableSizeBytes, numFiles, numDeletedRecordsOpt) where one exists.
 */
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { LocalStore } from "../../../lib/store/local-store.ts";
import { loadSnapshot } from "../../../lib/formats/delta/snapshot.ts";
import { deltaLiveFiles, deltaSchemaFields, deltaSections, deltaTotals } from "../../../lib/formats/delta/head-state.ts";
import { deletionVectorLocation } from "../../../lib/formats/delta/deletion-vectors.ts";
import { resolveDeltaPath } from "../../../lib/formats/delta/paths.ts";
import { copyFixture, fixtureNames } from "../../support/fixtures.ts";
import { oracleLiveFiles } from "./duckdb-oracle.ts";

const names = (await fixtureNames("delta")).filter((n) => n !== "simple_table_features");

function dvKey(dvId: string): string | null {
  if (!dvId.startsWith("u")) return null;
  const l = deletionVectorLocation({ storageType: "u", pathOrInlineDv: dvId.slice(1).replace(/@\d+$/, ""), sizeInBytes: 0, cardinality: 0 });
  return l.kind === "relative" ? l.path : null;
}

describe("Delta head state", () => {
  it.each(names)("%s: live files equal DuckDB's replay", async (name) => {
    const dir = await copyFixture("delta", name);
    const store = new LocalStore(dir);
    const snapshot = await loadSnapshot(store);
    const resolve = (path: string) => resolveDeltaPath(path, [store.uri]);
    const { liveFiles, unresolved } = deltaLiveFiles(snapshot, resolve);
    expect(unresolved).toEqual([]);
    const oracle = await oracleLiveFiles(dir);
    const ours = liveFiles.map((f) => ({ key: f.paths[0]!, size: f.size, dv: f.deletionFile })).sort((a, b) => (a.key + (a.dv ?? "") < b.key + (b.dv ?? "") ? -1 : 1));
    const theirs = oracle.files.map((f) => ({ key: f.path, size: f.size, dv: dvKey(f.dvId) })).sort((a, b) => (a.key + (a.dv ?? "") < b.key + (b.dv ?? "") ? -1 : 1));
    expect(ours).toEqual(theirs);
    const adds = deltaSections(snapshot, resolve).find((s) => s.name === "delta_adds")!;
    expect(adds.columns.key!.length).toBe(oracle.files.length);
    expect(deltaTotals(snapshot).total_files_size).toBe(oracle.files.reduce((sum, f) => sum + f.size, 0));

    const crcPath = join(dir, "_delta_log", `${String(snapshot.version).padStart(20, "0")}.crc`);
    if (existsSync(crcPath)) {
      const crc = JSON.parse(await readFile(crcPath, "utf8")) as { tableSizeBytes: number; numFiles: number; numDeletedRecordsOpt?: number };
      const totals = deltaTotals(snapshot);
      expect(totals.total_files_size).toBe(crc.tableSizeBytes);
      expect(totals.total_data_files).toBe(crc.numFiles);
      if (crc.numDeletedRecordsOpt !== undefined) expect(totals.total_deletion_file_rows).toBe(crc.numDeletedRecordsOpt);
    }
  });

  it("flattens the schema", async () => {
    const snapshot = await loadSnapshot(new LocalStore(await copyFixture("delta", "cdc_ict_table")));
    expect(deltaSchemaFields(snapshot.metadata.schemaString).map((f) => [f.name, f.logicalType])).toEqual([
      ["name", "string"],
      ["birthyear", "integer"],
      ["age", "integer"],
    ]);
  });
});
