/**
 * The one interface every table format implements. Everything above `lib/formats/` speaks
 * only these terms (and the model's: lib/model/) and asks the registry (lib/formats/index.ts)
 * which format a table is; no layer above names a format.
 *
 * What a format says, and the pipeline only drives:
 *   - detection, and the commit files that mark a new version (for the commit trigger);
 *   - its versions: the latest, the live ones in order, each one's record, config and the files
 *     it references (already resolved to keys by the one path validator, lib/model/table-path.ts);
 *   - refs (tags, branches, with the retention the format gives them);
 *   - the retention the table itself declares, merged under lakewarden's policy, or the
 *     format's own rules for which versions are due (Iceberg's per-ref snapshot retention),
 *     which lakewarden's explicit settings only extend;
 *   - which versions must be kept together (Iceberg: a removed snapshot a kept one still needs),
 *     or the whole removal planned by the format from the listing (Delta: VACUUM, log cleanup);
 *   - the candidate listing (which folders, which names are hidden) and each file's role;
 *   - how removal is carried out: delete the removed versions' commit files first, or write a
 *     new metadata commit that drops them;
 *   - optionally, the whole removal plan by the format's own rules (Delta: VACUUM and log
 *     cleanup), which the pipeline then carries out instead of its generic version and file rules;
 *   - the table state that goes into the head.
 */
import type { ListedKey, ObjectInfo, ObjectStore } from "../store/object-store.ts";
import type { VersionRecord } from "../model/version-record.ts";
import type { FileReference, FileRole } from "../model/file-reference.ts";
import type { Refs } from "../model/refs.ts";
import type { DataFileFooterReader } from "./data-file-footer.ts";
import type { TableCatalog } from "./catalog-commit.ts";

export type { FileReference, FileRole } from "../model/file-reference.ts";
export type { Branch, Refs, RefRetention, Tag } from "../model/refs.ts";

/**
 * A version as found by listing: the commit file that makes it exist (Lance: a manifest under
 * `_versions/`; Delta: `_delta_log/N.json`; Iceberg: the metadata file that holds the snapshot).
 */
export interface VersionFile {
  /** The ordering sequence (VersionRecord.version). */
  version: number;
  /** The format's id when it is not `String(version)` (Iceberg snapshot ids). */
  id?: string;
  /** Key relative to the table root. */
  key: string;
  size: number;
  etag: string;
  lastModified: Date;
}

/** A version file as listed: its version and key; `file()` its metadata too (null: removed since the listing). */
export interface ListedVersion {
  version: number;
  key: string;
  file(): VersionFile | null;
}

export interface VersionKeysAndRefs {
  versionKeys: ListedVersion[];
  refs: Refs;
  /** Keys after `alsoAfter` outside the format's own folders (see listVersionKeysAndRefs). */
  also?: ListedKey[];
}

/** A path a version names that is not a key under the root: outside it (never deleted) or unresolvable (stops cleanup). */
export interface UnresolvedReference {
  path: string;
  kind: "outside" | "unresolvable";
  reason: string;
}

/** One live data unit of a version (Lance: a fragment; Delta, Iceberg: a data file). */
export interface LiveFile {
  /** The format's id of the unit (Lance: fragment id; formats without one: its position). */
  fragmentId: number;
  /** Data file keys relative to the table root (a Lance fragment may have several files). */
  paths: string[];
  /** Sum of the data files' sizes in bytes (0 when the format does not record it). */
  size: number;
  /** Rows stored, including deleted ones. */
  physicalRows: number;
  /** Deletion file (Delta: deletion vector) key relative to the table root, if any. */
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

/** A named table of format-specific state a head carries as it is (Delta: adds with partition values and stats). */
export interface FormatSection {
  name: string;
  columns: Record<string, (string | number | boolean | null)[]>;
}

/** Everything one version says about the table. */
export interface TableSnapshot {
  /** Summary of this version; `is_tagged` and `is_cleaned_up` are false here (refs decide those). */
  record: VersionRecord;
  /** Every file this version needs, for cleanup's reference set, as keys under the root. */
  referencedFiles: FileReference[];
  /** Paths this version names that are not keys under the root (reported; unresolvable ones stop cleanup). */
  unresolvedReferences: UnresolvedReference[];
  liveFiles: LiveFile[];
  schema: SchemaField[];
  /** Table config (Lance: manifest `config`; Delta: metaData.configuration; Iceberg: properties). */
  config: Record<string, string>;
  /** The commit file's bytes as stored, so a reader can rebuild the full state from a head. */
  raw: Uint8Array;
  /** Where it came from. */
  versionFile: VersionFile;
  /** Format-specific state for the head, beyond the neutral fields. */
  sections?: FormatSection[];
}

/** What cleanup needs of one version, and nothing more (no live files, schema or raw bytes). */
export interface CleanupView {
  record: VersionRecord;
  referencedFiles: FileReference[];
  unresolvedReferences: UnresolvedReference[];
  config: Record<string, string>;
}

/** Retention settings a table declares in the format's own config keys, with where each came from. */
export interface DeclaredRetention {
  olderThanMs?: number;
  retainVersions?: number;
  safetyWindowMs?: number;
  /** Config key each value came from (e.g. `delta.deletedFileRetentionDuration`). */
  sources: Partial<Record<"olderThanMs" | "retainVersions" | "safetyWindowMs", string>>;
}

/** The candidate listing: which folders cleanup lists, and which keys in them are never candidates. */
export interface CandidateScope {
  /** Folders (with trailing "/") cleanup lists; nothing outside them is ever a candidate. */
  prefixes: readonly string[];
  /** True for keys the format keeps for itself or hides (never deleted, never reported). */
  isHidden(key: string): boolean;
}

/**
 * How removing versions is carried out.
 *   - "delete-commit-files": the removed versions' commit files are deleted first, oldest first
 *     (Lance manifests; Delta log files below a kept checkpoint), then the files only they named.
 *   - "metadata-commit": a new metadata commit drops the versions (Iceberg snapshot expiry);
 *     `commitRemoval` writes it before any file is deleted.
 */
export type RemovalKind = "delete-commit-files" | "metadata-commit";

/**
 * A retention the format's own rules applied where lakewarden has a policy field (Iceberg's
 * max-snapshot-age-ms for older-than; Delta's log retention), so the report says what decided:
 * lakewarden's explicit settings only lengthen it. Durations in ms.
 */
export interface AppliedRetention {
  value: number;
  /** Where the value came from, in words (the table's property, or the format's default). */
  source: string;
}

/** Retentions the format's rules applied, by the policy field they stand in for. */
export type AppliedRetentions = Partial<Record<"olderThanMs" | "retainVersions" | "safetyWindowMs", AppliedRetention>>;

/** Why the format's own rules keep a version, as the plan's word for it (see version-plan.ts KeptBy). */
export type FormatKeptBy = "latest" | "tag" | "branch" | "retention";

/**
 * The format's own answer to "which versions may go" (Iceberg: the spec's per-ref snapshot
 * retention), computed on one version file. Every version it covers is in exactly one map.
 */
export interface FormatRemovalRules {
  /** Versions the format's rules keep, with why. */
  keep: Map<number, { reason: string; keptBy: FormatKeptBy }>;
  /** Versions the format's rules let go, with why. */
  due: Map<number, string>;
  /**
   * What else the removal commit changes (Iceberg: expired refs it drops), for the report. Each
   * is a change of its own: the commit is written for it even when no version is due.
   */
  notes: string[];
  /** What the rules applied in place of lakewarden's age and count, for the report's policy. */
  applied?: AppliedRetentions;
}

export interface CommitRemovalInput {
  /** Versions to drop (ordering sequences). */
  remove: readonly number[];
  /** The version file the plan was made on: the commit must apply on top of it or fail. */
  base: VersionFile;
  now: Date;
}

/** What a format that plans its own removal is given (TableFormat.planRemoval). */
export interface RemovalInput {
  /** The candidate listing (every object under the managed prefixes): nothing outside it is deleted. */
  listing: readonly ObjectInfo[];
  /** Every version the run read, ascending, with the files it references. */
  versions: readonly { file: VersionFile; references: readonly FileReference[] }[];
  /** The latest version when the run started: it and every version above it stay readable. */
  latestAtStart: number;
  now: Date;
  /** lakewarden's effective policy (its defaults come from the format's declaredRetention). */
  policy: { olderThanMs: number; retainVersions: number; protectBefore: number | null; safetyWindowMs: number };
  /** Versions reader pins hold, with why: they stay readable. */
  pinned: ReadonlyMap<number, string>;
}

export interface RemovalFile {
  key: string;
  role: FileRole;
  reason: string;
  /** Set on commit files: they go first, oldest first (for a version the run read, that version is removed). */
  version?: number;
}

/** The format's own history protection outcome (the pipeline's ProtectionResult words). */
export interface RemovalProtection {
  boundary: number;
  result: "not-applicable" | "nothing-due" | "removed-all" | "kept-all" | "partial";
  reason: string;
}

export interface RemovalPlan {
  /** One per version given: removed ones lose their commit file. */
  decisions: { version: number; keep: boolean; reason: string }[];
  /** Every file to delete, in the order they may go. */
  files: RemovalFile[];
  /**
   * Files the plan keeps that a reader of the plan should see, with why (Delta: unreferenced
   * but younger than VACUUM's retention, as a commit in progress may need them).
   */
  reported?: RemovalFile[];
  /** Per kept version, the files the plan keeps for it (the post-delete check looks for them). */
  kept: ReadonlyMap<number, readonly FileReference[]>;
  protection: RemovalProtection | null;
  /** The table's retentions the plan applied (the policy's settings only lengthen them), for the report's policy. */
  applied?: AppliedRetentions;
}

/**
 * A table as a data catalog describes it (AWS Glue's GetTable): the catalog's own words, which a
 * format reads for the commit pointer the catalog owns (Iceberg: `metadata_location`).
 */
export interface CatalogTable {
  /** How messages name the entry: `Glue table "orders" in database "sales"`. */
  label: string;
  /** The catalog's table type (Glue TableType: EXTERNAL_TABLE, VIRTUAL_VIEW...), when it has one. */
  tableType?: string;
  /** The entry's parameters as stored. */
  parameters: Readonly<Record<string, string>>;
  /** The catalog's version of the entry (Glue's VersionId), which guards a commit through it (catalog-commit.ts). */
  version?: string;
}

/**
 * The catalog a format read at `at(pointer)` commits through (lib/formats/catalog-commit.ts), and
 * the entry that pointer came from: with it, versions are removed by a commit through the catalog
 * guarded by that entry, instead of all being kept.
 */
export interface CatalogBinding {
  catalog: TableCatalog;
  entry: CatalogTable;
}

/**
 * A format's reading of a catalog entry: the commit pointer it names (a URI, as the catalog
 * stores it) and the parameter that held it, for messages; or why the entry is not this format's.
 */
export type CatalogPointer = { pointer: string; parameter: string } | { mismatch: string };

export interface TableFormat {
  readonly name: string;
  /** Prefix holding the commit files, e.g. `_versions/`. */
  readonly versionsPrefix: string;
  /**
   * Object-created key patterns (relative to a table root) that mean "a version was committed",
   * for the commit trigger. Prefixes of different formats never overlap, so one S3 notification
   * filter per pattern and table root is valid.
   */
  readonly commitPatterns: readonly { prefix: string; suffix: string }[];
  /** Top-level folders the format owns; cleanup lists only these for candidates. */
  readonly managedPrefixes: readonly string[];
  readonly removal: RemovalKind;

  /** True when the store's root holds a table of this format: at most one LIST. */
  detect(store: ObjectStore): Promise<boolean>;
  /**
   * Optional: whether the location's own name suggests this format (Lance: a `.lance` folder).
   * Only ever used to start a read early that the format's answer will need; never to decide
   * what the table is.
   */
  locationSuggests?(uri: string): boolean;
  /** The table root of a bucket key that is one of this format's commit files, or null. */
  tableRootOfCommitKey(key: string): string | null;

  /** The version a key names, or null if the key is not a commit file of this format. */
  parseVersionKey(key: string): number | null;
  /** All live versions' commit files, ascending by version. */
  listVersionFiles(store: ObjectStore): Promise<VersionFile[]>;
  /**
   * Optional: the live versions' keys, ascending, without each file's size and ETag up front (on a
   * local disk `listVersionFiles` stats every file); `file()` gives one's VersionFile when needed.
   * Same requests as `listVersionFiles`. lib/versions/timeline.ts falls back to that.
   */
  listVersionKeys?(store: ObjectStore): Promise<ListedVersion[]>;
  /**
   * Optional: `listVersionKeys` and `readRefs` from one listing where they take two (Lance: one
   * LIST covers `_refs/` and `_versions/`). Same answer as the two. `alsoAfter`: a key of the
   * caller's own (lakewarden's checkpoints folder); when the format's listing can start right
   * after it, it does, and `also` holds every other key it listed from there; else `also` is
   * absent and the caller lists its folder itself.
   */
  listVersionKeysAndRefs?(store: ObjectStore, options?: { alsoAfter?: string }): Promise<VersionKeysAndRefs>;
  /** The newest version file, with as few requests as the store's ordering allows; null for an empty folder. */
  latestVersionFile(store: ObjectStore): Promise<VersionFile | null>;
  /** Resolves version N's file; NotFoundError when it does not exist. */
  findVersionFile(store: ObjectStore, version: number): Promise<VersionFile>;
  /** Optional: the key `version` would have in the naming scheme of `like`. */
  siblingVersionKey?(like: VersionFile, version: number): string;
  /**
   * Optional: true when `key` is a commit made after `base`, the version file the plan read
   * (Iceberg: a metadata file with a higher sequence, which create-only commits make the table's
   * current one). Such a file is never a candidate, young or old, whatever --delete-unverified says.
   */
  committedAfter?(key: string, base: VersionFile): boolean;
  /** Optional: files the format keeps for itself next to its versions; cleanup leaves them alone silently. */
  isBookkeepingFile?(key: string): boolean;
  /** Reads and decodes one version. Throws a typed format error naming the object on bad input. */
  readSnapshot(store: ObjectStore, file: VersionFile): Promise<TableSnapshot>;
  /**
   * Optional: one version's record alone, for history (`versions`): a format that can answer from
   * its metadata (Iceberg snapshots, Delta commit info) reads no manifests. Defaults to readSnapshot.
   */
  readRecord?(store: ObjectStore, file: VersionFile): Promise<VersionRecord>;
  /**
   * Optional: the records of many versions at once, in the order given, when the format can do
   * better together than one by one (Delta: one replay of the log gives every version's totals,
   * which readRecord alone cannot afford). Defaults to readRecord per file.
   */
  readRecords?(store: ObjectStore, files: readonly VersionFile[]): Promise<VersionRecord[]>;
  /** Optional lean read for cleanup; defaults to readSnapshot. */
  readForCleanup?(store: ObjectStore, file: VersionFile): Promise<CleanupView>;
  readRefs(store: ObjectStore): Promise<Refs>;
  /** Optional: the retention the table declares in the format's own config keys. */
  declaredRetention?(config: Record<string, string>, uri: string): DeclaredRetention;
  /**
   * Optional: versions that must be kept because a kept version needs them. Given the kept and
   * removed sets, returns the removed versions to keep after all, with why. (A format whose rule
   * needs more than version numbers, as Delta's needs its checkpoints, plans with planRemoval.)
   */
  keptTogether?(kept: readonly number[], removed: readonly number[]): Map<number, string>;
  /**
   * Optional: the format's own retention rules decide which versions are due, instead of
   * lakewarden's age and count defaults and its tag and branch rules (Iceberg: per-ref snapshot
   * expiry). `base` is the version file the plan is made on. lakewarden's explicit settings,
   * reader pins, the latest version, keptTogether and history protection only ever keep more.
   */
  removalRules?(store: ObjectStore, base: VersionFile, now: Date): Promise<FormatRemovalRules>;
  /**
   * Optional: the format decides the whole removal from the candidate listing by its own rules
   * (Delta: VACUUM by tombstones, log cleanup below a kept checkpoint, checkpointProtection);
   * the pipeline then uses this plan instead of its generic version and file rules, and keeps
   * everything else (intent, history archived first, re-plans, budget, lease, report).
   * It throws a format error naming the object on bad input: nothing is deleted.
   */
  planRemoval?(store: ObjectStore, input: RemovalInput): Promise<RemovalPlan>;
  /**
   * Optional: fails closed when the versions the table's refs keep (`base`'s current version and
   * every branch and tag) name a file that is neither in `listing` (the run's candidate listing)
   * nor found by asking the store: the metadata and the files disagree, and the file the writer
   * meant would look like an orphan. Throws a format error naming the path; called on every plan
   * of a listing, dry run included, before anything is written or deleted.
   */
  checkReferencedFiles?(store: ObjectStore, base: VersionFile, listing: Iterable<ObjectInfo>): Promise<void>;
  /**
   * Optional (removal "metadata-commit"): writes the commit that drops versions and makes the
   * changes its removalRules' notes name (so `remove` may be empty); create-only.
   */
  commitRemoval?(store: ObjectStore, input: CommitRemovalInput): Promise<{ key: string }>;
  /**
   * Optional: finishes a commit an earlier run wrote but was stopped before it finished (Iceberg:
   * the version hint still names the metadata file before the newest). Called before any delete,
   * so a reader that follows the table's pointer never sees files deleted that its version needs.
   */
  finishInterruptedCommit?(store: ObjectStore): Promise<void>;
  /**
   * Optional: the branch's name when the location is a branch's folder, not a table's root
   * (Lance: `{root}/tree/{branch}/`), else null. Maintenance refuses such a location.
   */
  branchAt?(store: ObjectStore): Promise<string | null>;
  /**
   * Optional: proves that one file a kept version depends on is whole, by what the format knows of
   * it: a checkpoint part, sidecar, manifest list or manifest decodes to its end; a data, deletion or
   * index file has the size its version recorded and ends with its file format's magic. `listed` is
   * the file as the run's listing (or a HEAD) saw it. Returns null when it is whole, else the problem
   * in a few words ("truncated: 2,000 of 5,120 bytes", "not a Parquet file: no PAR1 footer").
   * The pipeline's proof stage calls it before the first delete for the files of every version the
   * plan keeps; any problem stops the run with nothing deleted. Reads the file at most once.
   */
  proveFile?(store: ObjectStore, file: FileReference, listed: ObjectInfo): Promise<string | null>;
  /**
   * Optional: the names of other registered formats whose files this table writes into its own
   * folder on purpose, as it is now (Delta UniForm: `iceberg` metadata under `metadata/`), so a
   * location that also looks like them is this format's table, not two at once. The registry asks.
   */
  formatsWrittenAlongside?(store: ObjectStore): Promise<readonly string[]>;
  /** What role a key under a managed prefix plays; null for a file the format does not know. */
  classify(key: string): FileRole | null;
  /** Optional: reads a data file's footer so a head can inline it. */
  readDataFileFooter?: DataFileFooterReader;
  /**
   * Optional: the same format reading the table at the commit pointer a catalog owns (Iceberg:
   * the metadata file a REST or Glue catalog names), a key under the table root. Without
   * `catalog`, lakewarden does not commit through the catalog, so such a table's versions are all
   * kept; with it, removal is a commit through that catalog guarded by its entry. Cleanup at a pointer that
   * another commit supersedes (a catalog that lags, an old file named by hand) is refused unless
   * `allowSuperseded` (the user's explicit word; never a catalog's).
   */
  at?(pointer: string, options?: { allowSuperseded?: boolean; catalog?: CatalogBinding }): TableFormat;
  /**
   * Optional (with `at`): the commit pointer a catalog entry names for a table of this format
   * (Iceberg: the entry's `metadata_location`, when its `table_type` is ICEBERG), or why the
   * entry is not one. Throws a format error when the entry says it is this format's but its
   * pointer is unusable. lib/formats/catalog.ts turns the pointer into `at(key)`.
   */
  catalogPointer?(table: CatalogTable): CatalogPointer;
}
