/**
 * The checkpoint's Arrow schema: the VersionRecord columns in contract order, with
 * `transaction_properties` as a JSON string, and file-level metadata under `lakewarden.*`.
 * This is a published format (DESIGN.md "Version checkpoint"); change it only by bumping
 * CHECKPOINT_FORMAT_VERSION and keeping a reader for the old one.
 */
import { Bool, Field, Int64, Schema, Utf8 } from "apache-arrow";
import type { DataType } from "apache-arrow";
import { VERSION_RECORD_FIELDS } from "../model/version-record.ts";

/**
 * "2" adds the model's columns (version_id, parent_ids, branch, metrics) after the seed's and
 * makes the seven totals nullable; files of format "1" (the seed's columns only) stay readable.
 */
export const CHECKPOINT_FORMAT_VERSION = "2";
export const READABLE_CHECKPOINT_FORMAT_VERSIONS = ["1", "2"] as const;

/** File metadata keys (Arrow schema custom metadata, all values strings). */
export const CHECKPOINT_METADATA = {
  formatVersion: "lakewarden.checkpoint.format_version",
  /** Newest table version the file covers; equals the version in its name. */
  version: "lakewarden.checkpoint.version",
  /** When the checkpoint was written, Unix milliseconds. */
  createdAtMillis: "lakewarden.checkpoint.created_at_millis",
  /** When the table was created (version 1's commit time), Unix milliseconds. */
  datasetCreatedAtMillis: "lakewarden.dataset.created_at_millis",
  /** Which version that time came from: "1" when version 1 was known, else the earliest known one. */
  datasetCreatedFromVersion: "lakewarden.dataset.created_from_version",
  tableFormat: "lakewarden.table_format",
  /** JSON array of the archive segment keys that hold the rows older than this file's (format 2). */
  archiveSegments: "lakewarden.checkpoint.archive_segments",
  /** JSON: the history-protection state the last cleanup left (boundary, result, reason, removed_earlier). */
  protection: "lakewarden.checkpoint.protection",
  /**
   * JSON list of the damaged checkpoints and segments the writer set aside under
   * `_lakewarden/damaged/` (lib/checkpoint/damaged.ts DamageNote), so readers still report them.
   */
  damaged: "lakewarden.checkpoint.damaged",
} as const;

type ColumnName = (typeof VERSION_RECORD_FIELDS)[number];

/** Column → Arrow type and nullability. Numbers are Int64 (u64 versions fit: we refuse > 2^53 earlier). */
export const CHECKPOINT_COLUMNS: Record<ColumnName, { type: DataType; nullable: boolean }> = {
  version: { type: new Int64(), nullable: false },
  timestamp_millis: { type: new Int64(), nullable: false },
  total_fragments: { type: new Int64(), nullable: true },
  total_data_files: { type: new Int64(), nullable: true },
  total_files_size: { type: new Int64(), nullable: true },
  total_deletion_files: { type: new Int64(), nullable: true },
  total_data_file_rows: { type: new Int64(), nullable: true },
  total_deletion_file_rows: { type: new Int64(), nullable: true },
  total_rows: { type: new Int64(), nullable: true },
  is_tagged: { type: new Bool(), nullable: false },
  is_cleaned_up: { type: new Bool(), nullable: false },
  transaction_uuid: { type: new Utf8(), nullable: true },
  read_version: { type: new Int64(), nullable: true },
  operation_type: { type: new Utf8(), nullable: true },
  transaction_properties: { type: new Utf8(), nullable: false },
  version_id: { type: new Utf8(), nullable: false },
  /** A JSON array of strings. */
  parent_ids: { type: new Utf8(), nullable: false },
  branch: { type: new Utf8(), nullable: true },
  /** A JSON object of numbers. */
  metrics: { type: new Utf8(), nullable: false },
};

function checkpointFields(): Field[] {
  return VERSION_RECORD_FIELDS.map((name) => new Field(name, CHECKPOINT_COLUMNS[name].type, CHECKPOINT_COLUMNS[name].nullable));
}

export function checkpointSchema(metadata: Map<string, string>): Schema {
  return new Schema(checkpointFields(), metadata);
}
