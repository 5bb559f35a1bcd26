/**
 * Log (metadata) cleanup, a pure plan over a listing of `_delta_log/` (PROTOCOL.md "Metadata
 * Cleanup"; delta.md §3 and §5):
 *   1. only when `delta.enableExpiredLogCleanup` is not false;
 *   2. cutoff = midnight UTC of (now - delta.logRetentionDuration); commit times are the commit
 *      files' modification times made strictly increasing (Spark's rule: a commit not newer than
 *      its predecessor counts as predecessor + 1 ms); cutoffCommit = newest commit not newer
 *      than the cutoff;
 *   3. the kept checkpoint = newest complete checkpoint at or below cutoffCommit that is not
 *      known to be unusable (a part or sidecar missing or not decoding whole: the caller proves
 *      it, cleanup.ts); none → nothing. Every unusable one passed over is said, with why;
 *   4. delete commits, checkpoints (any shape, complete or not) and `.crc` files of versions
 *      below it, and compaction files starting at or below it; commits go first;
 *   5. sidecars: delete those no remaining checkpoint names and older than midnight UTC of
 *      (now - 1 day).
 * checkpointProtection (boundary V = delta.requireCheckpointProtectionBeforeVersion, with the
 * feature in the protocol; lakewarden's own protected boundary maps onto the same rule):
 *   - a cleanup whose kept checkpoint is at or above V removes all history below V in one go:
 *     allowed;
 *   - otherwise it is partial: allowed only when the protocol of every version it removes is
 *     known (from its `.crc`) and supported, and then no checkpoint below V is deleted;
 *     when that cannot be shown, nothing is deleted.
 */
import type { ObjectInfo } from "../../store/object-store.ts";
import type { ProtocolAction } from "./actions.ts";
import type { LogListing } from "./log-listing.ts";
import { isCleanable } from "./protocol.ts";
import { DAY_MS } from "./table-properties.ts";

export interface LogCleanupInput {
  listing: LogListing;
  /** Objects under `_delta_log/_sidecars/`. */
  sidecars: readonly ObjectInfo[];
  /** Sidecar keys named by checkpoints that will remain (the caller reads them). */
  sidecarsInUse: ReadonlySet<string>;
  now: Date;
  logRetentionMs: number;
  expiredLogCleanup: boolean;
  /** V: history below it goes all at once or not at all (0 = no protection). */
  protectBefore: number;
  /** Protocol per version from `.crc` files (null: the file is missing or has none); only asked for partial cleanup below V. */
  protocolAt?: (version: number) => ProtocolAction | null;
  /**
   * The newest version the kept checkpoint may be at, with why: versions from it on must stay
   * readable (lakewarden's retain count, reader pins, the latest version when the run started).
   */
  newestKept?: { version: number; reason: string };
  /** Checkpoint versions proven unusable, with why: never the kept checkpoint. */
  unusableCheckpoints?: ReadonlyMap<number, string>;
}

export interface LogDeletion {
  key: string;
  version: number;
  kind: "commit" | "crc" | "checkpoint" | "compaction" | "sidecar";
  reason: string;
}

export interface LogCleanupPlan {
  cutoff: Date;
  cutoffCommit: number | null;
  /** The checkpoint every kept version replays from; null = no cleanup. */
  keptCheckpoint: number | null;
  /** In deletion order: commits, then .crc and compaction files, then checkpoints, then sidecars. */
  deletions: LogDeletion[];
  /** Why nothing (or less) is deleted, when that is the case. */
  notes: string[];
  /** Checkpoints below V kept by checkpointProtection. */
  protectedCheckpoints: number[];
  /** Unusable checkpoints at or below the cutoff commit that the kept checkpoint passed over, with why (also in `notes`). */
  passedOver: { version: number; reason: string }[];
}

export function midnightUtc(time: number): Date {
  return new Date(Math.floor(time / DAY_MS) * DAY_MS);
}

/** Commit times made strictly increasing, as Spark's BufferingLogDeletionIterator does. */
export function monotonicCommitTimes(commits: ReadonlyMap<number, ObjectInfo>): Map<number, number> {
  const out = new Map<number, number>();
  let previous = Number.NEGATIVE_INFINITY;
  for (const version of [...commits.keys()].sort((a, b) => a - b)) {
    let time = commits.get(version)!.lastModified.getTime();
    if (time <= previous) time = previous + 1;
    out.set(version, time);
    previous = time;
  }
  return out;
}

export function planLogCleanup(input: LogCleanupInput): LogCleanupPlan {
  const cutoff = midnightUtc(input.now.getTime() - input.logRetentionMs);
  const plan: LogCleanupPlan = { cutoff, cutoffCommit: null, keptCheckpoint: null, deletions: [], notes: [], protectedCheckpoints: [], passedOver: [] };
  if (!input.expiredLogCleanup) {
    plan.notes.push("delta.enableExpiredLogCleanup is false: no log cleanup");
    return plan;
  }
  const times = monotonicCommitTimes(input.listing.commits);
  for (const [version, time] of times) if (time <= cutoff.getTime() && (plan.cutoffCommit === null || version > plan.cutoffCommit)) plan.cutoffCommit = version;
  if (plan.cutoffCommit === null) {
    plan.notes.push(`no commit is older than the cutoff ${cutoff.toISOString()}`);
    return plan;
  }
  const cap = input.newestKept;
  if (cap !== undefined && cap.version < plan.cutoffCommit) {
    plan.notes.push(`the kept checkpoint is at or below version ${cap.version}: ${cap.reason}`);
    plan.cutoffCommit = cap.version;
  }
  const unusable = input.unusableCheckpoints ?? new Map<number, string>();
  const complete = [...new Set(input.listing.checkpoints.filter((c) => c.complete && c.version <= plan.cutoffCommit!).map((c) => c.version))].sort((a, b) => b - a);
  const checkpoint = complete.find((v) => !unusable.has(v));
  const outcome = checkpoint === undefined ? "no older checkpoint can be used: no log cleanup" : `log cleanup keeps checkpoint ${checkpoint} and every commit after it`;
  for (const version of complete) {
    if (version === checkpoint) break;
    const reason = `checkpoint ${version} cannot be used: ${unusable.get(version)}; ${outcome}`;
    plan.passedOver.push({ version, reason });
    plan.notes.push(reason);
  }
  if (checkpoint === undefined) {
    if (complete.length === 0) plan.notes.push(`no complete checkpoint at or below version ${plan.cutoffCommit}: no log cleanup`);
    return plan;
  }
  // The kept checkpoint must be readable from its own commit onwards: its commit must exist.
  if (!input.listing.commits.has(checkpoint)) {
    plan.notes.push(`checkpoint ${checkpoint} has no commit file: no log cleanup`);
    return plan;
  }
  plan.keptCheckpoint = checkpoint;

  const removedVersions = [...new Set([...input.listing.commits.keys(), ...input.listing.crcs.keys(), ...input.listing.checkpoints.map((c) => c.version)])].filter(
    (v) => v < checkpoint,
  );
  let keepCheckpointsBelow = 0;
  if (input.protectBefore > 0 && checkpoint < input.protectBefore && removedVersions.length > 0) {
    const unsupported = removedVersions.filter((v) => {
      const protocol = input.protocolAt?.(v) ?? null;
      return protocol === null || !isCleanable(protocol);
    });
    if (unsupported.length > 0) {
      plan.keptCheckpoint = null;
      plan.notes.push(
        `checkpointProtection: history below version ${input.protectBefore} can only be removed all at once, and the newest checkpoint old enough is ${checkpoint}; ` +
          `partial cleanup needs a supported protocol for every removed version (none known for version ${unsupported[0]}): nothing deleted`,
      );
      return plan;
    }
    keepCheckpointsBelow = input.protectBefore;
    plan.notes.push(`checkpointProtection: partial cleanup below version ${input.protectBefore}, every removed version's protocol supported; checkpoints below it are kept`);
  }

  const reason = (what: string) => `${what} below the kept checkpoint ${checkpoint} (newest at or before the ${cutoff.toISOString()} cutoff)`;
  for (const [version, file] of sortedEntries(input.listing.commits)) {
    if (version < checkpoint) plan.deletions.push({ key: file.key, version, kind: "commit", reason: reason("commit") });
  }
  for (const [version, file] of sortedEntries(input.listing.crcs)) {
    if (version < checkpoint) plan.deletions.push({ key: file.key, version, kind: "crc", reason: reason("version checksum") });
  }
  for (const compaction of input.listing.compactions) {
    if (compaction.version <= checkpoint) {
      plan.deletions.push({
        key: compaction.file.key,
        version: compaction.version,
        kind: "compaction",
        reason: `log compaction starting at or below the kept checkpoint ${checkpoint}`,
      });
    }
  }
  const remainingCheckpointKeys = new Set<string>();
  for (const group of input.listing.checkpoints) {
    const goes = group.version < checkpoint && !(group.version < keepCheckpointsBelow);
    if (group.version < checkpoint && !goes && !plan.protectedCheckpoints.includes(group.version)) plan.protectedCheckpoints.push(group.version);
    for (const file of group.files) {
      if (goes) plan.deletions.push({ key: file.key, version: group.version, kind: "checkpoint", reason: reason(group.complete ? "checkpoint" : "incomplete checkpoint") });
      else remainingCheckpointKeys.add(file.key);
    }
  }
  const youngSince = midnightUtc(input.now.getTime() - DAY_MS).getTime();
  for (const sidecar of input.sidecars) {
    if (input.sidecarsInUse.has(sidecar.key)) continue;
    if (sidecar.lastModified.getTime() >= youngSince) continue;
    plan.deletions.push({ key: sidecar.key, version: -1, kind: "sidecar", reason: "sidecar no remaining checkpoint names, older than a day" });
  }
  return plan;
}

function sortedEntries(map: ReadonlyMap<number, ObjectInfo>): [number, ObjectInfo][] {
  return [...map.entries()].sort((a, b) => a[0] - b[0]);
}
