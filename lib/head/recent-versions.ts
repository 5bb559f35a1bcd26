/**
 * The versions a head carries for the timeline: every existing version after the newest
 * checkpoint up to the head's own. Built incrementally: what the previous head already
 * covers is reused (manifests never change), and only versions neither it nor the new
 * snapshot covers are read from their manifests.
 */
import type { TableFormat, TableSnapshot, VersionFile } from "../formats/table-format.ts";
import { NotFoundError } from "../store/errors.ts";
import type { ObjectStore } from "../store/object-store.ts";
import { mapConcurrent } from "../store/map-concurrent.ts";
import type { VersionRecord } from "../model/version-record.ts";
import type { HeadContent, RecentVersions } from "./content.ts";

/** Up to this many missing versions are found by HEAD each; more by one listing. */
const PROBE_GAP_LIMIT = 8;
const READ_CONCURRENCY = 8;

export interface CollectRecentVersionsInput {
  store: ObjectStore;
  format: TableFormat;
  snapshot: TableSnapshot;
  /** The newest checkpoint's last version; null when there is no checkpoint. */
  after: number | null;
  /** A decoded previous head of this table, if any. */
  previous?: HeadContent | null;
}

export interface CollectedRecentVersions {
  recent: RecentVersions;
  /** Version files read to fill the gaps (0 when the previous head covered everything). */
  manifestsRead: number;
}

export async function collectRecentVersions(input: CollectRecentVersionsInput): Promise<CollectedRecentVersions> {
  const { store, format, snapshot, after, previous } = input;
  const version = snapshot.record.version;
  const low = after ?? -1;
  const byVersion = new Map<number, VersionRecord>();
  const gaps: [number, number][] = [];
  if (previous) {
    const coveredFrom = (previous.recentVersions.after ?? -1) + 1;
    const coveredTo = previous.tableVersion;
    for (const record of previous.recentVersions.records) {
      if (record.version > low && record.version < version) byVersion.set(record.version, record);
    }
    pushGap(gaps, low + 1, Math.min(coveredFrom - 1, version - 1));
    pushGap(gaps, Math.max(coveredTo + 1, low + 1), version - 1);
  } else {
    pushGap(gaps, low + 1, version - 1);
  }
  const files = await findVersionFiles(store, format, gaps);
  const records = await mapConcurrent(files, READ_CONCURRENCY, async (file) => (await format.readSnapshot(store, file)).record);
  for (const record of records) byVersion.set(record.version, record);
  if (version > low) byVersion.set(version, snapshot.record);
  return {
    recent: { after, records: [...byVersion.values()].sort((a, b) => a.version - b.version) },
    manifestsRead: files.length,
  };
}

function pushGap(gaps: [number, number][], from: number, to: number): void {
  if (from <= to) gaps.push([Math.max(from, 0), to]);
}

/** The version files existing in the gaps: HEAD each when few, else one listing. */
async function findVersionFiles(store: ObjectStore, format: TableFormat, gaps: readonly [number, number][]): Promise<VersionFile[]> {
  const wanted = gaps.reduce((sum, [from, to]) => sum + (to - from + 1), 0);
  if (wanted === 0) return [];
  const inGaps = (v: number) => gaps.some(([from, to]) => v >= from && v <= to);
  if (wanted > PROBE_GAP_LIMIT) return (await format.listVersionFiles(store)).filter((file) => inGaps(file.version));
  const versions = gaps.flatMap(([from, to]) => Array.from({ length: to - from + 1 }, (_, i) => from + i));
  const found = await mapConcurrent(versions, READ_CONCURRENCY, async (v) => {
    try {
      return await format.findVersionFile(store, v);
    } catch (error) {
      // Cleaned up (or never committed): the timeline shows it from the checkpoint, if at all.
      if (error instanceof NotFoundError) return null;
      throw error;
    }
  });
  return found.filter((file): file is VersionFile => file !== null);
}
