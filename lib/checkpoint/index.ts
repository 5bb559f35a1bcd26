/** Version checkpoints: layout, codec, loading with fallback, and the two pipeline stages. */
export { ARCHIVE_PREFIX, CHECKPOINTS_PREFIX, checkpointKey, damagedKey, parseCheckpointKey, parseSegmentKey, segmentKey } from "../model/layout.ts";
export type { SegmentFile } from "../model/layout.ts";
export { decodeCheckpoint, encodeCheckpoint } from "./codec.ts";
export type { CheckpointContent } from "./codec.ts";
export { CHECKPOINT_COLUMNS, CHECKPOINT_FORMAT_VERSION, CHECKPOINT_METADATA, checkpointSchema } from "./schema.ts";
export { CorruptCheckpointError, UnsupportedCheckpointError } from "./errors.ts";
export { DEFAULT_MAX_ENTRIES, mergeHistory, sameHistory } from "./history.ts";
export { listCheckpointFiles, loadNewestCheckpoint, readCheckpoint } from "./load.ts";
export type { CheckpointFile, LoadedCheckpoint, SkippedCheckpoint, StoredCheckpoint } from "./load.ts";
export { archiveVersions } from "./archive.ts";
export type { ArchiveInput, ArchiveResult, ArchiveStatus } from "./archive.ts";
export { DEFAULT_MAX_CHECKPOINT_FILES, cleanupOldCheckpoints } from "./prune.ts";
export type { PruneCheckpointsOptions, PruneCheckpointsResult } from "./prune.ts";
export {
  MAX_TRANSACTION_PROPERTIES_BYTES,
  decodeTransactionProperties,
  encodeTransactionProperties,
  isTruncatedProperties,
} from "./properties.ts";
export { listSegments, readArchivedHistory, writeSegment } from "./segments.ts";
export type { ArchivedHistory } from "./segments.ts";
export { readSetAside, setAside, unreadableCheckpoints } from "./damaged.ts";
export type { CoveredVersions, DamageNote, HistoryProblem, SetAside, SetAsideState } from "./damaged.ts";
