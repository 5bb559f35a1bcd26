/**
 * Tables for the HTML report (test/html-report and `npm run report:screenshots`):
 *   - a real 10-version LanceDB table with tags, a reader pin, two cleanup runs (receipts with
 *     storage) and a history protection boundary in lakewarden's stored config;
 *   - a 10,000-version history generated from that table's own data: records derived from its
 *     real ones (operations, sizes, identities), spread over two years, most cleaned up, with
 *     tags, pins, a boundary, versions without totals and 300 cleanup runs. Deterministic.
 */
import { createPin } from "../../lib/pins/pins.ts";
import { runCleanup } from "../../lib/maintenance/run-cleanup.ts";
import { updateStoredConfig } from "../../lib/maintenance/stored-config.ts";
import { collectReportData } from "../../lib/html-report/data.ts";
import type { ReportData, ReportRun, ReportVersion } from "../../lib/html-report/data.ts";
import { emptyParts } from "../../lib/maintenance/storage-parts.ts";
import { LocalStore } from "../../lib/store/local-store.ts";
import { buildLanceDataset, type DatasetStep } from "./lance-datasets.ts";

export const REPORT_HISTORY: readonly DatasetStep[] = [
  { op: "create", rows: 40 },
  { op: "tag", name: "initial-load" },
  { op: "append", rows: 20 },
  { op: "delete", where: "id % 5 = 1" },
  { op: "append", rows: 25 },
  { op: "createIndex" },
  { op: "tag", name: "indexed" },
  { op: "overwrite", rows: 30 },
  { op: "append", rows: 30 },
  { op: "update", where: "id = 100", values: { name: "'renamed'" } },
  { op: "append", rows: 15 },
  { op: "append", rows: 10 },
];

/** A real 10-version table (LanceDB) under `dbUri`, with two cleanup runs on record; returns its location. */
export async function buildReportTable(dbUri: string): Promise<string> {
  const ds = await buildLanceDataset({ dbUri, steps: REPORT_HISTORY.slice(0, 9) });
  const store = new LocalStore(ds.tableUri);
  const later = () => new Date(Date.now() + 1000);
  await runCleanup(store, { settings: { olderThanMs: 0, retainVersions: 5 }, now: later });
  await ds.apply(REPORT_HISTORY.slice(9));
  ds.close();
  const versions = ds.written.map((w) => w.version);
  await createPin(store, { version: versions.at(-4)!, ttlMs: 2 * 3_600_000, note: "nightly export" });
  await runCleanup(store, { settings: { olderThanMs: 0, retainVersions: 3 }, now: later });
  await updateStoredConfig(store, { set: { "lakewarden.protect_before": String(versions.at(-3)!) } });
  return ds.tableUri;
}

/** A small deterministic PRNG (mulberry32). */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * 10,000 versions in the shape of `real` (its operations and its bytes per row): commits every
 * ~100 minutes from 2025-01-01, appends most of the time, an overwrite now and then; versions
 * below 9,850 cleaned up unless tagged or pinned; every 97th version without totals.
 */
export function syntheticReportData(real: ReportData, count = 10_000): ReportData {
  const rnd = random(14);
  const operations = [...new Set(real.versions.map((v) => v.operation_type ?? "unknown"))];
  const bytesPerRow = (() => {
    const v = real.versions.find((r) => r.total_rows && r.total_files_size);
    return v ? v.total_files_size! / v.total_rows! : 40;
  })();
  const start = Date.UTC(2025, 0, 1);
  const tags = Array.from({ length: 18 }, (_, i) => ({ name: `release-2025.${i + 1}`, version: 400 + i * 530 }));
  const tagged = new Set(tags.map((t) => t.version));
  const pins = [9_200, 9_740, 9_990].map((version, i) => ({
    id: `00000000-0000-4000-8000-00000000000${i}`,
    version,
    version_id: String(version),
    created_at: new Date(start + version * 6_000_000).toISOString(),
    expires_at: new Date(start + version * 6_000_000 + 7_200_000).toISOString(),
    note: ["feature backfill", "training run 42", "dashboard"][i]!,
    host: null,
    pid: null,
  }));
  const pinned = new Set(pins.map((p) => p.version));
  let rows = 1000;
  let t = start;
  const versions: ReportVersion[] = [];
  for (let version = 1; version <= count; version++) {
    const roll = rnd();
    const op =
      version === 1
        ? "Overwrite"
        : roll < 0.02
          ? "Overwrite"
          : roll < 0.08
            ? "Delete"
            : roll < 0.1 && operations.includes("CreateIndex")
              ? "CreateIndex"
              : roll < 0.14
                ? "Update"
                : "Append";
    if (op === "Append") rows += Math.floor(rnd() * 400);
    else if (op === "Overwrite") rows = 1000 + Math.floor(rnd() * 200_000);
    else if (op === "Delete") rows = Math.max(0, rows - Math.floor(rnd() * 300));
    t += 3_000_000 + Math.floor(rnd() * 6_000_000);
    const unknownTotals = version % 97 === 0;
    versions.push({
      version,
      version_id: String(version),
      timestamp_millis: t,
      total_rows: unknownTotals ? null : rows,
      total_files_size: unknownTotals ? null : Math.round(rows * bytesPerRow * (1 + rnd() * 0.1)),
      operation_type: op,
      is_cleaned_up: version < count - 150 && !tagged.has(version) && !pinned.has(version),
      branch: null,
    });
  }
  const runs: ReportRun[] = [];
  for (let i = 0; i < 300; i++) {
    const at = start + (i + 1) * 2 * 86_400_000 + 3_600_000;
    const before = emptyParts();
    before.live = { files: 100, bytes: Math.round(2e7 + i * 1e5 + rnd() * 5e6) };
    before.history = { ...before.history, files: 300, bytes: Math.round(4e7 + rnd() * 2e7) };
    before.reclaimable = { files: 50, bytes: Math.round(rnd() * 3e7) };
    before.other = { ...before.other, files: 2, bytes: Math.round(rnd() * 1e6) };
    const after = structuredClone(before);
    after.reclaimable = { files: 0, bytes: 0 };
    runs.push({
      run_id: `run-${i}`,
      started_at: new Date(at).toISOString(),
      status: "completed",
      dry_run: false,
      versions_removed: Math.floor(rnd() * 60),
      bytes_removed: before.reclaimable.bytes,
      files_removed: before.reclaimable.files,
      requests: { get: 60 + Math.floor(rnd() * 40), head: 0, list: 8, put: 4, delete: 1 + Math.floor(rnd() * 3) },
      storage: { before, after },
      protect_before: 9_000,
    });
  }
  return { ...real, versions, tags, pins, protect_before: 9_000, runs, generated_at: new Date(t + 3_600_000).toISOString(), warnings: [] };
}

/** The real table's report data, then the 10,000-version history built from it. */
export async function reportDataPair(tableUri: string): Promise<{ small: ReportData; large: ReportData }> {
  const small = await collectReportData(new LocalStore(tableUri));
  return { small, large: syntheticReportData(small) };
}
