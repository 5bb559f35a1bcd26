/**
 * Finding a Delta table's latest commit. Cold, with nothing known: `_last_checkpoint` (a GET)
 * names a version near the tail, then one LIST of `_delta_log/` from it: two round trips, the
 * GET started beside whatever the caller reads meanwhile. With a version known (a head's, a warm
 * state's): one LIST from it. Either answer is the highest commit listed: any commit at or above
 * a start is at or above every lower start too, so the answer does not depend on the start, as
 * long as the listing from it holds a commit; when it holds none (the table was recreated with
 * fewer commits, or `_last_checkpoint` names a version past the log) the whole log is listed.
 *
 * Why a cold load cannot do it in one: a LIST can only start after a key, and the tail's key is
 * what is being looked for; listing from the first commit costs a page (1,000 keys) per ~500
 * commits kept (a `.json` and a `.crc` each), one dependent round trip a page.
 */
import type { ObjectInfo, ObjectStore } from "../../store/object-store.ts";
import { StartedRequests } from "../started-requests.ts";
import type { LatestVersionLookup, VersionFile } from "../table-format.ts";
import { readLastCheckpoint } from "./last-checkpoint.ts";
import type { LastCheckpointRead } from "./last-checkpoint.ts";
import { latestCommitVersion, listLog } from "./log-listing.ts";

export function toVersionFile(object: ObjectInfo, version: number): VersionFile {
  return { version, key: object.key, size: object.size, etag: object.etag, lastModified: object.lastModified };
}

/** The highest commit listed from `fromVersion` on, or null when the listing holds none. */
async function latestListedFrom(store: ObjectStore, fromVersion: number): Promise<VersionFile | null> {
  const listing = await listLog(store, fromVersion);
  const latest = latestCommitVersion(listing);
  return latest === null ? null : toVersionFile(listing.commits.get(latest)!, latest);
}

/** The newest commit: listed from `_last_checkpoint`'s version when it is valid, else the whole log. */
export async function latestAfterHint(store: ObjectStore, hint: Promise<LastCheckpointRead>): Promise<VersionFile | null> {
  const read = await hint;
  return (read.kind === "valid" ? await latestListedFrom(store, read.hint.version) : null) ?? (await latestListedFrom(store, 0));
}

export function latestVersionFile(store: ObjectStore): Promise<VersionFile | null> {
  return latestAfterHint(store, readLastCheckpoint(store));
}

/** See the module comment; `known`: the caller asks latestFrom with it first, so its LIST goes out now and no `_last_checkpoint` is read. */
export function startDeltaLookup(store: ObjectStore, known?: VersionFile): LatestVersionLookup {
  const requests = new StartedRequests();
  const hint = known ? null : requests.add(readLastCheckpoint(store));
  const early = known ? requests.add(latestListedFrom(store, known.version)) : null;
  let latest: Promise<VersionFile | null> | undefined;
  const full = () => (latest ??= requests.add(latestAfterHint(store, hint ?? readLastCheckpoint(store))));
  const listedFrom = (from: VersionFile) => (early && from.version === known!.version ? early : requests.add(latestListedFrom(store, from.version)));
  return {
    latest: full,
    latestFrom: async (from) => (await listedFrom(from)) ?? full(),
    settled: () => requests.settled(),
  };
}
