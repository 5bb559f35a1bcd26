/**
 * Lance reader feature flags (lance.md §3). A manifest lists in `reader_feature_flags`
 * what a reader must understand to read it correctly. lakewarden reads metadata and
 * decides which files are still referenced, so an unknown bit could mean files we do not
 * see (and cleanup would delete): such a manifest is refused, never guessed at.
 */
import { UnsupportedFeatureError } from "../errors.ts";

export const FLAG_DELETION_FILES = 1n << 0n;
export const FLAG_STABLE_ROW_IDS = 1n << 1n;
export const FLAG_USE_V2_FORMAT_DEPRECATED = 1n << 2n;
export const FLAG_TABLE_CONFIG = 1n << 3n;
export const FLAG_BASE_PATHS = 1n << 4n;
export const FLAG_DISABLE_TRANSACTION_FILE = 1n << 5n;
/** Index metadata with covering columns: changes index semantics, not which files exist. */
export const FLAG_COVERED_INDEX_METADATA = 1n << 7n;
/** Data files of one table may carry different file-format versions: irrelevant to metadata. */
export const FLAG_MIXED_DATA_FILE_VERSIONS = 1n << 8n;
/** Semantic logical types in the schema: changes how values read, not which files exist. */
export const FLAG_SEMANTIC_TYPES = 1n << 11n;

/**
 * Bits this reader understands. Deliberately not known, hence refused: 64 (data overlay
 * files: extra files per fragment we would not reference), 512/1024 (fragment reuse index
 * variants), 4096 (fragment tree: fragments outside the manifest) and everything above.
 */
export const SUPPORTED_READER_FLAGS =
  FLAG_DELETION_FILES |
  FLAG_STABLE_ROW_IDS |
  FLAG_USE_V2_FORMAT_DEPRECATED |
  FLAG_TABLE_CONFIG |
  FLAG_BASE_PATHS |
  FLAG_DISABLE_TRANSACTION_FILE |
  FLAG_COVERED_INDEX_METADATA |
  FLAG_MIXED_DATA_FILE_VERSIONS |
  FLAG_SEMANTIC_TYPES;

/** The bits of `flags` this reader does not understand (0n when all are known). */
function unknownReaderFlags(flags: bigint): bigint {
  return flags & ~SUPPORTED_READER_FLAGS;
}

/** Throws UnsupportedFeatureError naming the manifest and the unknown bits. */
export function assertReadable(readerFlags: bigint, uri: string): void {
  const unknown = unknownReaderFlags(readerFlags);
  if (unknown === 0n) return;
  const bits: string[] = [];
  for (let bit = 0n; bit < 64n; bit++) {
    if (unknown & (1n << bit)) bits.push(String(1n << bit));
  }
  throw new UnsupportedFeatureError(uri, `manifest requires reader feature flags unknown to lakewarden: ${bits.join(", ")} (reader_feature_flags=${readerFlags})`);
}
