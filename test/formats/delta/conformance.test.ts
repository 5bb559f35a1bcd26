/**
 * Delta joins the format conformance suite with the real fixture tables (Spark, Databricks,
 * delta-rs). `complete` is false for the fixtures whose data files were never copied or were
 * vacuumed away (a fact of the fixture, listed in its README), so only their log files are
 * required to exist.
 */
import { appendFile, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { deltaFormat } from "../../../lib/formats/delta/delta-format.ts";
import { LocalStore } from "../../../lib/store/local-store.ts";
import type { ObjectStore } from "../../../lib/store/object-store.ts";
import { copyFixtureDir, fixtureNames } from "../../support/fixtures.ts";
import { describeFormatConformance, type ConformanceTable } from "../conformance.ts";

/** Tables whose protocol lakewarden refuses (they fail every read by design; bad-input tests cover them). */
const REFUSED = new Set(["simple_table_features"]);
/** Fixtures that hold their log but not every data file their versions name. */
const INCOMPLETE = new Set(["checkpoints_vacuumed", "corrupted-last-checkpoint", "latest_not_checkpointed", "snapshot-vacuumed", "with_checkpoint_no_last_checkpoint"]);

const names = (await fixtureNames("delta")).filter((n) => !REFUSED.has(n));

function table(name: string): ConformanceTable {
  return {
    name: `Delta fixture ${name}`,
    complete: !INCOMPLETE.has(name),
    async open() {
      const { dir, remove } = await copyFixtureDir("delta", name);
      return { store: new LocalStore(dir), dispose: remove };
    },
  };
}

describeFormatConformance({
  format: deltaFormat,
  tables: [table("table_with_deletion_logs"), ...names.filter((n) => n !== "table_with_deletion_logs").map(table)],
  async notThisFormat() {
    const empty = await mkdtemp(join(tmpdir(), "lw-conformance-empty-"));
    const iceberg = await copyFixtureDir("iceberg", "spark-bunnies");
    return [
      { store: new LocalStore(empty), dispose: () => rm(empty, { recursive: true, force: true }) },
      { store: new LocalStore(iceberg.dir), dispose: iceberg.remove },
    ];
  },
  async breakLatestPath(store: ObjectStore) {
    const latest = (await deltaFormat.latestVersionFile(store))!;
    const next = latest.version + 1;
    const path = "../outside-the-root.parquet";
    const key = join(fileURLToPath(store.uri), "_delta_log", `${String(next).padStart(20, "0")}.json`);
    await appendFile(
      key,
      `${JSON.stringify({ commitInfo: { operation: "WRITE", readVersion: latest.version } })}\n${JSON.stringify({
        add: { path, partitionValues: {}, size: 1, modificationTime: 1, dataChange: true },
      })}\n`,
      { flag: "wx" },
    );
    return path;
  },
});
