/**
 * What a head says about a table, and its mapping onto the model. Format-neutral: it is built
 * from a TableSnapshot (any TableFormat), so Delta or Iceberg heads need no change here.
 *
 * Mandatory sections (always written): raw_metadata (Lance: the manifest as stored), summary,
 * live_files, referenced_files, schema, config, recent_versions. Optional: footers, filled
 * within the inline budget (see budget.ts).
 */
import type { DataFileFooter } from "../formats/data-file-footer.ts";
import type { LiveFile, FileReference, SchemaField, TableSnapshot, VersionFile } from "../formats/table-format.ts";
import type { VersionRecord } from "../model/version-record.ts";
import type { LiveFileColumns } from "./sectioned-content.ts";
import { formatSectionTables, formatSectionsOfModel } from "./format-sections.ts";
import { CorruptHeadError } from "./errors.ts";
import { findTable, rowCount } from "./model.ts";
import type { ColumnType, ColumnValueOf, HeadColumn, HeadModel, HeadTable } from "./model.ts";

/** Bumped when the meaning of sections changes; a reader refuses contents newer than it knows. */
export const HEAD_CONTENT_VERSION = 1;

export type { DataFileFooter };

/** Every version after `after` (the newest checkpoint's last version; null = no checkpoint) up to the head's. */
export interface RecentVersions {
  after: number | null;
  records: VersionRecord[];
}

export interface HeadContent {
  format: string;
  tableVersion: number;
  builtAtMillis: number;
  snapshot: TableSnapshot;
  recentVersions: RecentVersions;
  footers: DataFileFooter[];
  /** Footers of live data files left out for the budget. */
  footersOmitted: number;
  inlineBudgetBytes: number;
  /** A sectioned head's live files as columns, without an object per file (sectioned-content.ts). */
  liveFileColumns?: () => LiveFileColumns;
}

export const MANDATORY_SECTIONS = ["raw_metadata", "summary", "live_files", "referenced_files", "schema", "config", "recent_versions"] as const;

export function contentToModel(content: HeadContent): HeadModel {
  const { snapshot } = content;
  const file = snapshot.versionFile;
  return {
    properties: {
      "content_version": String(HEAD_CONTENT_VERSION),
      "format": content.format,
      "table_version": String(content.tableVersion),
      "built_at_millis": String(content.builtAtMillis),
      ...versionFileProperties(file),
      "recent_versions.after": content.recentVersions.after === null ? "" : String(content.recentVersions.after),
      "inline_budget_bytes": String(content.inlineBudgetBytes),
      "footers.omitted": String(content.footersOmitted),
    },
    tables: [
      { name: "raw_metadata", columns: [col("bytes", "binary", [snapshot.raw])] },
      recordsTable("summary", [snapshot.record]),
      liveFilesTable(snapshot.liveFiles),
      referencedFilesTable(snapshot.referencedFiles),
      schemaTable(snapshot.schema),
      {
        name: "config",
        columns: [col("key", "utf8", Object.keys(snapshot.config)), col("value", "utf8", Object.values(snapshot.config))],
      },
      recordsTable("recent_versions", content.recentVersions.records),
      footersTable(content.footers),
      ...formatSectionTables(snapshot.sections),
    ],
  };
}

/**
 * The version file a head describes, as properties. `id` and `current_in_file` were added later:
 * a head without them reads as a file whose version is not known to be its file's current one,
 * so a loader checks it the long way (reads the file), never the short one.
 */
function versionFileProperties(file: VersionFile): Record<string, string> {
  return {
    "version_file.key": file.key,
    "version_file.size": String(file.size),
    "version_file.etag": file.etag,
    "version_file.last_modified_millis": String(file.lastModified.getTime()),
    ...(file.id !== undefined ? { "version_file.id": file.id } : {}),
    ...(file.currentInFile === true ? { "version_file.current_in_file": "true" } : {}),
  };
}

/** The version file from a head's properties (versionFileProperties' inverse). */
export function readVersionFile(read: SectionReader, tableVersion: number): VersionFile {
  const id = read.optionalProperty("version_file.id");
  const current = read.optionalProperty("version_file.current_in_file");
  if (current !== null && current !== "true") throw new CorruptHeadError(read.uri, `head property version_file.current_in_file=${JSON.stringify(current)} is not "true"`);
  return {
    version: tableVersion,
    key: read.property("version_file.key"),
    size: read.intProperty("version_file.size"),
    etag: read.property("version_file.etag"),
    lastModified: new Date(read.intProperty("version_file.last_modified_millis")),
    ...(id !== null ? { id } : {}),
    ...(current !== null ? { currentInFile: true } : {}),
  };
}

export function modelToContent(model: HeadModel, uri: string): HeadContent {
  const read = new SectionReader(model, uri);
  const contentVersion = read.intProperty("content_version");
  if (contentVersion > HEAD_CONTENT_VERSION) throw new CorruptHeadError(uri, `head content version ${contentVersion} is newer than this reader (${HEAD_CONTENT_VERSION})`);
  const tableVersion = read.intProperty("table_version");
  const after = read.property("recent_versions.after");
  const raw = read.column("raw_metadata", "bytes", "binary");
  if (raw.length !== 1 || raw[0] === null) throw new CorruptHeadError(uri, "head raw_metadata must hold exactly one value");
  const summary = readRecords(read, "summary");
  if (summary.length !== 1) throw new CorruptHeadError(uri, "head summary must hold exactly one version");
  const record = summary[0]!;
  if (record.version !== tableVersion) throw new CorruptHeadError(uri, `head header says version ${tableVersion}, its summary says ${record.version}`);
  const records = readRecords(read, "recent_versions");
  const sections = formatSectionsOfModel(model);
  const snapshot: TableSnapshot = {
    record,
    unresolvedReferences: [],
    ...(sections.length > 0 ? { sections } : {}),
    referencedFiles: readReferencedFiles(read),
    liveFiles: readLiveFiles(read),
    schema: readSchema(read),
    config: readConfig(read),
    raw: raw[0],
    versionFile: readVersionFile(read, tableVersion),
  };
  return {
    format: read.property("format"),
    tableVersion,
    builtAtMillis: read.intProperty("built_at_millis"),
    snapshot,
    recentVersions: { after: after === "" ? null : read.intProperty("recent_versions.after"), records },
    footers: readFooters(read),
    footersOmitted: read.intProperty("footers.omitted"),
    inlineBudgetBytes: read.intProperty("inline_budget_bytes"),
  };
}

/**
 * The head is for exactly this version file: same format, version, size and ETag. The number
 * alone is not enough: a table deleted and recreated reuses version numbers.
 */
export function headDescribesFile(content: HeadContent, file: VersionFile, formatName: string): boolean {
  const recorded = content.snapshot.versionFile;
  return content.format === formatName && content.tableVersion === file.version && recorded.size === file.size && recorded.etag === file.etag;
}

function col<T extends ColumnType>(name: string, type: T, values: (ColumnValueOf[T] | null)[]): HeadColumn {
  return { name, type, values } as HeadColumn;
}

function recordsTable(name: string, records: readonly VersionRecord[]): HeadTable {
  const ints = (pick: (r: VersionRecord) => number | null) => records.map(pick);
  return {
    name,
    columns: [
      col(
        "version",
        "int64",
        ints((r) => r.version),
      ),
      col(
        "timestamp_millis",
        "int64",
        ints((r) => r.timestamp_millis),
      ),
      col(
        "total_fragments",
        "int64",
        ints((r) => r.total_fragments),
      ),
      col(
        "total_data_files",
        "int64",
        ints((r) => r.total_data_files),
      ),
      col(
        "total_files_size",
        "int64",
        ints((r) => r.total_files_size),
      ),
      col(
        "total_deletion_files",
        "int64",
        ints((r) => r.total_deletion_files),
      ),
      col(
        "total_data_file_rows",
        "int64",
        ints((r) => r.total_data_file_rows),
      ),
      col(
        "total_deletion_file_rows",
        "int64",
        ints((r) => r.total_deletion_file_rows),
      ),
      col(
        "total_rows",
        "int64",
        ints((r) => r.total_rows),
      ),
      col(
        "is_tagged",
        "bool",
        records.map((r) => r.is_tagged),
      ),
      col(
        "is_cleaned_up",
        "bool",
        records.map((r) => r.is_cleaned_up),
      ),
      col(
        "transaction_uuid",
        "utf8",
        records.map((r) => r.transaction_uuid),
      ),
      col(
        "read_version",
        "int64",
        ints((r) => r.read_version),
      ),
      col(
        "operation_type",
        "utf8",
        records.map((r) => r.operation_type),
      ),
      col(
        "transaction_properties",
        "utf8",
        records.map((r) => JSON.stringify(r.transaction_properties)),
      ),
      col(
        "version_id",
        "utf8",
        records.map((r) => r.version_id),
      ),
      col(
        "parent_ids",
        "utf8_list",
        records.map((r) => r.parent_ids),
      ),
      col(
        "branch",
        "utf8",
        records.map((r) => r.branch),
      ),
      col(
        "metrics",
        "utf8",
        records.map((r) => JSON.stringify(r.metrics)),
      ),
    ],
  };
}

function liveFilesTable(files: readonly LiveFile[]): HeadTable {
  return {
    name: "live_files",
    columns: [
      col(
        "fragment_id",
        "int64",
        files.map((f) => f.fragmentId),
      ),
      col(
        "paths",
        "utf8_list",
        files.map((f) => f.paths),
      ),
      col(
        "size",
        "int64",
        files.map((f) => f.size),
      ),
      col(
        "physical_rows",
        "int64",
        files.map((f) => f.physicalRows),
      ),
      col(
        "deletion_file",
        "utf8",
        files.map((f) => f.deletionFile),
      ),
      col(
        "deleted_rows",
        "int64",
        files.map((f) => f.deletedRows),
      ),
    ],
  };
}

function referencedFilesTable(files: readonly FileReference[]): HeadTable {
  return {
    name: "referenced_files",
    columns: [
      col(
        "path",
        "utf8",
        files.map((f) => f.path),
      ),
      col(
        "kind",
        "utf8",
        files.map((f) => f.role),
      ),
      col(
        "size",
        "int64",
        files.map((f) => f.size ?? null),
      ),
    ],
  };
}

function schemaTable(fields: readonly SchemaField[]): HeadTable {
  return {
    name: "schema",
    columns: [
      col(
        "id",
        "int64",
        fields.map((f) => f.id),
      ),
      col(
        "parent_id",
        "int64",
        fields.map((f) => f.parentId),
      ),
      col(
        "name",
        "utf8",
        fields.map((f) => f.name),
      ),
      col(
        "logical_type",
        "utf8",
        fields.map((f) => f.logicalType),
      ),
      col(
        "nullable",
        "bool",
        fields.map((f) => f.nullable),
      ),
    ],
  };
}

function footersTable(footers: readonly DataFileFooter[]): HeadTable {
  return {
    name: "footers",
    columns: [
      col(
        "path",
        "utf8",
        footers.map((f) => f.path),
      ),
      col(
        "file_size",
        "int64",
        footers.map((f) => f.fileSize),
      ),
      col(
        "offset",
        "int64",
        footers.map((f) => f.offset),
      ),
      col(
        "bytes",
        "binary",
        footers.map((f) => f.bytes),
      ),
    ],
  };
}

/** Typed access to a decoded model; every miss is a CorruptHeadError naming the head. */
export class SectionReader {
  private readonly model: HeadModel;
  readonly uri: string;
  constructor(model: HeadModel, uri: string) {
    this.model = model;
    this.uri = uri;
  }

  property(key: string): string {
    const value = this.model.properties[key];
    if (value === undefined) throw new CorruptHeadError(this.uri, `head lacks property ${key}`);
    return value;
  }

  /** A property a head may lack (written before it existed); null then. */
  optionalProperty(key: string): string | null {
    return this.model.properties[key] ?? null;
  }

  intProperty(key: string): number {
    const text = this.property(key);
    const value = Number(text);
    if (text === "" || !Number.isSafeInteger(value)) throw new CorruptHeadError(this.uri, `head property ${key}=${JSON.stringify(text)} is not an integer`);
    return value;
  }

  table(name: string): HeadTable {
    const table = findTable(this.model, name);
    if (!table) throw new CorruptHeadError(this.uri, `head lacks section ${name}`);
    return table;
  }

  rows(name: string): number {
    return rowCount(this.table(name));
  }

  column<T extends ColumnType>(tableName: string, name: string, type: T): (ColumnValueOf[T] | null)[] {
    const column = this.table(tableName).columns.find((c) => c.name === name);
    if (!column) throw new CorruptHeadError(this.uri, `head section ${tableName} lacks column ${name}`);
    if (column.type !== type) throw new CorruptHeadError(this.uri, `head column ${tableName}.${name} is ${column.type}, expected ${type}`);
    return column.values as (ColumnValueOf[T] | null)[];
  }

  /** A column a head may lack (written before the column existed); null then. */
  optionalColumn<T extends ColumnType>(tableName: string, name: string, type: T): (ColumnValueOf[T] | null)[] | null {
    return this.table(tableName).columns.some((c) => c.name === name) ? this.column(tableName, name, type) : null;
  }

  /** A column whose values must all be present. */
  required<T extends ColumnType>(tableName: string, name: string, type: T): ColumnValueOf[T][] {
    const values = this.column(tableName, name, type);
    // includes() is a builtin scan: at 100K live files several times faster than some() with a callback.
    if (values.includes(null)) throw new CorruptHeadError(this.uri, `head column ${tableName}.${name} holds a null`);
    return values as ColumnValueOf[T][];
  }
}

export function readRecords(read: SectionReader, table: string): VersionRecord[] {
  const int = (name: string) => read.required(table, name, "int64");
  const version = int("version");
  const timestamp = int("timestamp_millis");
  const total = (name: string) => read.column(table, name, "int64");
  const fragments = total("total_fragments");
  const dataFiles = total("total_data_files");
  const filesSize = total("total_files_size");
  const deletionFiles = total("total_deletion_files");
  const dataFileRows = total("total_data_file_rows");
  const deletionFileRows = total("total_deletion_file_rows");
  const rows = total("total_rows");
  // Heads written before the model's fields hold numbered versions on one line.
  const ids = read.optionalColumn(table, "version_id", "utf8");
  const parents = read.optionalColumn(table, "parent_ids", "utf8_list");
  const branches = read.optionalColumn(table, "branch", "utf8");
  const metrics = read.optionalColumn(table, "metrics", "utf8");
  const tagged = read.required(table, "is_tagged", "bool");
  const cleanedUp = read.required(table, "is_cleaned_up", "bool");
  const uuid = read.column(table, "transaction_uuid", "utf8");
  const readVersion = read.column(table, "read_version", "int64");
  const operation = read.column(table, "operation_type", "utf8");
  const properties = read.required(table, "transaction_properties", "utf8");
  return version.map((v, i) => ({
    version: v,
    timestamp_millis: timestamp[i]!,
    total_fragments: fragments[i] ?? null,
    total_data_files: dataFiles[i] ?? null,
    total_files_size: filesSize[i] ?? null,
    total_deletion_files: deletionFiles[i] ?? null,
    total_data_file_rows: dataFileRows[i] ?? null,
    total_deletion_file_rows: deletionFileRows[i] ?? null,
    total_rows: rows[i] ?? null,
    is_tagged: tagged[i]!,
    is_cleaned_up: cleanedUp[i]!,
    transaction_uuid: uuid[i] ?? null,
    read_version: readVersion[i] ?? null,
    operation_type: operation[i] ?? null,
    transaction_properties: parseProperties(properties[i]!, read, table),
    version_id: ids?.[i] ?? String(v),
    parent_ids: parents ? (parents[i] ?? []) : v > 1 ? [String(v - 1)] : [],
    branch: branches?.[i] ?? null,
    metrics: metrics?.[i] ? (JSON.parse(metrics[i]!) as Record<string, number>) : {},
  }));
}

function parseProperties(text: string, read: SectionReader, table: string): Record<string, string> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value) || Object.values(value).some((v) => typeof v !== "string")) {
    throw new CorruptHeadError(read.uri, `head ${table}.transaction_properties is not a JSON string map`);
  }
  return value as Record<string, string>;
}

export function readLiveFiles(read: SectionReader): LiveFile[] {
  const t = "live_files";
  const ids = read.required(t, "fragment_id", "int64");
  const paths = read.required(t, "paths", "utf8_list");
  const sizes = read.required(t, "size", "int64");
  const physical = read.required(t, "physical_rows", "int64");
  const deletion = read.column(t, "deletion_file", "utf8");
  const deleted = read.required(t, "deleted_rows", "int64");
  return ids.map((fragmentId, i) => ({
    fragmentId,
    paths: paths[i]!,
    size: sizes[i]!,
    physicalRows: physical[i]!,
    deletionFile: deletion[i] ?? null,
    deletedRows: deleted[i]!,
  }));
}

export function readReferencedFiles(read: SectionReader): FileReference[] {
  const t = "referenced_files";
  const paths = read.required(t, "path", "utf8");
  const kinds = read.required(t, "kind", "utf8");
  const sizes = read.column(t, "size", "int64");
  return paths.map((path, i) => {
    const role = kinds[i]!;
    if (role === "") throw new CorruptHeadError(read.uri, `head referenced file ${path} has no role`);
    const size = sizes[i];
    return size === null || size === undefined ? { path, role } : { path, role, size };
  });
}

export function readSchema(read: SectionReader): SchemaField[] {
  const t = "schema";
  const ids = read.required(t, "id", "int64");
  const parents = read.required(t, "parent_id", "int64");
  const names = read.required(t, "name", "utf8");
  const types = read.required(t, "logical_type", "utf8");
  const nullable = read.required(t, "nullable", "bool");
  return ids.map((id, i) => ({ id, parentId: parents[i]!, name: names[i]!, logicalType: types[i]!, nullable: nullable[i]! }));
}

export function readConfig(read: SectionReader): Record<string, string> {
  const keys = read.required("config", "key", "utf8");
  const values = read.required("config", "value", "utf8");
  return Object.fromEntries(keys.map((key, i) => [key, values[i]!]));
}

export function readFooters(read: SectionReader): DataFileFooter[] {
  const t = "footers";
  if (read.rows(t) === 0) return [];
  const paths = read.required(t, "path", "utf8");
  const sizes = read.required(t, "file_size", "int64");
  const offsets = read.required(t, "offset", "int64");
  const bytes = read.required(t, "bytes", "binary");
  return paths.map((path, i) => ({ path, fileSize: sizes[i]!, offset: offsets[i]!, bytes: bytes[i]! }));
}
