/**
 * Protocol first (PROTOCOL.md "Protocol Evolution", "Table Features"): what lakewarden does with a
 * table depends on the features its protocol lists, and a feature it does not know means it cannot
 * know what the log means. lakewarden only reads the log and deletes files; it never commits.
 *
 *   - Reading (versions, head): every reader feature must be in SUPPORTED_READER_FEATURES.
 *   - Cleanup (VACUUM, log cleanup): every reader AND writer feature must be supported. That is
 *     the `vacuumProtocolCheck` rule, applied to every table whether it lists the feature or not:
 *     an unknown writer feature may protect files lakewarden would otherwise delete.
 *   - Catalog-managed tables are refused for both: the catalog, not the listing, says which
 *     commits exist, and maintenance needs the catalog's permission.
 */
import { UnsupportedFeatureError } from "../errors.ts";
import type { ProtocolAction } from "./actions.ts";

/** Reader features lakewarden reads correctly: none changes which log or data files exist or how they are named, except the ones it implements (deletion vectors, V2 checkpoints). */
export const SUPPORTED_READER_FEATURES: readonly string[] = [
  "columnMapping",
  "deletionVectors",
  "timestampNtz",
  "v2Checkpoint",
  "vacuumProtocolCheck",
  "typeWidening",
  "variantType",
];

/** Writer features whose file rules lakewarden's cleanup honours (or that do not touch file lifetimes). */
export const SUPPORTED_WRITER_FEATURES: readonly string[] = [
  "appendOnly",
  "invariants",
  "checkConstraints",
  "generatedColumns",
  "allowColumnDefaults",
  "changeDataFeed",
  "columnMapping",
  "identityColumns",
  "deletionVectors",
  "rowTracking",
  "timestampNtz",
  "domainMetadata",
  "v2Checkpoint",
  "icebergCompatV1",
  "icebergCompatV2",
  "clustering",
  "vacuumProtocolCheck",
  "inCommitTimestamp",
  "typeWidening",
  "variantType",
  "checkpointProtection",
];

/** Names that make a table catalog-managed (the ratified name and Spark's preview name). */
export const CATALOG_MANAGED_FEATURES: readonly string[] = ["catalogManaged", "catalogOwned-preview"];

const MAX_READER_VERSION = 3;
const MAX_WRITER_VERSION = 7;

export function readerFeatures(protocol: ProtocolAction): string[] {
  return protocol.minReaderVersion >= 3 ? [...(protocol.readerFeatures ?? [])] : [];
}

export function writerFeatures(protocol: ProtocolAction): string[] {
  return protocol.minWriterVersion >= 7 ? [...(protocol.writerFeatures ?? [])] : [];
}

export function hasWriterFeature(protocol: ProtocolAction, feature: string): boolean {
  return writerFeatures(protocol).includes(feature);
}

function catalogManaged(protocol: ProtocolAction): boolean {
  return [...readerFeatures(protocol), ...writerFeatures(protocol)].some((f) => CATALOG_MANAGED_FEATURES.includes(f));
}

/** Throws UnsupportedFeatureError unless lakewarden can read the table's log correctly. */
export function assertReadable(protocol: ProtocolAction, uri: string): void {
  if (catalogManaged(protocol)) {
    throw new UnsupportedFeatureError(uri, "the table is catalog-managed (catalogManaged): its catalog, not the log listing, decides its commits; lakewarden refuses it");
  }
  if (protocol.minReaderVersion > MAX_READER_VERSION) {
    throw new UnsupportedFeatureError(uri, `reader version ${protocol.minReaderVersion} is not supported (at most ${MAX_READER_VERSION})`);
  }
  const unknown = readerFeatures(protocol).filter((f) => !SUPPORTED_READER_FEATURES.includes(f));
  if (unknown.length > 0) {
    throw new UnsupportedFeatureError(uri, `unsupported Delta reader feature${unknown.length > 1 ? "s" : ""} ${unknown.map((f) => `"${f}"`).join(", ")}`);
  }
}

/** Why lakewarden may not delete files of a table with this protocol (reader and writer), or null when it may. */
export function cleanupRefusal(protocol: ProtocolAction, uri: string): UnsupportedFeatureError | null {
  try {
    assertReadable(protocol, uri);
  } catch (error) {
    if (error instanceof UnsupportedFeatureError) return error;
    throw error;
  }
  if (protocol.minWriterVersion > MAX_WRITER_VERSION) {
    return new UnsupportedFeatureError(uri, `writer version ${protocol.minWriterVersion} is not supported (at most ${MAX_WRITER_VERSION}); no cleanup`);
  }
  const unknown = writerFeatures(protocol).filter((f) => !SUPPORTED_WRITER_FEATURES.includes(f));
  if (unknown.length > 0) {
    return new UnsupportedFeatureError(uri, `unsupported Delta writer feature${unknown.length > 1 ? "s" : ""} ${unknown.map((f) => `"${f}"`).join(", ")}; no cleanup`);
  }
  return null;
}

/** Throws UnsupportedFeatureError unless lakewarden may delete files of this table (reader and writer protocol). */
export function assertCleanable(protocol: ProtocolAction, uri: string): void {
  const refusal = cleanupRefusal(protocol, uri);
  if (refusal) throw refusal;
}

/** True when cleanup is allowed for this protocol (the non-throwing form, for range checks). */
export function isCleanable(protocol: ProtocolAction): boolean {
  return cleanupRefusal(protocol, "") === null;
}
