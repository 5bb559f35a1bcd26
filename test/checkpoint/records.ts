/** VersionRecords for tests that need history without a table. */
import type { VersionRecord } from "../../lib/model/version-record.ts";

export function versionRecord(version: number, overrides: Partial<VersionRecord> = {}): VersionRecord {
  return {
    version,
    timestamp_millis: 1_760_000_000_000 + version * 60_000,
    total_fragments: version,
    total_data_files: version,
    total_files_size: 1000 * version,
    total_deletion_files: 0,
    total_data_file_rows: 10 * version,
    total_deletion_file_rows: 0,
    total_rows: 10 * version,
    is_tagged: false,
    is_cleaned_up: false,
    transaction_uuid: `uuid-${version}`,
    read_version: version > 1 ? version - 1 : null,
    operation_type: version === 1 ? "Overwrite" : "Append",
    transaction_properties: {},
    version_id: String(version),
    parent_ids: version > 1 ? [String(version - 1)] : [],
    branch: null,
    metrics: {},
    ...overrides,
  };
}
