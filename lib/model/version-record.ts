/**
 * One version of a table, format-neutral. The field names are the published contract:
 * the columns of a version checkpoint and the objects of `lakewarden versions --json`
 * (snake_case on purpose, so the same record flows from commit file to checkpoint to JSON
 * without a mapping layer).
 *
 * Identity: `version_id` is the format's own id as a string, exact for 64-bit ids (an Iceberg
 * snapshot id exceeds 2^53); `version` is the ordering sequence every layer above the formats
 * sorts and compares by (Lance and Delta: the version number; Iceberg: the snapshot's sequence
 * in the table's history). Formats guarantee `version` is a safe integer.
 *
 * The seven totals are what LanceDB's listVersions() reports; a format that cannot know one
 * for a version (a Delta commit read without replaying the log) leaves it null.
 */
export interface VersionRecord {
  version: number;
  timestamp_millis: number;
  total_fragments: number | null;
  total_data_files: number | null;
  total_files_size: number | null;
  total_deletion_files: number | null;
  total_data_file_rows: number | null;
  total_deletion_file_rows: number | null;
  total_rows: number | null;
  is_tagged: boolean;
  is_cleaned_up: boolean;
  transaction_uuid: string | null;
  read_version: number | null;
  operation_type: string | null;
  transaction_properties: Record<string, string>;
  /** The format's id of this version, exact (Lance, Delta: the version number as text). */
  version_id: string;
  /** Ids of the versions this one was committed on top of (none for the first). */
  parent_ids: string[];
  /** The branch the version was committed to; null for the main branch. */
  branch: string | null;
  /** Summary numbers the format records beyond the totals (Delta operationMetrics, Iceberg summary counts). */
  metrics: Record<string, number>;
}

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

/** The column order of the contract, for encoders that need one. */
export const VERSION_RECORD_FIELDS = [
  "version",
  "timestamp_millis",
  ...VERSION_TOTAL_FIELDS,
  "is_tagged",
  "is_cleaned_up",
  "transaction_uuid",
  "read_version",
  "operation_type",
  "transaction_properties",
  "version_id",
  "parent_ids",
  "branch",
  "metrics",
] as const satisfies readonly (keyof VersionRecord)[];

/** The fields of the first checkpoint format (seed 000); files of that format hold only these. */
export const SEED_RECORD_FIELDS = VERSION_RECORD_FIELDS.slice(0, 15);

export type VersionTotals = Pick<VersionRecord, (typeof VERSION_TOTAL_FIELDS)[number]>;

/** The model fields a format that numbers its versions fills the same way (Lance, Delta). */
export function numberedVersionIdentity(version: number, parent: number | null, branch: string | null = null): Pick<VersionRecord, "version_id" | "parent_ids" | "branch"> {
  return { version_id: String(version), parent_ids: parent === null ? [] : [String(parent)], branch };
}
