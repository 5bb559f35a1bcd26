/**
 * One listing of `_delta_log/` (direct children only; `_sidecars/` and other folders are not
 * walked), sorted into commits, checksums, checkpoints (grouped per version and shape, with
 * completeness) and compaction files. Names zero-padded to 20 digits sort in version order, so a
 * listing can start after a version with the store's `startAfter`.
 */
import type { ObjectInfo, ObjectStore } from "../../store/object-store.ts";
import { LOG_PREFIX, padVersion, parseLogKey } from "./log-names.ts";

export interface CheckpointFiles {
  version: number;
  shape: "classic" | "multipart" | "uuid";
  /** The files that make it up: one, or the parts of a multi-part checkpoint in part order. */
  files: ObjectInfo[];
  /** For multi-part: how many parts the names announce. */
  parts: number;
  /** False for a multi-part checkpoint with a part missing: it must not be used. */
  complete: boolean;
  /** Why it is incomplete, for messages. */
  problem?: string;
}

export interface CompactionFile {
  version: number;
  endVersion: number;
  file: ObjectInfo;
}

export interface LogListing {
  commits: Map<number, ObjectInfo>;
  crcs: Map<number, ObjectInfo>;
  /** Ascending by version; several may share a version (classic + UUID, or two multi-part sets). */
  checkpoints: CheckpointFiles[];
  compactions: CompactionFile[];
}

/** Lists the log; with `fromVersion`, only files of versions >= it (plus compactions starting there). */
export async function listLog(store: ObjectStore, fromVersion = 0): Promise<LogListing> {
  const options = fromVersion > 0 ? { delimiter: "/", startAfter: `${LOG_PREFIX}${padVersion(fromVersion - 1)}.~` } : { delimiter: "/" };
  const objects: ObjectInfo[] = [];
  for await (const info of store.list(LOG_PREFIX, options)) objects.push(info);
  return sortLog(objects, fromVersion);
}

/**
 * Sorts listed objects into a LogListing: only direct children of `_delta_log/` count, so a
 * listing of the whole table root (cleanup's) gives the same answer as a listing of the log.
 */
export function sortLog(objects: Iterable<ObjectInfo>, fromVersion = 0): LogListing {
  const commits = new Map<number, ObjectInfo>();
  const crcs = new Map<number, ObjectInfo>();
  const compactions: CompactionFile[] = [];
  const classic: ObjectInfo[] = [];
  const uuid: { version: number; file: ObjectInfo }[] = [];
  const multipart = new Map<string, { version: number; parts: number; found: Map<number, ObjectInfo> }>();

  for (const info of objects) {
    if (!info.key.startsWith(LOG_PREFIX) || info.key.slice(LOG_PREFIX.length).includes("/")) continue;
    const parsed = parseLogKey(info.key);
    if (!parsed || parsed.version < fromVersion) continue;
    switch (parsed.kind) {
      case "commit":
        commits.set(parsed.version, info);
        break;
      case "crc":
        crcs.set(parsed.version, info);
        break;
      case "compaction":
        compactions.push({ version: parsed.version, endVersion: parsed.endVersion, file: info });
        break;
      case "checkpoint":
        if (parsed.shape === "classic") classic.push(info);
        else if (parsed.shape === "uuid") uuid.push({ version: parsed.version, file: info });
        else {
          const id = `${parsed.version}/${parsed.parts}`;
          const group = multipart.get(id) ?? { version: parsed.version, parts: parsed.parts, found: new Map() };
          group.found.set(parsed.part, info);
          multipart.set(id, group);
        }
        break;
    }
  }

  const checkpoints: CheckpointFiles[] = [];
  for (const file of classic) {
    checkpoints.push({ version: parseLogKey(file.key)!.version, shape: "classic", files: [file], parts: 1, complete: true });
  }
  for (const { version, file } of uuid) checkpoints.push({ version, shape: "uuid", files: [file], parts: 1, complete: true });
  for (const group of multipart.values()) {
    const files: ObjectInfo[] = [];
    const missing: number[] = [];
    for (let part = 1; part <= group.parts; part++) {
      const file = group.found.get(part);
      if (file) files.push(file);
      else missing.push(part);
    }
    checkpoints.push({
      version: group.version,
      shape: "multipart",
      files,
      parts: group.parts,
      complete: missing.length === 0,
      ...(missing.length > 0 ? { problem: `part ${missing.join(", ")} of ${group.parts} is missing` } : {}),
    });
  }
  checkpoints.sort((a, b) => a.version - b.version || shapeRank(a) - shapeRank(b));
  return { commits, crcs, checkpoints, compactions };
}

/** Among checkpoints of one version, which to read first: UUID (V2), then classic, then multi-part. */
function shapeRank(checkpoint: CheckpointFiles): number {
  return checkpoint.shape === "uuid" ? 0 : checkpoint.shape === "classic" ? 1 : 2;
}

/** Complete checkpoints at or below `version`, newest first. */
export function completeCheckpointsAtOrBelow(listing: LogListing, version: number): CheckpointFiles[] {
  return listing.checkpoints.filter((c) => c.complete && c.version <= version).sort((a, b) => b.version - a.version || shapeRank(a) - shapeRank(b));
}

/** The newest commit version listed, or null. */
export function latestCommitVersion(listing: LogListing): number | null {
  let latest: number | null = null;
  for (const version of listing.commits.keys()) if (latest === null || version > latest) latest = version;
  return latest;
}
