/**
 * The head's part of the timeline: the versions after the newest checkpoint, as the head
 * recorded them. Null when the head is missing, unreadable, of another format or cannot be
 * fetched: the timeline then reads those versions' manifests, so a bad head costs requests,
 * never history.
 */
import type { TableFormat } from "../formats/table-format.ts";
import { StoreError } from "../store/errors.ts";
import type { ObjectStore } from "../store/object-store.ts";
import type { VersionRecord } from "../versions/version-record.ts";
import { readHeadTimeline } from "./head-reader.ts";
import { headCodecs } from "./registry.ts";

export interface HeadRecentVersions {
  records: readonly VersionRecord[];
  source: "head";
  /** The table version the head describes. */
  headVersion: number;
  /** The checkpoint version the records follow (null: all versions since the table began). */
  after: number | null;
}

export async function headRecentVersions(store: ObjectStore, format: TableFormat): Promise<HeadRecentVersions | null> {
  let timeline;
  try {
    // A sectioned head: one ranged GET of its prefix, two small sections decoded.
    timeline = await readHeadTimeline(store, headCodecs);
  } catch (error) {
    if (error instanceof StoreError) return null;
    throw error;
  }
  if (!timeline || timeline.format !== format.name) return null;
  const { recentVersions, tableVersion } = timeline;
  return { records: recentVersions.records, source: "head", headVersion: tableVersion, after: recentVersions.after };
}
