/**
 * lakewarden as a TypeScript library: the same calls the CLI and the Lambda functions make.
 *
 *   const table = await openTable("s3://bucket/lake/t.lance");   // one GET + one LIST when the head is current
 *   const state = await table.latest();                           // free within versionCheckInterval
 *   await writeTableHead(openStore("./lake/t.lance"));            // what the commit Lambda does
 *   await runCleanup(openStore("./lake/t.lance"), { settings: { olderThanMs: 7 * 86_400_000 } });
 */
export * from "./store/index.ts";
export * from "./formats/errors.ts";
export type * from "./formats/table-format.ts";
export { TABLE_FORMATS, commitOfKey, detectFormat, findFormat, formatByName, formatNames, pinFormat, resolveFormat } from "./formats/index.ts";
export * from "./model/refs.ts";
export * from "./model/file-reference.ts";
export * from "./model/table-path.ts";
export * from "./model/layout.ts";
export type { VersionRecord } from "./model/version-record.ts";
export { SEED_RECORD_FIELDS, VERSION_RECORD_FIELDS, VERSION_TOTAL_FIELDS } from "./model/version-record.ts";
export { readVersionRecords } from "./versions/read-version-records.ts";
export { readTimeline } from "./versions/timeline.ts";
export type { Timeline, TimelineOptions } from "./versions/timeline.ts";
export { readHistory } from "./head/timeline-source.ts";
export * from "./versions/version-at.ts";
export * from "./head/index.ts";
export * from "./checkpoint/index.ts";
export * from "./maintenance/index.ts";
export { measureStorage, partsTotal, storageOfPlan, HISTORY_REASONS } from "./measure/measure-storage.ts";
export type { StorageOptions, StorageParts, StorageReport, RunStorage, Totals, VersionHolding } from "./measure/measure-storage.ts";
export { collectReportData } from "./html-report/data.ts";
export type { ReportData, ReportRun, ReportVersion } from "./html-report/data.ts";
export { renderReport } from "./html-report/render.ts";
// Catalogs that own a table's commit pointer, and cleanup committing through them (catalog branch).
export { GlueCatalog, GlueLookupError, GlueUpdateError, describeGlueTable, parseGlueTableName } from "./catalog/glue.ts";
export type { GlueCatalogOptions, GlueTableName } from "./catalog/glue.ts";
export { RestCatalogError, RestCatalogTable, describeRestTable, parseRestTableName } from "./catalog/iceberg-rest.ts";
export type { AwsCredentials, RestAuth, RestTableOptions } from "./catalog/iceberg-rest.ts";
export type { CatalogCommitAnswer, TableCatalog } from "./formats/catalog-commit.ts";
export { runCleanupThroughCatalog, DEFAULT_CATALOG_REPLANS } from "./maintenance/catalog-cleanup.ts";
export type { CatalogCleanupOptions, CatalogCleanupReport } from "./maintenance/catalog-cleanup.ts";
