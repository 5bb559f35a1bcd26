/**
 * A commit's timestamp (PROTOCOL.md "In-Commit Timestamps", "Recommendations for Readers"):
 *   - In-commit timestamps are enabled when the protocol lists the `inCommitTimestamp` writer
 *     feature AND `delta.enableInCommitTimestamps` is `true`;
 *   - then versions >= `delta.inCommitTimestampEnablementVersion` (absent: enabled since creation,
 *     so 0) take `commitInfo.inCommitTimestamp`;
 *   - every other version takes its commit file's modification time (commitInfo.timestamp is
 *     provenance only and is not the commit timestamp).
 */
import { CorruptFileError } from "../errors.ts";
import type { CommitInfoAction, MetadataAction, ProtocolAction } from "./actions.ts";
import { hasWriterFeature } from "./protocol.ts";

export interface TimestampPolicy {
  /** First version whose timestamp is its in-commit timestamp; null when ICT is not enabled. */
  ictFromVersion: number | null;
}

export function timestampPolicy(protocol: ProtocolAction, metadata: MetadataAction): TimestampPolicy {
  const config = metadata.configuration ?? {};
  const enabled = hasWriterFeature(protocol, "inCommitTimestamp") && String(config["delta.enableInCommitTimestamps"]).toLowerCase() === "true";
  if (!enabled) return { ictFromVersion: null };
  const raw = config["delta.inCommitTimestampEnablementVersion"];
  const from = raw === undefined ? 0 : Number(raw);
  return { ictFromVersion: Number.isSafeInteger(from) && from >= 0 ? from : 0 };
}

export type TimestampSource = "inCommitTimestamp" | "modificationTime";

export function commitTimestamp(
  policy: TimestampPolicy,
  version: number,
  commitInfo: CommitInfoAction | null,
  modificationTime: Date,
  uri: string,
): { millis: number; source: TimestampSource } {
  if (policy.ictFromVersion !== null && version >= policy.ictFromVersion) {
    const ict = commitInfo?.inCommitTimestamp;
    if (typeof ict !== "number" || !Number.isFinite(ict)) {
      throw new CorruptFileError(uri, `in-commit timestamps are enabled from version ${policy.ictFromVersion}, but commit ${version} has no commitInfo.inCommitTimestamp`);
    }
    return { millis: ict, source: "inCommitTimestamp" };
  }
  return { millis: modificationTime.getTime(), source: "modificationTime" };
}
