/**
 * HeadContent from a sectioned head, section by section: the properties alone say which
 * version file the head describes (so a stale or foreign head is rejected before anything
 * else is decompressed), the summary (the version record) is decoded when the content is
 * built, every other section (versions since the checkpoint, config, schema, live files,
 * referenced files, raw metadata, footers) only when a caller reads it. Every section's
 * checksum is verified before (SectionedHead.verifyChecksums), so only a writer's bug can make
 * a later decode fail.
 */
import type { FileReference, FormatSection, LiveFile, SchemaField, TableSnapshot, VersionFile } from "../formats/table-format.ts";
import { FORMAT_SECTION_PREFIX, formatSectionsOf } from "./format-sections.ts";
import type { DataFileFooter } from "../formats/data-file-footer.ts";
import { HEAD_CONTENT_VERSION, SectionReader, readConfig, readVersionFile, readFooters, readLiveFiles, readRecords, readReferencedFiles, readSchema } from "./content.ts";
import type { HeadContent } from "./content.ts";
import { CorruptHeadError } from "./errors.ts";
import type { HeadTable } from "./model.ts";
import type { SectionedHead } from "./sectioned.ts";

/** What the properties section alone says: enough to decide whether the head is current. */
export interface HeadIdentity {
  format: string;
  tableVersion: number;
  versionFile: VersionFile;
}

function propertyReader(head: SectionedHead): SectionReader {
  return new SectionReader({ properties: head.properties(), tables: [] }, head.uri);
}

function tableReader(head: SectionedHead, name: string): SectionReader {
  const table = head.table(name);
  if (!table) throw new CorruptHeadError(head.uri, `head lacks section ${name}`);
  return new SectionReader({ properties: {}, tables: [table] }, head.uri);
}

/** Decodes the properties section only. */
export function headIdentity(head: SectionedHead): HeadIdentity {
  const read = propertyReader(head);
  const contentVersion = read.intProperty("content_version");
  if (contentVersion > HEAD_CONTENT_VERSION) throw new CorruptHeadError(head.uri, `head content version ${contentVersion} is newer than this reader (${HEAD_CONTENT_VERSION})`);
  const tableVersion = read.intProperty("table_version");
  if (tableVersion !== head.header.tableVersion) {
    throw new CorruptHeadError(head.uri, `header says version ${head.header.tableVersion}, body says ${tableVersion}`);
  }
  return {
    format: read.property("format"),
    tableVersion,
    versionFile: readVersionFile(read, tableVersion),
  };
}

/** The versions since the checkpoint: properties + recent_versions only. */
export function headRecentRecords(head: SectionedHead): HeadContent["recentVersions"] {
  const read = propertyReader(head);
  const after = read.property("recent_versions.after");
  return { after: after === "" ? null : read.intProperty("recent_versions.after"), records: readRecords(tableReader(head, "recent_versions"), "recent_versions") };
}

/** Lazy HeadContent: the large sections are decoded on first access (errors surface there). */
export function sectionedContent(head: SectionedHead): HeadContent {
  const identity = headIdentity(head);
  const read = propertyReader(head);
  const summary = readRecords(tableReader(head, "summary"), "summary");
  if (summary.length !== 1) throw new CorruptHeadError(head.uri, "head summary must hold exactly one version");
  const record = summary[0]!;
  if (record.version !== identity.tableVersion) throw new CorruptHeadError(head.uri, `head header says version ${identity.tableVersion}, its summary says ${record.version}`);
  let config: Record<string, string> | null = null;
  let schema: SchemaField[] | null = null;
  let recentVersions: HeadContent["recentVersions"] | null = null;
  let liveFiles: LiveFile[] | null = null;
  let referencedFiles: FileReference[] | null = null;
  let raw: Uint8Array | null = null;
  let footers: DataFileFooter[] | null = null;
  let sections: FormatSection[] | null = null;
  const snapshot: TableSnapshot = {
    record,
    // A head holds only paths that were keys when it was written.
    unresolvedReferences: [],
    get referencedFiles(): FileReference[] {
      return (referencedFiles ??= readReferencedFiles(tableReader(head, "referenced_files")));
    },
    get liveFiles(): LiveFile[] {
      return (liveFiles ??= readLiveFiles(tableReader(head, "live_files")));
    },
    get schema(): SchemaField[] {
      return (schema ??= readSchema(tableReader(head, "schema")));
    },
    get config(): Record<string, string> {
      return (config ??= readConfig(tableReader(head, "config")));
    },
    get raw(): Uint8Array {
      if (raw) return raw;
      const values = tableReader(head, "raw_metadata").column("raw_metadata", "bytes", "binary");
      if (values.length !== 1 || values[0] === null) throw new CorruptHeadError(head.uri, "head raw_metadata must hold exactly one value");
      return (raw = values[0]!);
    },
    versionFile: identity.versionFile,
    get sections(): FormatSection[] {
      if (sections) return sections;
      const names = head.entries.map((entry) => entry.name).filter((name) => name.startsWith(FORMAT_SECTION_PREFIX));
      return (sections = formatSectionsOf(names.map((name) => head.table(name)!)));
    },
  };
  return {
    format: identity.format,
    tableVersion: identity.tableVersion,
    builtAtMillis: read.intProperty("built_at_millis"),
    snapshot,
    get recentVersions() {
      return (recentVersions ??= headRecentRecords(head));
    },
    get footers(): DataFileFooter[] {
      return (footers ??= head.has("footers") ? readFooters(tableReader(head, "footers")) : []);
    },
    footersOmitted: read.intProperty("footers.omitted"),
    inlineBudgetBytes: read.intProperty("inline_budget_bytes"),
    liveFileColumns: () => liveFileColumnsOf(head),
  };
}

/** The live files as columns (one array per field, no object per file), for callers that can use them. */
export interface LiveFileColumns {
  count: number;
  fragmentId: readonly number[];
  paths: readonly (readonly string[])[];
  size: readonly number[];
  physicalRows: readonly number[];
  deletionFile: readonly (string | null)[];
  deletedRows: readonly number[];
}

export function liveFileColumnsOf(head: SectionedHead): LiveFileColumns {
  const table = head.table("live_files");
  if (!table) throw new CorruptHeadError(head.uri, "head lacks section live_files");
  const read = new SectionReader({ properties: {}, tables: [table as HeadTable] }, head.uri);
  const t = "live_files";
  const fragmentId = read.required(t, "fragment_id", "int64");
  return {
    count: fragmentId.length,
    fragmentId,
    paths: read.required(t, "paths", "utf8_list"),
    size: read.required(t, "size", "int64"),
    physicalRows: read.required(t, "physical_rows", "int64"),
    deletionFile: read.column(t, "deletion_file", "utf8"),
    deletedRows: read.required(t, "deleted_rows", "int64"),
  };
}

/** The same columns from objects (a state loaded from the manifest). */
export function liveFileColumnsFrom(files: readonly LiveFile[]): LiveFileColumns {
  return {
    count: files.length,
    fragmentId: files.map((f) => f.fragmentId),
    paths: files.map((f) => f.paths),
    size: files.map((f) => f.size),
    physicalRows: files.map((f) => f.physicalRows),
    deletionFile: files.map((f) => f.deletionFile),
    deletedRows: files.map((f) => f.deletedRows),
  };
}
