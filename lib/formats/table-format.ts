/**
 * The one interface every table format implements. Everything above `lib/formats/`
 * speaks only these terms: versions, the files a version references, refs.
 */
import type { ObjectStore } from "../store/object-store.ts";
import type { VersionRecord } from "../versions/version-record.ts";
import type { DataFileFooterReader } from "./data-file-footer.ts";

/** A version's commit file as found by listing (Lance: a manifest under `_versions/`). */
export interface VersionFile {
  version: number;
  /** Key relative to the table root. */
  key: string;
  size: number;
  etag: string;
  lastModified: Date;
}

export type FileKind = "manifest" | "data" | "deletion" | "index" | "transaction";

/**
 * A file (or, for `index`, a directory: `path` ends in "/") that a version needs.
 * Paths are relative to the table root.
 */
export interface ReferencedFile {
  path: string;
  kind: FileKind;
  /** Bytes, when the format records it (0/undefined = unknown). */
  size?: number;
}

/** One live data unit of a version (Lance: a fragment). */
export interface LiveFile {
  fragmentId: number;
  /** Data file paths relative to the table root (a Lance fragment may have several files). */
  paths: string[];
  /** Sum of the data files' sizes in bytes (0 when the format does not record it). */
  size: number;
  /** Rows stored, including deleted ones. */
  physicalRows: number;
  /** Deletion file path relative to the table root, if any. */
  deletionFile: string | null;
  deletedRows: number;
}

export interface SchemaField {
  id: number;
  parentId: number;
  name: string;
  logicalType: string;
  nullable: boolean;
}

/** Everything one version says about the table. */
export interface TableSnapshot {
  /** Summary of this version; `is_tagged` and `is_cleaned_up` are false here (refs decide those). */
  record: VersionRecord;
  /** Every file this version needs, for cleanup's reference set. */
  referencedFiles: ReferencedFile[];
  liveFiles: LiveFile[];
  schema: SchemaField[];
  /** Table config (Lance: manifest `config` map); lakewarden reads keys prefixed `lakewarden.`. */
  config: Record<string, string>;
  /** The commit file's bytes as stored, so a reader can rebuild the full state from a head. */
  raw: Uint8Array;
  /** Where it came from. */
  versionFile: VersionFile;
}

export interface Tag {
  name: string;
  version: number;
  /** Branch the tagged version belongs to; null = main. */
  branch: string | null;
}

export interface Branch {
  name: string;
  parentBranch: string | null;
  parentVersion: number;
}

export interface Refs {
  tags: Tag[];
  branches: Branch[];
}

export interface TableFormat {
  readonly name: string;
  /** Prefix holding the commit files, e.g. `_versions/`. */
  readonly versionsPrefix: string;
  /** Top-level folders the format owns; cleanup lists only these for candidates. */
  readonly managedPrefixes: readonly string[];

  /** The version a key names, or null if the key is not a version file of this format. */
  parseVersionKey(key: string): number | null;
  /** All version files, ascending by version. */
  listVersionFiles(store: ObjectStore): Promise<VersionFile[]>;
  /** The newest version file, with as few requests as the store's ordering allows; null for an empty folder. */
  latestVersionFile(store: ObjectStore): Promise<VersionFile | null>;
  /** Resolves version N's file (either naming scheme); NotFoundError when it does not exist. */
  findVersionFile(store: ObjectStore, version: number): Promise<VersionFile>;
  /**
   * Optional: the key `version` would have in the naming scheme of `like`, so a reader that holds
   * version N can ask whether N+1 exists with one HEAD (without it, findVersionFile may take two).
   */
  siblingVersionKey?(like: VersionFile, version: number): string;
  /**
   * Optional: files the format keeps for itself next to its versions (Lance's
   * `_versions/latest_version_hint.json`). Cleanup leaves them alone without reporting them.
   */
  isBookkeepingFile?(key: string): boolean;
  /** Reads and decodes one version. Throws a typed format error naming the object on bad input. */
  readSnapshot(store: ObjectStore, file: VersionFile): Promise<TableSnapshot>;
  readRefs(store: ObjectStore): Promise<Refs>;
  /**
   * Optional: the branch's name when the location is not a table's root but the folder of one of
   * its branches (Lance: `{root}/tree/{branch}/`), else null. Maintenance refuses such a location:
   * the refs that say what a branch's versions are needed for live at the table's root.
   */
  branchAt?(store: ObjectStore): Promise<string | null>;
  /** What kind of file a key under a managed prefix is; null for a file the format does not know. */
  classify(key: string): FileKind | null;
  /** Optional: reads a data file's footer so a head can inline it; a format without one gets heads without footers. */
  readDataFileFooter?: DataFileFooterReader;
}
