/**
 * One version of a table, format-neutral. The field names are the published contract:
 * the columns of a version checkpoint and the objects of `lakewarden versions --json`
 * (snake_case on purpose, so the same record flows from manifest to checkpoint to JSON
 * without a mapping layer).
 */
export interface VersionRecord {
  version: number;
  timestamp_millis: number;
  total_fragments: number;
  total_data_files: number;
  total_files_size: number;
  total_deletion_files: number;
  total_data_file_rows: number;
  total_deletion_file_rows: number;
  total_rows: number;
  is_tagged: boolean;
  is_cleaned_up: boolean;
  transaction_uuid: string | null;
  read_version: number | null;
  operation_type: string | null;
  transaction_properties: Record<string, string>;
}

/** The column order of the contract, for encoders that need one. */
export const VERSION_RECORD_FIELDS = [
  "version",
  "timestamp_millis",
  "total_fragments",
  "total_data_files",
  "total_files_size",
  "total_deletion_files",
  "total_data_file_rows",
  "total_deletion_file_rows",
  "total_rows",
  "is_tagged",
  "is_cleaned_up",
  "transaction_uuid",
  "read_version",
  "operation_type",
  "transaction_properties",
] as const satisfies readonly (keyof VersionRecord)[];

/** The seven totals of a version: what LanceDB's listVersions() reports as `metadata`. */
export const VERSION_TOTAL_FIELDS = [
  "total_fragments",
  "total_data_files",
  "total_files_size",
  "total_deletion_files",
  "total_data_file_rows",
  "total_deletion_file_rows",
  "total_rows",
] as const satisfies readonly (keyof VersionRecord)[];

export type VersionTotals = Pick<VersionRecord, (typeof VERSION_TOTAL_FIELDS)[number]>;
