/**
 * What Delta's removal plan holds of the `_delta_log/` listing (lib/formats/delta/log-listing.ts
 * sortLog, as planDeltaRemoval calls it): live heap after a full GC, before and after sorting N
 * log entries (a commit and a `.crc` a version, a classic checkpoint every 10), as the store's
 * listing yields them (one ObjectInfo each), with the listing itself let go, and with the log
 * cleanup plan made on it (planLogCleanup: one deletion a file below the kept checkpoint).
 *
 *   node --expose-gc bench/tools/delta-log-listing-memory.ts --entries 100000
 */
import { parseArgs } from "node:util";
import { sortLog } from "../../lib/formats/delta/log-listing.ts";
import { planLogCleanup } from "../../lib/formats/delta/log-cleanup.ts";
import { LOG_PREFIX, padVersion } from "../../lib/formats/delta/log-names.ts";
import type { ObjectInfo } from "../../lib/store/object-store.ts";

const { values } = parseArgs({ options: { entries: { type: "string", default: "100000" } } });
const entries = Number(values.entries);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("run with node --expose-gc");
const collect = gc;
const liveHeap = () => {
  collect();
  return process.memoryUsage().heapUsed;
};
const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

const before = liveHeap();
const listing: ObjectInfo[] = [];
for (let version = 0; listing.length < entries; version++) {
  const at = new Date(Date.UTC(2026, 0, 1) + version * 1000);
  const object = (key: string, size: number): ObjectInfo => ({ key: `${LOG_PREFIX}${key}`, size, etag: `"${version.toString(16).padStart(32, "0")}"`, lastModified: at });
  listing.push(object(`${padVersion(version)}.json`, 2000));
  listing.push(object(`${padVersion(version)}.crc`, 600));
  if (version % 10 === 0) listing.push(object(`${padVersion(version)}.checkpoint.parquet`, 40_000));
}
const withListing = liveHeap();
let sorted: ReturnType<typeof sortLog> | null = sortLog(listing);
const withBoth = liveHeap();
listing.length = 0;
const sortedAlone = liveHeap();
// Every commit older than the retention: the plan deletes all below the newest checkpoint.
let plan: ReturnType<typeof planLogCleanup> | null = planLogCleanup({
  listing: sorted,
  sidecars: [],
  sidecarsInUse: new Set(),
  now: new Date(Date.UTC(2027, 0, 1)),
  logRetentionMs: 30 * 86_400_000,
  expiredLogCleanup: true,
  protectBefore: 0,
});
const withPlan = liveHeap();
process.stdout.write(
  `${entries.toLocaleString("en")} log entries (${sorted.commits.size.toLocaleString("en")} commits, ${sorted.crcs.size.toLocaleString("en")} .crc, ${sorted.checkpoints.length.toLocaleString("en")} checkpoints)\n` +
    `| held | live heap |\n| --- | ---: |\n` +
    `| the listing (ObjectInfo per entry) | ${mib(withListing - before)} |\n` +
    `| the listing and its LogListing | ${mib(withBoth - before)} |\n` +
    `| the LogListing alone | ${mib(sortedAlone - before)} |\n` +
    `| the LogListing and its log cleanup plan (${plan.deletions.length.toLocaleString("en")} deletions) | ${mib(withPlan - before)} |\n`,
);
sorted = null;
plan = null;
