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
export { TABLE_FORMATS, detectFormat, formatByName } from "./formats/index.ts";
export { lanceFormat } from "./formats/lance/lance-format.ts";
export type { VersionRecord } from "./versions/version-record.ts";
export { VERSION_RECORD_FIELDS } from "./versions/version-record.ts";
export { readVersionRecords } from "./versions/read-version-records.ts";
export { readTimeline } from "./versions/timeline.ts";
export type { Timeline, TimelineOptions } from "./versions/timeline.ts";
export * from "./versions/version-at.ts";
export * from "./head/index.ts";
export * from "./checkpoint/index.ts";
export * from "./maintenance/index.ts";
