/**
 * lakewarden as a TypeScript library: the calls a user makes, chosen one by one. Everything else
 * in lib/ is internal (the package's `exports` map gives only this file), so it can change
 * without notice; a change to this list shows in etc/lakewarden.api.md (test/package/api-report.test.ts)
 * and is made on purpose (`npm run api:update`).
 *
 *   const table = await openTable("s3://bucket/lake/t.lance");   // one GET + one LIST when the head is current
 *   const state = await table.latest();                           // free within versionCheckInterval
 *   await writeTableHead(openStore("./lake/t.lance"));            // what the commit Lambda does
 *   await runCleanup(openStore("./lake/t.lance"), { settings: { olderThanMs: 7 * 86_400_000 } });
 */

// Where a table lives: a store for a location (local path or s3:// URI).
export { openStore } from "./store/open-store.ts";
export type { StoreOptions } from "./store/open-store.ts";
export { LocalStore } from "./store/local-store.ts";
export type { LocalStoreOptions } from "./store/local-store.ts";
export { S3Store } from "./store/s3-store.ts";
export type { S3StoreOptions } from "./store/s3-store.ts";
export type { S3ConnectionOptions } from "./store/s3-client.ts";
export { RequestStats } from "./store/object-store.ts";
export type { ObjectInfo, ObjectStore, RequestCounts, RequestKind } from "./store/object-store.ts";

// Which format a table is.
export { UnknownFormatError, detectFormat, formatByName, formatNames, resolveFormat } from "./formats/index.ts";
export type { ResolveFormatOptions } from "./formats/index.ts";

// Open a table: its current state, from the head when it is current.
export { DEFAULT_VERSION_CHECK_INTERVAL_MS, TableHandle, loadTableState, openTable } from "./head/loader.ts";
export type { HeadFallbackReason, HeadWarning, LoadTableStateOptions, OpenTableOptions, TableState } from "./head/loader.ts";

// Write and read the head object.
export { writeTableHead } from "./head/write-table-head.ts";
export type { WriteTableHeadOptions, WriteTableHeadResult } from "./head/write-table-head.ts";
export { readStoredHead } from "./head/stored-head.ts";
export type { StoredHead } from "./head/stored-head.ts";

// History: every version, removed ones included, and time travel over it.
export { readHistory } from "./head/timeline-source.ts";
export type { HistoryOptions } from "./head/timeline-source.ts";
export { readTimeline } from "./versions/timeline.ts";
export type { Timeline, TimelineOptions } from "./versions/timeline.ts";
export { NoVersionAtTimeError, parseTimePoint, versionAt } from "./versions/version-at.ts";
export type { VersionAt } from "./versions/version-at.ts";

// Reader pins: a version (and every file it needs) kept until the pin expires.
export { DEFAULT_PIN_TTL_MS, ReaderPin } from "./head/loader.ts";
export type { PinOptions } from "./head/loader.ts";
export { createPin, readPins, releasePin, renewPin } from "./pins/pins.ts";
export type { CreatePinInput, PinRecord, PinsRead } from "./pins/pins.ts";

// Clean a table: the whole run, its history checkpoint alone, its settings and its lease.
export { runCleanup } from "./maintenance/run-cleanup.ts";
export type { RunCleanupOptions } from "./maintenance/run-cleanup.ts";
export type { CleanupReport, CleanupStatus, KindTotals, VersionLine } from "./maintenance/cleanup-report.ts";
export { runCheckpoint } from "./maintenance/run-checkpoint.ts";
export type { CheckpointReport, RunCheckpointOptions } from "./maintenance/run-checkpoint.ts";
export { DEFAULT_SETTINGS } from "./maintenance/policy.ts";
export type { CleanupSettings } from "./maintenance/policy.ts";
export { formatDuration, parseDuration } from "./maintenance/duration.ts";
export { readStoredConfig, updateStoredConfig } from "./maintenance/stored-config.ts";
export { breakLease, inspectLease } from "./maintenance/lease.ts";
export type { BreakResult, LeaseInspection, LeaseRecord, LeaseState } from "./maintenance/lease.ts";

// Measure what a table stores, by part and by what keeps it.
export { measureStorage, partsTotal } from "./measure/measure-storage.ts";
export type { RunStorage, StorageOptions, StorageParts, StorageReport, Totals, VersionHolding } from "./measure/measure-storage.ts";

// The model's words: versions, refs, files, and where lakewarden keeps its own files.
export type { VersionRecord } from "./model/version-record.ts";
export type { Branch, RefRetention, Refs, Tag } from "./model/refs.ts";
export type { FileReference, FileRole } from "./model/file-reference.ts";
export type { LiveFile, SchemaField, TableFormat, TableSnapshot } from "./formats/table-format.ts";
export { CHECKPOINTS_PREFIX, HEAD_KEY, LAKEWARDEN_PREFIX, PINS_PREFIX } from "./model/layout.ts";

// Query planning and rows (lib/scan): the --where language, the planner on a loaded state, the format-neutral
// scan view; rows through TableHandle.scan (loaded on first use, so only their types are exported here).
export { FilterSyntaxError, formatFilter, parseFilter } from "./scan/expression.ts";
export type { CompareOp, Expr, Literal } from "./scan/expression.ts";
export { planFiles, prepareFilter } from "./scan/plan.ts";
export type { PlanOptions, PlannedFile, PlanSource, ScanPlan } from "./scan/plan.ts";
export type { BoundFilter } from "./scan/bind.ts";
export type { ScanOptions, ValueBatch } from "./scan/rows.ts";
export type {
  ColumnFacts,
  DeleteKind,
  FileFacts,
  FileToRead,
  RowBatch,
  RowReader,
  ScanColumn,
  ScanDataFile,
  ScanDeleteFile,
  ScanFiles,
  ScanType,
  ScanValue,
} from "./formats/scan-files.ts";

// Errors: what went wrong and where, one class per kind.
export {
  AccessDeniedError,
  ConflictError,
  InvalidLocationError,
  InvalidRangeError,
  NoAnswerError,
  NotFoundError,
  PreconditionFailedError,
  StoreError,
  StoreUnavailableError,
  ThrottledError,
} from "./store/errors.ts";
export {
  AmbiguousFormatError,
  BranchLocationError,
  CatalogPointerRequiredError,
  CatalogTableError,
  CorruptFileError,
  MaintenanceOptOutError,
  NotATableError,
  TableFormatError,
  UnresolvableReferenceError,
  UnsupportedFeatureError,
} from "./formats/errors.ts";
export { CorruptHeadError, HeadCodecError, HeadWriteContentionError, UnsupportedHeadError } from "./head/errors.ts";
export { InvalidHeadSettingError } from "./head/settings.ts";
export { CorruptCheckpointError, UnsupportedCheckpointError } from "./checkpoint/errors.ts";
export { LeaseHeldError, LeaseLostError, PolicyError, TableChangedError } from "./maintenance/errors.ts";

// Catalogs that own a table's commit pointer (AWS Glue, the Iceberg REST protocol), and cleanup committing through them.
export { GlueCatalog, GlueLookupError, GlueUpdateError, parseGlueTableName } from "./catalog/glue.ts";
export type { GlueCatalogOptions, GlueTableName } from "./catalog/glue.ts";
export { RestCatalogError, RestCatalogTable, parseRestTableName } from "./catalog/iceberg-rest.ts";
export type { AwsCredentials, RestAuth, RestTableOptions } from "./catalog/iceberg-rest.ts";
export type { CatalogCommitAnswer, TableCatalog } from "./formats/catalog-commit.ts";
export { CatalogCommitError } from "./formats/errors.ts";
export { runCleanupThroughCatalog } from "./maintenance/catalog-cleanup.ts";
export type { CatalogCleanupOptions, CatalogCleanupReport } from "./maintenance/catalog-cleanup.ts";
