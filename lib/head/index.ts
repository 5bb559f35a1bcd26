/**
 * The head object's public API: the client loader (`openTable`), the writer the commit
 * Lambda and the CLI call (`writeTableHead`), and the lower-level pieces (builder,
 * conditional put, codecs) for benchmarks and other formats.
 */
export { openTable, loadTableState, TableHandle, ReaderPin, DEFAULT_PIN_TTL_MS, DEFAULT_VERSION_CHECK_INTERVAL_MS } from "./loader.ts";
export type { OpenTableOptions, LoadTableStateOptions, PinOptions, TableState, HeadWarning, HeadFallbackReason } from "./loader.ts";

export { writeTableHead } from "./write-table-head.ts";
export { refreshHeadAfterCleanup } from "./after-cleanup.ts";
export type { CleanupCommitOutcome, HeadAfterCleanup } from "./after-cleanup.ts";
export type { WriteTableHeadOptions, WriteTableHeadResult } from "./write-table-head.ts";

export { putHeadConditionally } from "./conditional-put.ts";
export type { ConditionalWriteOptions, HeadToWrite, HeadWriteAction, HeadWriteResult } from "./conditional-put.ts";

export { buildHead } from "./builder.ts";
export type { BuildHeadInput, BuiltHead, FooterSource } from "./builder.ts";

export { collectRecentVersions } from "./recent-versions.ts";
export type { CollectRecentVersionsInput, CollectedRecentVersions } from "./recent-versions.ts";
export { newestCheckpointVersion } from "./checkpoint-boundary.ts";
export { headRecentVersions } from "./timeline-source.ts";
export type { HeadRecentVersions } from "./timeline-source.ts";

export { HEAD_KEY, probeStoredHead, readStoredHead, interpretStoredHead } from "./stored-head.ts";
export type { StoredHead, StoredHeadProbe } from "./stored-head.ts";

export { contentToModel, modelToContent, MANDATORY_SECTIONS, HEAD_CONTENT_VERSION } from "./content.ts";
export { SectionedHead, HEAD_PREFIX_BYTES, LOAD_PREFIX_BYTES, SECTION_ORDER } from "./sectioned.ts";
export type { SectionEntry } from "./sectioned.ts";
export { liveFileColumnsOf, liveFileColumnsFrom } from "./sectioned-content.ts";
export type { LiveFileColumns } from "./sectioned-content.ts";
export type { HeadContent, RecentVersions, DataFileFooter } from "./content.ts";
export { encodeHead, decodeHead } from "./container.ts";
export type { EncodedHead, DecodedHead, EncodeHeadOptions } from "./container.ts";
export { HEAD_MAGIC, HEAD_HEADER_BYTES, HEAD_HEADER_VERSION, decodeHeader, peekTableVersion } from "./header.ts";
export type { HeadHeader, BodyCompression } from "./header.ts";

export type { HeadCodec } from "./codec.ts";
export { HeadCodecRegistry, headCodecs, DEFAULT_HEAD_CODEC } from "./registry.ts";
export { arrowCodec } from "./codecs/arrow.ts";
export { jsonCodec } from "./codecs/json.ts";
export type { HeadModel, HeadTable, HeadColumn, ColumnType } from "./model.ts";

export {
  resolveHeadSettings,
  InvalidHeadSettingError,
  DEFAULT_HEAD_INLINE_BYTES,
  HEAD_CODEC_CONFIG_KEY,
  HEAD_INLINE_BYTES_CONFIG_KEY,
} from "./settings.ts";
export type { HeadSettings, HeadSettingOverrides } from "./settings.ts";
export { CorruptHeadError, UnsupportedHeadError, HeadCodecError, HeadWriteContentionError } from "./errors.ts";
