/**
 * Compares lakewarden's VersionRecords with LanceDB's own `listVersions()` and `tags()`
 * field by field: the contract of `lakewarden versions`.
 */
import type { Table } from "@lancedb/lancedb";
import { expect } from "vitest";
import type { VersionRecord } from "../../lib/model/version-record.ts";
import { VERSION_TOTAL_FIELDS } from "../../lib/model/version-record.ts";

export const SUMMARY_KEYS = VERSION_TOTAL_FIELDS;

export async function expectRecordsMatchLanceDb(records: VersionRecord[], table: Table): Promise<void> {
  const lance = await table.listVersions();
  expect(records.map((r) => r.version)).toEqual(lance.map((v) => v.version));
  const taggedVersions = new Set<number>();
  for (const contents of Object.values(await (await table.tags()).list())) taggedVersions.add(contents.version);
  for (const [i, theirs] of lance.entries()) {
    const ours = records[i]!;
    const expected: Record<string, unknown> = { version: theirs.version, timestamp_millis: theirs.timestamp.getTime() };
    const actual: Record<string, unknown> = { version: ours.version, timestamp_millis: ours.timestamp_millis };
    for (const key of SUMMARY_KEYS) {
      expected[key] = Number(theirs.metadata[key]);
      actual[key] = ours[key];
    }
    expected.is_tagged = taggedVersions.has(theirs.version);
    actual.is_tagged = ours.is_tagged;
    expect(actual, `version ${theirs.version}`).toEqual(expected);
  }
}
