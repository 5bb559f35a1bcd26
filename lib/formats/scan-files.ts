/**
 * What a scan planner needs of a version's live files, in format-neutral words: each format turns
 * its own state (Iceberg manifests' partitions, bounds and delete files; Delta adds' partition
 * values, stats and deletion vectors; Lance fragments) into these (TableFormat.scanFiles), and
 * the planner above (lib/scan/) prunes with them without knowing any format.
 *
 * The one promise every fact makes: it is TRUE of every row of the file. A format that is unsure
 * (a truncated bound, a lossy number, a type it cannot decode) leaves the fact out; a missing
 * fact never drops a file.
 */
import type { ObjectStore } from "../store/object-store.ts";
import type { DataFileFooter } from "./data-file-footer.ts";
import type { TableSnapshot } from "./table-format.ts";

/** Column types the planner compares; "other" columns (nested, uuid, variant...) are never pruned on. */
export type ScanType = "boolean" | "int" | "float" | "decimal" | "string" | "binary" | "date" | "timestamp" | "timestamptz" | "time" | "other";

/**
 * A value of a column, by type: boolean; int: bigint; float: number; decimal: bigint unscaled at
 * the column's scale; string: string; binary: Uint8Array; date: days since 1970-01-01 (number);
 * timestamp, timestamptz and time: microseconds (bigint; timestamp is UTC wall-clock time).
 */
export type ScanValue = boolean | bigint | number | string | Uint8Array;

export interface ScanColumn {
  name: string;
  type: ScanType;
  /** Decimal scale (decimal columns only). */
  scale?: number;
  /** The format's own type name, for messages. */
  formatType: string;
}

/**
 * Facts about one column in one file. `lower`/`upper`: every non-null, non-NaN value v of the
 * column in the file has lower <= v <= upper (absent: unknown). Counts are absent when unknown.
 * `matches`: false only when no row of the file can hold exactly this value (Iceberg bucket and
 * truncate partitions); it is only ever asked about non-null values.
 */
export interface ColumnFacts {
  column: string;
  lower?: ScanValue;
  upper?: ScanValue;
  /** Rows of the file (values, null included) the counts refer to. */
  valueCount?: number;
  nullCount?: number;
  nanCount?: number;
  matches?: (value: ScanValue) => boolean;
}

/**
 * A file's facts asked column by column, for a format that decodes them only when a filter names
 * the column: the cheapest first (a partition value before bounds), since the planner stops at
 * the first fact that rules the file out.
 */
export interface FileFacts {
  of(column: string): Iterable<ColumnFacts>;
}

/** How a delete file removes rows. */
export type DeleteKind = "position-deletes" | "equality-deletes" | "deletion-vector";

export interface ScanDeleteFile {
  /** Key relative to the table root (null: inline in the metadata, see `inline`). */
  path: string | null;
  kind: DeleteKind;
  /** Rows it deletes (position and DV: row positions; equality: delete rows), when known. */
  rows: number | null;
  size: number | null;
  /** Equality deletes: the columns compared. */
  equalityColumns?: string[];
  /** Deletion vectors and file-scoped position deletes: where the blob sits and how long it is. */
  offset?: number | null;
  length?: number | null;
  /** Inline deletion vector bytes as the format stores them (Delta: Z85 text). */
  inline?: string | null;
  /** The format's own storage word for it (Delta: storageType u, p or i; Iceberg: the file format). */
  storage: string;
}

export interface ScanDataFile {
  /** Data file keys relative to the table root (a Lance fragment may have several). */
  paths: string[];
  fileFormat: string;
  size: number;
  /** Rows stored, deleted ones included, when known. */
  rows: number | null;
  /** Facts that hold for every row; several entries for one column all hold. A list, or asked per column (FileFacts). */
  facts: readonly ColumnFacts[] | FileFacts;
  /** Indexes into ScanFiles.deleteFiles of the delete files that apply to this file. */
  deletes: number[];
  /** The format's partition, in words, for people (`part=a`, `bucket(id, 4)=3`); empty when unpartitioned. */
  partition: string;
}

export interface ScanFiles {
  columns: ScanColumn[];
  dataFiles: ScanDataFile[];
  /** Every live delete file (or deletion vector) of the version. */
  deleteFiles: ScanDeleteFile[];
}

/** One planned data file, as the format's row reader is given it (lib/scan/plan.ts PlannedFile has these). */
export interface FileToRead {
  paths: string[];
  /** The delete files that apply to it (its deletion vector, position and equality deletes). */
  deletes: ScanDeleteFile[];
  /** The head's inline footer of paths[0]: when given, the reader does not fetch the footer. */
  footer: DataFileFooter | null;
}

/**
 * Rows of one data file with its deletes applied, by table column name: each value in the
 * column's ScanValue form (null for NULL; NaN stays a number), every array `rows` long. Columns
 * the file lacks (added later, or a partition value outside the file) are filled by the format.
 */
export interface RowBatch {
  rows: number;
  columns: Map<string, (ScanValue | null)[]>;
}

/** Reads the named columns of one planned file's live rows (TableFormat.readRows). */
export type RowReader = (store: ObjectStore, snapshot: TableSnapshot, file: FileToRead, columns: readonly string[]) => Promise<RowBatch>;
