/**
 * The rebuilt state of every fixture table's latest version equals an independent replay with
 * DuckDB (duckdb-oracle.ts): same live files (decoded path, deletion vector, size), started from
 * the same checkpoint.
 */
import { describe, expect, it } from "vitest";
import { LocalStore } from "../../../lib/store/local-store.ts";
import { UnsupportedFeatureError } from "../../../lib/formats/errors.ts";
import { loadSnapshot } from "../../../lib/formats/delta/snapshot.ts";
import { listLog } from "../../../lib/formats/delta/log-listing.ts";
import { deletionVectorUniqueId } from "../../../lib/formats/delta/deletion-vectors.ts";
import { decodeDeltaPath } from "../../../lib/formats/delta/paths.ts";
import { copyFixture, fixtureNames } from "../../support/fixtures.ts";
import { oracleLiveFiles } from "./duckdb-oracle.ts";

const REFUSED = new Set(["simple_table_features"]);

/** Live files as DuckDB's oracle reports them: decoded path, DV unique id, size, in its order. */
function comparable(snapshot: Awaited<ReturnType<typeof loadSnapshot>>): { path: string; dvId: string; size: number }[] {
  return snapshot.adds
    .map((add) => {
      const decoded = decodeDeltaPath(add.path);
      return { path: decoded.kind === "relative" ? decoded.path : add.path, dvId: deletionVectorUniqueId(add.deletionVector), size: add.size };
    })
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.dvId < b.dvId ? -1 : a.dvId > b.dvId ? 1 : 0));
}
const names = (await fixtureNames("delta")).filter((n) => !REFUSED.has(n));

describe("Delta replay matches DuckDB", () => {
  it("covers the fixture tables", () => {
    expect(names.length).toBeGreaterThanOrEqual(18);
  });

  it.each(names)("%s: same live files as DuckDB's replay", async (name) => {
    const dir = await copyFixture("delta", name);
    const snapshot = await loadSnapshot(new LocalStore(dir));
    const oracle = await oracleLiveFiles(dir);
    expect(snapshot.checkpoint?.version ?? null).toBe(oracle.checkpointVersion);
    expect(comparable(snapshot)).toEqual(oracle.files);
  });

  it.each([
    "table_with_deletion_logs",
    "checkpoint-v2-table",
    "basic-dv-with-checkpoint",
    "checkpoint-cdf-table",
    "cdc_ict_table",
    "checkpoints_vacuumed",
    "multi-part-checkpoint",
  ])("%s: every version it can rebuild (time travel) has DuckDB's live files", async (name) => {
    const dir = await copyFixture("delta", name);
    const store = new LocalStore(dir);
    const latest = (await loadSnapshot(store)).version;
    const listing = await listLog(store);
    const first = listing.commits.has(0) ? 0 : Math.min(...listing.checkpoints.map((c) => c.version));
    let compared = 0;
    for (let v = first; v <= latest; v++) {
      const snapshot = await loadSnapshot(store, v);
      const oracle = await oracleLiveFiles(dir, v);
      expect(snapshot.checkpoint?.version ?? null, `version ${v}`).toBe(oracle.checkpointVersion);
      expect(comparable(snapshot), `version ${v}`).toEqual(oracle.files);
      compared++;
    }
    expect(compared).toBeGreaterThan(1);
  });

  it("refuses simple_table_features (unknown reader feature) before returning any state", async () => {
    const dir = await copyFixture("delta", "simple_table_features");
    await expect(loadSnapshot(new LocalStore(dir))).rejects.toThrow(UnsupportedFeatureError);
  });
});
