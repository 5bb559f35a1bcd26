/**
 * The one interface every table format implements. Everything above `lib/formats/` speaks
 * only these terms (and the model's: lib/model/) and asks the registry (lib/formats/index.ts)
 * which format a table is; no layer above names a format.
 *
 * A format is a required core plus one removal strategy:
 *   - the core: detection and the commit files that mark a new version (for the commit trigger);
 *     its versions (the latest, the live ones in order, each one's record, config and the files
 *     it references, already resolved to keys by the one path validator, lib/model/table-path.ts);
 *     refs (tags, branches, with the retention the format gives them); the retention the table
 *     declares in the format's own keys; the candidate listing (which folders, which names are
 *     the format's own) and each file's role; the proof that a kept file is whole; the table
 *     state that goes into the head; and the safety gate (`admit`: may this table be maintained);
 *   - the removal strategy (`removal`, one tagged choice): the commit files deleted first, oldest
 *     first, then what only they named (Lance); the whole removal planned by the format from the
 *     listing (Delta: VACUUM, log cleanup); or a metadata commit that drops the versions, written
 *     before any delete (Iceberg snapshot expiry). lib/maintenance/removal-steps.ts switches on it.
 * Every member is required; defineFormat (define-format.ts) fills the pure speed-ups a format
 * leaves out, in one place, so no caller has a fallback of its own.
 */
import type { ListedKey, ObjectInfo, ObjectStore } from "../store/object-store.ts";
import type { VersionRecord } from "../model/version-record.ts";
import type { FileReference, FileRole, ReferenceSequence } from "../model/file-reference.ts";
import type { Refs } from "../model/refs.ts";
import type { DataFileFooterReader } from "./data-file-footer.ts";
import type { RowReader, ScanFiles } from "./scan-files.ts";
import type { TableCatalog } from "./catalog-commit.ts";

export type { FileReference, FileRole, ReferenceSequence } from "../model/file-reference.ts";
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
  /**
   * True when this version is the one its file names as current (Iceberg: the metadata file's
   * current snapshot), so a listing that shows the same file (key, size, ETag) still the newest
   * shows this version still the latest, without reading the file. Absent: not known, or not so.
   */
  currentInFile?: boolean;
}

/**
 * Finding the latest version file, its first requests started when the lookup is made (beside
 * whatever the caller reads meanwhile, a head's GET). Both members give latestVersionFile's
 * answer; `latestFrom` may find it in fewer round trips from a version file the caller holds.
 */
export interface LatestVersionLookup {
  /** latestVersionFile's answer, from the requests already started where they serve. */
  latest(): Promise<VersionFile | null>;
  /**
   * The same answer, with `known` (a version file the caller read before: its head's, its last
   * state's) as a start: Iceberg answers `known` from the listing alone when that shows its
   * metadata file unchanged and newest and `known` was the file's current snapshot; Delta lists
   * the log from `known`'s version in one LIST. Anything it cannot show falls back to latest().
   */
  latestFrom(known: VersionFile): Promise<VersionFile | null>;
  /** Settles (never rejects) once every request the lookup started so far has ended: a caller leaves none running. */
  settled(): Promise<void>;
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

export interface ReadSnapshotOptions {
  previous?: TableSnapshot;
}

/** What cleanup needs of one version, and nothing more (no live files, schema or raw bytes). */
export interface CleanupView {
  record: VersionRecord;
  referencedFiles: FileReference[];
  /** The same references as runs of chunks shared between versions (see ReferenceSequence), where the format has them: the pipeline then reads these, not `referencedFiles`. */
  referenceSequence?: ReferenceSequence;
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
  /**
   * The candidate listing (every object under the managed prefixes): nothing outside it is
   * deleted. Walked, not held: each for-of walks it again (the pipeline's listing is in spilled
   * pages), so a plan keeps only what it needs of it.
   */
  listing: Iterable<ObjectInfo>;
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
  /** Optional: kept versions (commit file kept) that cannot be read once the plan has run (Delta: VACUUM took their data), with why. */
  unreadable?: ReadonlyMap<number, string>;
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

/** A safety gate's answer: may lakewarden maintain this table, and if not, the typed error that says why in one line. */
export type Admission = { admitted: true } | { admitted: false; refusal: Error };

export const ADMITTED: Admission = { admitted: true };

/** No removed version is needed by a kept one (a format whose versions stand alone). */
export const NOTHING_KEPT_TOGETHER = (): Map<number, string> => new Map();

/** Removed versions a kept version still needs to be read, with why: those are kept after all. */
export type KeptTogether = (kept: readonly number[], removed: readonly number[]) => Map<number, string>;

/**
 * Reference counting with the commit files deleted first (Lance): the pipeline decides which
 * versions go by lakewarden's policy and refs, deletes the removed versions' commit files oldest
 * first, then every listed file no kept version references.
 */
export interface CommitFilesFirst {
  readonly kind: "commit-files-first";
  keptTogether: KeptTogether;
}

/**
 * The format plans the whole removal from the candidate listing by its own rules (Delta: VACUUM
 * by tombstones, log cleanup below a kept checkpoint, checkpointProtection); the pipeline checks
 * the plan against its own guarantees (format-removal.ts) and keeps everything else (intent,
 * history archived first, re-plans, proof, budget, lease, report).
 */
export interface FormatPlannedRemoval {
  readonly kind: "format-plan";
  /** Throws a format error naming the object on bad input: nothing is deleted. */
  planRemoval(store: ObjectStore, input: RemovalInput): Promise<RemovalPlan>;
}

/**
 * A new metadata commit drops the removed versions (Iceberg snapshot expiry): the format's rules
 * say which are due, the commit is written on the plan's base before any file is deleted, then
 * the files no kept version references go.
 */
export interface MetadataCommitRemoval {
  readonly kind: "metadata-commit";
  /**
   * Which versions are due by the format's own retention rules (Iceberg: per-ref snapshot
   * expiry), on `base`, the version file the plan is made on. lakewarden's explicit settings,
   * reader pins, the latest version, keptTogether and history protection only ever keep more.
   */
  rules(store: ObjectStore, base: VersionFile, now: Date): Promise<FormatRemovalRules>;
  keptTogether: KeptTogether;
  /**
   * Fails closed when the versions the table's refs keep (`base`'s current version and every
   * branch and tag) name a file that is neither in `listing` (the run's candidate listing) nor
   * found by asking the store: the file the writer meant would look like an orphan. Throws a
   * format error naming the path; run on every plan of a listing, dry run included.
   */
  checkReferencedFiles(store: ObjectStore, base: VersionFile, listing: Iterable<ObjectInfo>): Promise<void>;
  /**
   * True when `key` is a commit made after `base` (Iceberg: a metadata file with a higher
   * sequence). Such a file is never a candidate, young or old, whatever --delete-unverified says.
   */
  committedAfter(key: string, base: VersionFile): boolean;
  /**
   * Finishes a commit an earlier run wrote but was stopped before it finished (Iceberg: the
   * version hint still names the metadata file before the newest). Run before any delete, so a
   * reader that follows the table's pointer never sees files deleted that its version needs.
   */
  finishInterrupted(store: ObjectStore): Promise<void>;
  /**
   * Writes the commit that drops `remove` and makes the changes the rules' notes name (so
   * `remove` may be empty), create-only on `base`: it fails when `base` is no longer current.
   */
  commit(store: ObjectStore, input: CommitRemovalInput): Promise<{ key: string }>;
}

/** How a format removes versions: one choice per format, each with everything it needs and nothing optional. */
export type VersionRemoval = CommitFilesFirst | FormatPlannedRemoval | MetadataCommitRemoval;

export type RemovalKind = VersionRemoval["kind"];

/**
 * The one interface every format fills, every member required: a format's module passes its
 * parts through defineFormat (define-format.ts), which fills the speed-ups it leaves out.
 */
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
  /** How versions are removed (see VersionRemoval). */
  readonly removal: VersionRemoval;
  /** What the format calls a version, for messages (Iceberg: "snapshot"). Default: "version". */
  readonly versionNoun: string;

  /** True when the store's root holds a table of this format: at most one LIST. */
  detect(store: ObjectStore): Promise<boolean>;
  /**
   * Whether the location's own name suggests this format (Lance: a `.lance` folder). Only ever
   * used to start a read early that the format's answer will need; never to decide what the table is.
   */
  locationSuggests(uri: string): boolean;
  /**
   * The names of other registered formats whose files this table writes into its own folder on
   * purpose, as it is now (Delta UniForm: `iceberg` metadata under `metadata/`), so a location
   * that also looks like them is this format's table, not two at once. The registry asks.
   */
  formatsWrittenAlongside(store: ObjectStore): Promise<readonly string[]>;
  /** The table root of a bucket key that is one of this format's commit files, or null. */
  tableRootOfCommitKey(key: string): string | null;
  /**
   * The version a key names, or null if the key is not a commit file naming one version (an
   * Iceberg metadata file holds many: null for every key).
   */
  parseVersionKey(key: string): number | null;
  /**
   * The branch's name when the location is a branch's folder, not a table's root (Lance:
   * `{root}/tree/{branch}/`), else null. Maintenance and head writing refuse such a location.
   */
  branchAt(store: ObjectStore): Promise<string | null>;

  /** All live versions' commit files, ascending by version. */
  listVersionFiles(store: ObjectStore): Promise<VersionFile[]>;
  /**
   * The live versions' keys, ascending, without each file's size and ETag up front (on a local
   * disk `listVersionFiles` stats every file); `file()` gives one's VersionFile when needed.
   * Same requests as `listVersionFiles`. Default: `listVersionFiles`.
   */
  listVersionKeys(store: ObjectStore): Promise<ListedVersion[]>;
  /**
   * `listVersionKeys` and `readRefs` from one listing where they take two (Lance: one LIST covers
   * `_refs/` and `_versions/`). Same answer as the two. `alsoAfter`: a key of the caller's own
   * (lakewarden's checkpoints folder); when the format's listing can start right after it, it
   * does, and `also` holds every other key it listed from there; else `also` is absent and the
   * caller lists its folder itself. Default: the two, side by side.
   */
  listVersionKeysAndRefs(store: ObjectStore, options?: { alsoAfter?: string }): Promise<VersionKeysAndRefs>;
  /** The newest version file, with as few requests as the store's ordering allows; null for an empty folder. */
  latestVersionFile(store: ObjectStore): Promise<VersionFile | null>;
  /**
   * Starts finding the latest version file now (see LatestVersionLookup): what a loader calls
   * beside a head's GET, so the check that the head is current costs no round trip of its own.
   * `known`: the version file the caller will ask `latestFrom` with first, when it has it already
   * (a warm check): the format starts the requests for that instead. Default: latestVersionFile,
   * started at once, for both members.
   */
  startLatestLookup(store: ObjectStore, known?: VersionFile): LatestVersionLookup;
  /** Resolves version N's file; NotFoundError when it does not exist. */
  findVersionFile(store: ObjectStore, version: number): Promise<VersionFile>;

  /**
   * Reads and decodes one version. Throws a typed format error naming the object on bad input.
   * `previous`: a snapshot read before (the previous head's), whose parts the format may take
   * again where it can show they are the same files (Iceberg: manifests, immutable, matched by
   * path, length, adding snapshot and sequence number); for a head's content only, never on a
   * path that decides what is deleted.
   */
  readSnapshot(store: ObjectStore, file: VersionFile, options?: ReadSnapshotOptions): Promise<TableSnapshot>;
  /**
   * One version's record alone, for history (`versions`): a format that can answer from its
   * metadata (Iceberg snapshots, Delta commit info) reads no manifests. Default: readSnapshot's.
   */
  readRecord(store: ObjectStore, file: VersionFile): Promise<VersionRecord>;
  /**
   * The records of many versions at once, in the order given (Delta: one replay of the log gives
   * every version's totals, which readRecord alone cannot afford). Default: readRecord per file,
   * `concurrency` at a time.
   */
  readRecords(store: ObjectStore, files: readonly VersionFile[], options?: { concurrency?: number }): Promise<VersionRecord[]>;
  /**
   * What cleanup needs of one version, read as leanly as the format can. A read only: gates are
   * `admit`'s. Default: readSnapshot. `scan`: one object for every read of one scan of many
   * versions; what the scan's reads share (Lance: decoded fragments) is kept while it lives and
   * let go with it, not held by the store for the rest of the run.
   */
  readForCleanup(store: ObjectStore, file: VersionFile, scan?: object): Promise<CleanupView>;
  readRefs(store: ObjectStore): Promise<Refs>;

  /**
   * The safety gate: may lakewarden maintain (delete files of) this table, judged on `base`, its
   * latest version file (Delta: every reader and writer feature supported; Iceberg: gc.enabled,
   * no catalog owning a file-system table). Run by every command that maintains, dry runs
   * included, before anything is planned, and again on each re-plan's new latest version.
   */
  admit(store: ObjectStore, base: VersionFile): Promise<Admission>;
  /** The retention the table declares in the format's own config keys (none: `{ sources: {} }`). */
  declaredRetention(config: Record<string, string>, uri: string): DeclaredRetention;
  /** What role a key under a managed prefix plays; null for a file the format does not know. */
  classify(key: string): FileRole | null;
  /** Files the format keeps for itself next to its versions: never candidates, never reported. */
  isBookkeepingFile(key: string): boolean;
  /**
   * A version's live data files and delete files as a scan planner needs them (partition values
   * and column bounds as facts true of every row, which delete files apply to which data file),
   * from the snapshot alone (its sections and raw metadata): no request. lib/scan/ plans on it.
   */
  scanFiles(snapshot: TableSnapshot): ScanFiles;
  /**
   * The live rows of one planned data file (deletes applied, columns by table name, partition
   * values and columns the file lacks filled in), reading Parquet with the head's inline footer
   * when given. lib/scan/rows.ts filters and batches them. A format that cannot read rows gets
   * defineFormat's default, which says so.
   */
  readRows: RowReader;
  /**
   * Proves that one file a kept version depends on is whole, by what the format knows of it: a
   * checkpoint part, sidecar, manifest list or manifest decodes to its end; a data, deletion or
   * index file has the size its version recorded and ends with its file format's magic. `listed`
   * is the file as the run's listing (or a HEAD) saw it. Returns null when it is whole, else the
   * problem in a few words ("truncated: 2,000 of 5,120 bytes", "not a Parquet file: no PAR1
   * footer"). The pipeline's proof stage calls it before the first delete for the files of every
   * version the plan keeps; any problem stops the run with nothing deleted. Reads the file at most once.
   */
  proveFile(store: ObjectStore, file: FileReference, listed: ObjectInfo): Promise<string | null>;
  /** Reads a data file's footer so a head can inline it. */
  readDataFileFooter: DataFileFooterReader;

  /**
   * Optional, with catalogPointer (the catalog capability; it never changes what this format's
   * own tables delete): the same format reading the table at the commit pointer a catalog owns
   * (Iceberg: the metadata file a REST or Glue catalog names), a key under the table root.
   * Without `catalog`, lakewarden does not commit through the catalog, so such a table's versions
   * are all kept; with it, removal is a commit through that catalog guarded by its entry. Cleanup
   * at a pointer that another commit supersedes (a catalog that lags, an old file named by hand)
   * is refused unless `allowSuperseded` (the user's explicit word; never a catalog's).
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

/** The members defineFormat fills when a format leaves them out: speed-ups whose default gives the same answer. */
export type FormatSpeedUp = "locationSuggests" | "listVersionKeys" | "listVersionKeysAndRefs" | "startLatestLookup" | "readRecord" | "readRecords" | "readForCleanup";

/** The members defineFormat fills with a word when a format leaves them out: how messages name its things. */
export type FormatWording = "versionNoun";

/** Read-only abilities a format may lack: defineFormat's default refuses in one line. None is on a path that deletes. */
export type FormatReadAbility = "readRows";

type DefaultedMember = FormatSpeedUp | FormatWording | FormatReadAbility;

/** What a format's module gives defineFormat: everything but the defaulted members, which it may give too. */
export type FormatParts = Omit<TableFormat, DefaultedMember> & Partial<Pick<TableFormat, DefaultedMember>>;
