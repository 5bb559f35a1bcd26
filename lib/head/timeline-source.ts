/**
 * The head's part of the timeline: the versions after the newest checkpoint, as the head
 * recorded them. Null when the head is missing, unreadable, of another format or cannot be
 * fetched: the timeline then reads those versions' manifests, so a bad head costs requests,
 * never history.
 */
import type { TableFormat } from "../formats/table-format.ts";
import { registeredFormat, resolveFormat, suggestedFormat } from "../formats/index.ts";
import { StoreError } from "../store/errors.ts";
import type { ObjectStore } from "../store/object-store.ts";
import type { VersionRecord } from "../model/version-record.ts";
import { listVersionsAndRefs, readTimeline } from "../versions/timeline.ts";
import type { KnownVersions, RecentBoundary, Timeline, TimelineOptions } from "../versions/timeline.ts";
import { loadNewestCheckpoint } from "../checkpoint/load.ts";
import { readHeadTimeline } from "./head-reader.ts";
import type { HeadTimeline } from "./head-reader.ts";
import { headCodecs } from "./registry.ts";

export interface HeadRecentVersions extends KnownVersions {
  records: readonly VersionRecord[];
  source: "head";
  /** The table version the head describes. */
  headVersion: number;
  /** The checkpoint version the records follow (null: all versions since the table began). */
  after: number | null;
  boundary: RecentBoundary;
}

export async function headRecentVersions(store: ObjectStore, format: TableFormat): Promise<HeadRecentVersions | null> {
  const timeline = await readHeadTimelineQuietly(store);
  return timeline && timeline.format === format.name ? recentOf(timeline) : null;
}

/** A sectioned head: one ranged GET of its prefix, two small sections decoded. */
async function readHeadTimelineQuietly(store: ObjectStore): Promise<HeadTimeline | null> {
  try {
    return await readHeadTimeline(store, headCodecs);
  } catch (error) {
    if (error instanceof StoreError) return null;
    throw error;
  }
}

function recentOf(timeline: HeadTimeline): HeadRecentVersions {
  const { recentVersions, tableVersion, versionFile } = timeline;
  return {
    records: recentVersions.records,
    source: "head",
    headVersion: tableVersion,
    after: recentVersions.after,
    boundary: { checkpoint: recentVersions.after, version: tableVersion, versionFile },
  };
}

export interface HistoryOptions extends Omit<TimelineOptions, "recent" | "checkpointFromRecent"> {
  /** The table's format; without it the head names it (or the newest checkpoint, the pin, or detection). */
  format?: TableFormat;
  /**
   * Read the checkpoint a current head names instead of listing the checkpoints, when that
   * provably gives the same history (lib/versions/timeline.ts). For readers: the checkpoint
   * returned may be an older one than the newest when both hold the same history, so a writer
   * building the next checkpoint from it must not ask for this.
   */
  checkpointFromHead?: boolean;
}

/**
 * The whole history as `versions` shows it: newest checkpoint (and its archive segments) +
 * the head's versions since it + only the version files neither covers. Without a format,
 * the head's prefix is read first and names it, so no extra request is spent on the format.
 */
export async function readHistory(store: ObjectStore, options: HistoryOptions = {}): Promise<Timeline & { format: TableFormat }> {
  const { format: given, checkpointFromHead, ...timelineOptions } = options;
  const fromHead = checkpointFromHead === true && timelineOptions.checkpoint === undefined ? { checkpointFromRecent: true } : {};
  if (given) {
    // The head's GET runs alongside the checkpoint and the listing.
    return { ...(await readTimeline(store, given, { ...timelineOptions, ...fromHead, recent: headRecentVersions(store, given) })), format: given };
  }
  // A location named like a format (a `.lance` folder) has that format's version files and refs
  // listed while the head is read (with our checkpoints, in one LIST where the format can): used
  // only if the head (or checkpoint, or detection) agrees. The checkpoints are ours whatever the format.
  const guess = timelineOptions.versionFiles || timelineOptions.versionKeys || timelineOptions.refs ? undefined : suggestedFormat(store.uri);
  const early = guess ? listVersionsAndRefs(store, guess, { withCheckpoints: !timelineOptions.checkpoint }) : null;
  early?.catch(() => undefined);
  const earlyCheckpoints = async () => (early ? (await early.catch(() => null))?.checkpointFiles : undefined);
  const head = await readHeadTimelineQuietly(store);
  let named = head ? registeredFormat(head.format) : undefined;
  // No head to say: the newest checkpoint (read anyway, now rather than later) names the format,
  // so detection's listings and the pin's GET are spared.
  let checkpoint = timelineOptions.checkpoint;
  if (!named && !checkpoint) {
    checkpoint = await loadNewestCheckpoint(store, await earlyCheckpoints());
    named = checkpoint.checkpoint ? registeredFormat(checkpoint.checkpoint.tableFormat) : undefined;
  }
  const format = named ?? (await resolveFormat(store));
  const recent = head && head.format === format.name ? recentOf(head) : null;
  // Awaited only when used: its error is then the history's.
  const fromEarly = early && format === guess ? await early : null;
  if (!checkpoint && fromEarly?.checkpointFiles) checkpoint = await loadNewestCheckpoint(store, fromEarly.checkpointFiles);
  const listed = fromEarly ? { versionKeys: fromEarly.versionKeys, refs: fromEarly.refs } : {};
  const timeline = await readTimeline(store, format, {
    ...timelineOptions,
    ...listed,
    ...(checkpoint ? { checkpoint } : fromHead),
    ...(recent ? { recent } : {}),
  });
  return { ...timeline, format };
}
