/**
 * Apache Iceberg behind the format-neutral TableFormat interface (lib/formats/table-format.ts).
 *
 * How Iceberg maps onto versions and version files:
 *   - a **version is a snapshot**. `version` is its ordering sequence (the snapshot's
 *     `sequence-number`, or `timestamp-ms` for tables without sequence numbers: versions.ts),
 *     `version_id` the snapshot id as exact text;
 *   - a **version file is the current metadata file**: every snapshot lives in it, so
 *     `listVersionFiles` returns one VersionFile per snapshot of the current metadata, all with
 *     that file's key, size and ETag, and `id` set to the snapshot id. A metadata file that is
 *     no longer current holds no live version: snapshots are removed by a new metadata file,
 *     not by deleting one;
 *   - `parseVersionKey` is null for every key: no key names a snapshot (a metadata file name
 *     carries the metadata file's sequence, not a snapshot's). Metadata files are classified
 *     "metadata" and kept by reference (the current file, the metadata log, the version hint);
 *   - which snapshots are due is the spec's per-ref retention (`removal.rules`, planExpiry), not
 *     lakewarden's age and count defaults;
 *   - removing versions is a metadata commit (`removal.commit`): the next
 *     `v<N+1>.metadata.json`, written create-only, for tables without a catalog only; it also
 *     drops the refs the retention expires.
 * The latest version is the current snapshot of the metadata file with the highest sequence
 * (metadata-files.ts); a table without a current snapshot has no latest version.
 */
import type { ObjectInfo, ObjectStore } from "../../store/object-store.ts";
import { NotFoundError, PreconditionFailedError } from "../../store/errors.ts";
import type { VersionRecord } from "../../model/version-record.ts";
import { mainBranchTaggedVersions } from "../../model/refs.ts";
import { CatalogCommitError, CorruptFileError, NotATableError, TableFormatError, UnsupportedFeatureError, MaintenanceOptOutError } from "../errors.ts";
import { ADMITTED, NOTHING_KEPT_TOGETHER } from "../table-format.ts";
import type {
  Admission,
  CatalogBinding,
  CleanupView,
  CommitRemovalInput,
  FileRole,
  FormatKeptBy,
  FormatParts,
  FormatRemovalRules,
  MetadataCommitRemoval,
  ReadSnapshotOptions,
  Refs,
  TableFormat,
  TableSnapshot,
  VersionFile,
} from "../table-format.ts";
import { defineFormat } from "../define-format.ts";
import { commitExpiryThroughCatalog } from "./catalog-commit.ts";
import { icebergCatalogPointer } from "./catalog-table.ts";
import { assertRefFilesExist } from "./current-files.ts";
import { supersededBy } from "./current-pointer.ts";
import { readParquetFooter } from "./data-file-footer.ts";
import { planExpiry, writeExpiryCommit, type RetainedBy } from "./expire-snapshots.ts";
import { liveFilesOf, schemaFields } from "./live-files.ts";
import { readSnapshotRows, reusableManifests } from "./head-manifests.ts";
import { catalogTableRefusal, latestMetadataFile, listMetadataFiles, readVersionHint } from "./metadata-files.ts";
import { DATA_PREFIX, METADATA_PREFIX, parseMetadataFileName, parseMetadataKey, VERSION_HINT_KEY } from "./metadata-names.ts";
import { isHiddenKey } from "./hidden-keys.ts";
import { proveIcebergFile } from "./prove-file.ts";
import { metadataReferences } from "./reachable.ts";
import { icebergRefs } from "./refs.ts";
import { tableRetention } from "./retention.ts";
import { IcebergFileReader, readSnapshotFiles } from "./snapshot-files.ts";
import type { IcebergSnapshot } from "./table-metadata.ts";
import { hintedMetadataKey, openIcebergTable, type IcebergTable } from "./table-state.ts";
import { rememberTable, tableAt } from "./table-cache.ts";
import { branchOfSnapshots, snapshotRecord, snapshotRecords } from "./versions.ts";
import { currentVersionFile, versionFilesOf } from "./version-files.ts";
import { startListedLookup, startPointerLookup } from "./latest-lookup.ts";
import { icebergScanFiles } from "./scan-file-view.ts";

export const ICEBERG_MANAGED_PREFIXES = [METADATA_PREFIX, DATA_PREFIX] as const;

/** Manifests never change once written: one reader (and its cache) per store root, a few roots at a time. */
const readers = new Map<string, IcebergFileReader>();
function readerFor(store: ObjectStore): IcebergFileReader {
  let reader = readers.get(store.uri);
  if (!reader || reader.store !== store) {
    if (readers.size >= 4) readers.delete(readers.keys().next().value!);
    reader = new IcebergFileReader(store);
    readers.set(store.uri, reader);
  }
  return reader;
}

/** The table, or null when `metadata/` holds no metadata file; `pointer`: the metadata file a catalog names. */
async function openIfTable(store: ObjectStore, pointer?: string): Promise<IcebergTable | null> {
  try {
    return rememberTable(await openIcebergTable(store, pointer === undefined ? {} : { metadataKey: pointer }));
  } catch (error) {
    if (error instanceof NotATableError && error.uri === store.uri) return null;
    throw error;
  }
}

async function listVersionFiles(store: ObjectStore, pointer?: string): Promise<VersionFile[]> {
  const table = await openIfTable(store, pointer);
  return table ? versionFilesOf(table) : [];
}

async function latestVersionFile(store: ObjectStore, pointer?: string): Promise<VersionFile | null> {
  const table = await openIfTable(store, pointer);
  return table ? currentVersionFile(table) : null;
}

async function findVersionFile(store: ObjectStore, version: number, pointer?: string): Promise<VersionFile> {
  const file = (await listVersionFiles(store, pointer)).find((f) => f.version === version);
  if (!file) throw new NotFoundError(`no snapshot with version ${version} in the current metadata`, { uri: store.uriOf(METADATA_PREFIX) });
  return file;
}

/** A snapshot as its head holds it; manifests the previous head was built from are not read again (head-manifests.ts). */
async function readSnapshot(store: ObjectStore, file: VersionFile, options: ReadSnapshotOptions = {}): Promise<TableSnapshot> {
  const table = await tableAt(store, file.key, file.etag);
  const { metadata } = table.read;
  const uri = store.uriOf(file.key);
  const snapshot = snapshotOf(table, file, uri);
  const reusable = reusableManifests(options.previous, metadata.location);
  const files = await readSnapshotRows(readerFor(store), metadata, snapshot, table.resolve, uri, reusable);
  const level = metadataReferences(metadata, table.metadataKey, table.resolve, table.versionHint !== null);
  const { liveFiles, sections } = liveFilesOf(files.chunks, table.resolve, metadata.location);
  return {
    record: snapshotRecord(snapshot, table.ordered, branchOfSnapshots(metadata).get(snapshot.id) ?? null),
    referencedFiles: [...files.references, ...level.references],
    unresolvedReferences: [...files.unresolved, ...level.unresolved],
    liveFiles,
    schema: schemaFields(metadata, snapshot.schemaId),
    config: metadata.properties,
    raw: table.read.stored,
    versionFile: file,
    sections,
  };
}

/** A snapshot's record from the metadata alone: history never depends on a manifest list being readable. */
async function readRecord(store: ObjectStore, file: VersionFile): Promise<VersionRecord> {
  const table = await tableAt(store, file.key, file.etag);
  const snapshot = snapshotOf(table, file, store.uriOf(file.key));
  return snapshotRecord(snapshot, table.ordered, branchOfSnapshots(table.read.metadata).get(snapshot.id) ?? null);
}

/** What cleanup needs of one snapshot: its record, the files it reaches and the table's config. */
async function readForCleanup(store: ObjectStore, file: VersionFile): Promise<CleanupView> {
  const table = await tableAt(store, file.key, file.etag);
  const { metadata } = table.read;
  const uri = store.uriOf(file.key);
  const snapshot = snapshotOf(table, file, uri);
  const files = await readSnapshotFiles(readerFor(store), metadata, snapshot, table.resolve, uri);
  const level = metadataReferences(metadata, table.metadataKey, table.resolve, table.versionHint !== null);
  return {
    record: snapshotRecord(snapshot, table.ordered, branchOfSnapshots(metadata).get(snapshot.id) ?? null),
    referencedFiles: [...files.references, ...level.references],
    unresolvedReferences: [...files.unresolved, ...level.unresolved],
    config: metadata.properties,
  };
}

/**
 * A table with `gc.enabled=false` forbids maintenance from deleting its files (iceberg-java
 * refuses orphan removal and expiry-with-cleanup then).
 */
async function gcRefusal(store: ObjectStore, base: VersionFile): Promise<Error | null> {
  const table = await tableAt(store, base.key, base.etag);
  const uri = store.uriOf(base.key);
  if (tableRetention(table.read.metadata.properties, uri).gcEnabled) return null;
  return new MaintenanceOptOutError(uri, "gc.enabled is false: the table forbids maintenance from deleting its files; nothing deleted");
}

/** The gates of a table found by its own files: gc.enabled, and no catalog owning its commits. */
async function admit(store: ObjectStore, base: VersionFile): Promise<Admission> {
  const refusal = (await gcRefusal(store, base)) ?? catalogTableRefusal(store, base.key) ?? (await catalogMetadataBesideRefusal(store, base));
  return refusal ? { admitted: false, refusal } : ADMITTED;
}

function snapshotOf(table: IcebergTable, file: VersionFile, uri: string): IcebergSnapshot {
  const { metadata } = table.read;
  const snapshot =
    file.id !== undefined ? metadata.snapshots.find((s) => s.id === file.id) : table.ordered.snapshots.find((s) => table.ordered.versionOf.get(s.id) === file.version);
  if (!snapshot || table.ordered.versionOf.get(snapshot.id) !== file.version) {
    throw new CorruptFileError(uri, `holds no snapshot ${file.id ?? ""} with version ${file.version}`);
  }
  return snapshot;
}

async function readRefs(store: ObjectStore, pointer?: string): Promise<Refs> {
  const table = await openIfTable(store, pointer);
  return table ? icebergRefs(table.read.metadata, table.ordered) : { tags: [], branches: [] };
}

const KEPT_BY: Record<RetainedBy, FormatKeptBy> = {
  main: "latest",
  tag: "tag",
  branch: "branch",
  "branch-history": "branch",
  "main-history": "retention",
  young: "retention",
};

/**
 * A file-system table's folder that also holds catalog-named metadata (`NNNNN-uuid`, as Athena or
 * Glue write once the table is registered there): the catalog may own the table now, and its
 * current metadata reaches files no `v<N>` file does. Cleaning by the `v<N>` files would delete
 * that metadata and the data only it reaches, so cleanup needs the catalog's word.
 */
async function catalogMetadataBesideRefusal(store: ObjectStore, base: VersionFile): Promise<Error | null> {
  if (parseMetadataKey(base.key)?.naming !== "hadoop") return null;
  const catalogNamed = (await listMetadataFiles(store)).filter((f) => f.name.naming === "catalog");
  if (catalogNamed.length === 0) return null;
  return new UnsupportedFeatureError(
    store.uri,
    `metadata/ holds catalog-named metadata (${catalogNamed.at(-1)!.key}) beside v<N>.metadata.json files: a catalog may own this table, and cleaning by ${base.key} would delete what the catalog's metadata reaches; pass --metadata-location with the catalog's current metadata file (or remove the stray files); nothing written or deleted`,
  );
}

/**
 * Cleanup by a pointer someone named (a catalog, `--metadata-location`) needs that pointer to be the
 * newest commit: one another metadata file supersedes would have cleanup delete what only the newer
 * metadata reaches. Refused before anything is written or deleted, unless the user said so.
 */
async function supersededPointerRefusal(store: ObjectStore, base: VersionFile): Promise<Error | null> {
  const superseded = await supersededBy(store, await tableAt(store, base.key, base.etag));
  if (superseded === null) return null;
  return new TableFormatError(
    store.uri,
    `the pointer ${base.key} is superseded by ${superseded.newer} (${superseded.why}): the catalog may lag a commit, and cleaning by ${base.key} would delete what ${superseded.newer} reaches; read the current pointer and run again (by hand, --allow-superseded-metadata cleans by ${base.key} anyway); nothing written or deleted`,
  );
}

/**
 * A current metadata file whose name carries no sequence (`vfinal.metadata.json`, named by the
 * version hint's stem): the next commit has no name in the writer's scheme, so no snapshot is
 * expired and no ref dropped; orphans are still removed.
 */
function keepAllRules(table: IcebergTable, reason: string): FormatRemovalRules {
  const keep: FormatRemovalRules["keep"] = new Map();
  for (const version of table.ordered.versionOf.values()) keep.set(version, { reason, keptBy: "retention" });
  return { keep, due: new Map(), notes: [] };
}

/**
 * Which snapshots may go is the spec's per-ref retention (planExpiry, iceberg-java's
 * RemoveSnapshots), not lakewarden's age and count defaults: the table's `history.expire.*` and
 * each ref's own settings decide; lakewarden's explicit flags only keep more.
 */
async function removalRules(store: ObjectStore, base: VersionFile, now: Date): Promise<FormatRemovalRules> {
  const table = await tableAt(store, base.key, base.etag);
  const { metadata } = table.read;
  if (table.read.file.name.naming === "other") {
    return keepAllRules(table, `the current metadata file ${base.key} has no version number in its name, so lakewarden cannot name the next commit: it expires no snapshot`);
  }
  const retention = tableRetention(metadata.properties, store.uriOf(base.key));
  const plan = planExpiry(metadata, now.getTime(), retention);
  const keep: FormatRemovalRules["keep"] = new Map();
  const due: FormatRemovalRules["due"] = new Map();
  for (const [id, verdict] of plan.why) {
    const version = table.ordered.versionOf.get(id)!;
    if (verdict.retainedBy === null) due.set(version, verdict.reason);
    else keep.set(version, { reason: verdict.reason, keptBy: KEPT_BY[verdict.retainedBy] });
  }
  const perRef = (name: string, source: string | undefined): string =>
    `the table's snapshot retention: ${name} from ${source ? `table property ${source}` : "Iceberg's default"}, where a branch's own ${name} does not override it`;
  return {
    keep,
    due,
    notes: plan.dropRefs.map((name) => `ref "${name}" expired (${plan.refReasons.get(name)}): the expiry commit drops it`),
    applied: {
      olderThanMs: { value: retention.maxSnapshotAgeMs, source: perRef("max-snapshot-age-ms", retention.sources.maxSnapshotAgeMs) },
      retainVersions: { value: retention.minSnapshotsToKeep, source: perRef("min-snapshots-to-keep", retention.sources.minSnapshotsToKeep) },
    },
  };
}

/**
 * Writes the metadata commit that drops `remove` (versions) on top of `base`; fails if `base` is
 * no longer current, or if the table's own retention keeps one of them. The refs the spec
 * expires at `now` are dropped with them, or alone when `remove` is empty.
 */
async function commitRemoval(store: ObjectStore, input: CommitRemovalInput): Promise<{ key: string }> {
  const latest = await latestMetadataFile(store);
  if (latest?.key !== input.base.key) {
    throw new PreconditionFailedError(`the current metadata is ${latest?.key ?? "gone"}, not ${input.base.key}: re-plan`, { uri: store.uriOf(input.base.key) });
  }
  const table = await openIcebergTable(store, { metadataKey: input.base.key });
  const retention = tableRetention(table.read.metadata.properties, store.uriOf(input.base.key));
  const expiry = expiryOf(table, input, retention);
  if (expiry === null) return { key: input.base.key };
  const written = await writeExpiryCommit(table, expiry, input.now, retention, { dryRun: false, reader: readerFor(store) });
  return { key: written.key! };
}

/** What the commit of `input` drops on `table`: the snapshots still there and the refs the spec expires; null when nothing changes. */
function expiryOf(table: IcebergTable, input: CommitRemovalInput, retention: ReturnType<typeof tableRetention>): { expire: string[]; dropRefs: string[] } | null {
  const rules = planExpiry(table.read.metadata, input.now.getTime(), retention);
  // A version the metadata no longer holds was removed already (by another writer's expiry): nothing to do for it.
  const idOf = new Map([...table.ordered.versionOf].map(([id, version]) => [version, id]));
  const expire = input.remove.map((version) => idOf.get(version)).filter((id): id is string => id !== undefined);
  // A ref-only change is a commit of its own, as iceberg-java commits it.
  if (expire.length === 0 && rules.dropRefs.length === 0) return null;
  const retained = expire.find((id) => rules.retain.has(id));
  if (retained !== undefined) {
    throw new TableFormatError(
      table.store.uri,
      `cannot expire snapshot ${retained}: the table's snapshot retention keeps it (${rules.why.get(retained)!.reason}); nothing written`,
    );
  }
  return { expire, dropRefs: rules.dropRefs };
}

/** The files the current snapshot and every ref's snapshot name must exist (current-files.ts). */
async function checkReferencedFiles(store: ObjectStore, base: VersionFile, listing: Iterable<ObjectInfo>): Promise<void> {
  await assertRefFilesExist(store, readerFor(store), await tableAt(store, base.key, base.etag), listing);
}

/** A metadata file with a higher sequence than the plan's: a commit (create-only) that made it the current one. */
function committedAfter(key: string, base: VersionFile): boolean {
  const name = parseMetadataKey(key);
  const baseName = parseMetadataKey(base.key);
  return name !== null && baseName !== null && name.sequence > baseName.sequence;
}

/**
 * A run stopped between writing `v<N+1>.metadata.json` and the version hint leaves the hint at N
 * (Java writes the hint after the commit too, best effort). Java's readers probe past the hint;
 * readers that trust it (DuckDB, icebird) would read v<N>, whose expired snapshots' files the
 * next cleanup deletes. So before deleting, the hint is brought up to the newest metadata file.
 */
async function finishInterruptedCommit(store: ObjectStore): Promise<void> {
  const hint = await readVersionHint(store);
  if (hint === null) return;
  // A hint that names a file by its stem is the writer's pointer, not a number to bring up.
  if (hint.sequence === null && (await hintedMetadataKey(store, hint.text)) !== null) return;
  const latest = await latestMetadataFile(store);
  if (!latest || latest.name.naming !== "hadoop" || (hint.sequence !== null && hint.sequence >= latest.name.sequence)) return;
  await store.put(VERSION_HINT_KEY, new TextEncoder().encode(String(latest.name.sequence)));
}

function classify(key: string): FileRole | null {
  if (key.startsWith(METADATA_PREFIX)) {
    const name = key.slice(METADATA_PREFIX.length);
    // Any metadata JSON counts, not only version names: a failed Hadoop commit leaves `<uuid>.metadata.json`,
    // which is metadata no snapshot needs (the safety window keeps a commit in progress).
    if (parseMetadataKey(key) || /\.metadata\.json(\.gz)?$/.test(name) || key === VERSION_HINT_KEY || name.endsWith(".avro")) return "metadata";
    if (name.endsWith(".puffin") || name.endsWith(".stats")) return "statistics";
    return null;
  }
  if (key.startsWith(DATA_PREFIX)) return key.length > DATA_PREFIX.length ? "data" : null;
  return null;
}

/** One LIST of `metadata/`, stopping at the first table metadata file name or the version hint. */
async function detect(store: ObjectStore): Promise<boolean> {
  for await (const object of store.list(METADATA_PREFIX, { delimiter: "/" })) {
    // The hint counts too: a table whose metadata names carry no number is found through it.
    if (parseMetadataKey(object.key) || object.key === VERSION_HINT_KEY) return true;
  }
  return false;
}

function tableRootOfCommitKey(key: string): string | null {
  const at = key.lastIndexOf(`/${METADATA_PREFIX}`);
  if (at === -1 && !key.startsWith(METADATA_PREFIX)) return null;
  const name = key.slice(at === -1 ? METADATA_PREFIX.length : at + 1 + METADATA_PREFIX.length);
  if (name.includes("/") || parseMetadataFileName(name) === null) return null;
  return at === -1 ? "" : key.slice(0, at);
}

/**
 * The same format reading a table whose current metadata a catalog (REST, Glue) names: every
 * version and ref comes from that file, and lakewarden never commits through the catalog, so
 * no snapshot is expired (every version is kept) and no expired ref is dropped (the rules carry
 * no change to commit); orphans and old metadata are still removed.
 */
function icebergFormatAt(pointer: string, options: { allowSuperseded?: boolean; catalog?: CatalogBinding } = {}): TableFormat {
  if (options.catalog) return catalogBoundFormat(pointer, options.catalog);
  return defineFormat({
    ...icebergParts,
    listVersionFiles: (store) => listVersionFiles(store, pointer),
    latestVersionFile: (store) => latestVersionFile(store, pointer),
    startLatestLookup: (store) => startPointerLookup(store, pointer),
    findVersionFile: (store, version) => findVersionFile(store, version, pointer),
    readRefs: (store) => readRefs(store, pointer),
    // The catalog's file is named: other metadata beside it is not ambiguous, but a newer commit is.
    admit: async (store, base) => {
      const refusal = (await gcRefusal(store, base)) ?? (options.allowSuperseded === true ? null : await supersededPointerRefusal(store, base));
      return refusal ? { admitted: false, refusal } : ADMITTED;
    },
    removal: {
      ...ICEBERG_EXPIRY,
      rules: async (store, base, now) => ({ ...(await removalRules(store, base, now)), notes: [] }),
      keptTogether: (_kept, removed) =>
        new Map(removed.map((version) => [version, `the catalog owns this table's commits (metadata at ${pointer}): lakewarden expires no snapshot`])),
      // The catalog names the current metadata: the version hint is not the table's pointer there.
      finishInterrupted: async () => {},
    },
    at: icebergFormatAt,
  });
}

/**
 * The table read at the pointer `binding`'s entry names, expiring snapshots by the table's own
 * retention through a commit to that catalog (catalog-commit.ts). The pointer is the catalog's
 * word loaded for this run; once the run's commit is accepted and shown, the format reads the
 * new metadata (what remains after the deletes is checked against it). No superseded-pointer
 * refusal: a newer metadata file no catalog names is no commit, and a commit that lands while the
 * run plans makes the catalog refuse this run's (the entry moved), so nothing is deleted by a
 * stale plan.
 */
function catalogBoundFormat(pointer: string, binding: CatalogBinding): TableFormat {
  let current = pointer;
  return defineFormat({
    ...icebergParts,
    listVersionFiles: (store) => listVersionFiles(store, current),
    latestVersionFile: (store) => latestVersionFile(store, current),
    startLatestLookup: (store) => startPointerLookup(store, current),
    findVersionFile: (store, version) => findVersionFile(store, version, current),
    readRefs: (store) => readRefs(store, current),
    admit: async (store, base) => {
      const refusal = await gcRefusal(store, base);
      return refusal ? { admitted: false, refusal } : ADMITTED;
    },
    removal: {
      ...ICEBERG_EXPIRY,
      // The catalog names the current metadata: the version hint is not the table's pointer there.
      finishInterrupted: async () => {},
      commit: async (store, input) => {
        if (input.base.key !== current) {
          throw new CatalogCommitError(
            binding.catalog.label,
            "conflict",
            `the plan was made on ${input.base.key}, not ${current}, the metadata the catalog named: re-plan; nothing written or deleted`,
          );
        }
        const table = await openIcebergTable(store, { metadataKey: current });
        const retention = tableRetention(table.read.metadata.properties, store.uriOf(current));
        const expiry = expiryOf(table, input, retention);
        if (expiry === null) return { key: current };
        const committed = await commitExpiryThroughCatalog(table, expiry, input.now, retention, binding);
        current = committed.key;
        return committed;
      },
    },
    at: icebergFormatAt,
  });
}

/** Snapshot expiry by a metadata commit, for a table without a catalog. */
const ICEBERG_EXPIRY: MetadataCommitRemoval = {
  kind: "metadata-commit",
  rules: removalRules,
  keptTogether: NOTHING_KEPT_TOGETHER,
  checkReferencedFiles,
  committedAfter,
  finishInterrupted: finishInterruptedCommit,
  commit: commitRemoval,
};

const icebergParts: FormatParts = {
  name: "iceberg",
  versionsPrefix: METADATA_PREFIX,
  versionNoun: "snapshot",
  // ".metadata.json" also covers Java's and pyiceberg's ".gz.metadata.json". Java's legacy
  // ".metadata.json.gz" (read, no longer written) gets no S3 filter of its own: one more filter
  // per table root for a name no current writer uses.
  commitPatterns: [{ prefix: METADATA_PREFIX, suffix: ".metadata.json" }],
  managedPrefixes: ICEBERG_MANAGED_PREFIXES,
  removal: ICEBERG_EXPIRY,
  detect,
  tableRootOfCommitKey,
  parseVersionKey: () => null,
  branchAt: async () => null,
  formatsWrittenAlongside: async () => [],
  listVersionFiles,
  latestVersionFile,
  startLatestLookup: startListedLookup,
  findVersionFile,
  isBookkeepingFile: (key: string): boolean => isHiddenKey(key),
  readSnapshot,
  readForCleanup,
  readRecord,
  readRefs,
  admit,
  // The table's retention is the spec's per-ref snapshot retention (removal.rules), not a policy default.
  declaredRetention: () => ({ sources: {} }),
  // The run's reader decoded every kept manifest whole already: the proof asks it before decoding one again.
  proveFile: (store, file, listed) => proveIcebergFile(store, file, listed, readerFor(store)),
  classify,
  scanFiles: icebergScanFiles,
  readDataFileFooter: readParquetFooter,
  // Loaded on first use: the Lambdas that clean tables never read rows.
  readRows: async (store, snapshot, file, columns) => (await import("./scan-rows.ts")).readIcebergRows(store, snapshot, file, columns),
  at: icebergFormatAt,
  catalogPointer: icebergCatalogPointer,
};

export const icebergFormat: TableFormat = defineFormat(icebergParts);

/**
 * Every snapshot of the current metadata as a VersionRecord, read from the metadata alone (no
 * manifest is opened, so a table with a missing manifest list still lists its history), with
 * `is_tagged` from the main branch's tags; `pointer`: the metadata file a catalog names. What
 * `versions` needs of an Iceberg table; the generic readVersionRecords reads every snapshot's
 * manifests through readSnapshot instead.
 */
export async function icebergVersionRecords(store: ObjectStore, pointer?: string): Promise<VersionRecord[]> {
  const table = await openIcebergTable(store, pointer === undefined ? {} : { metadataKey: pointer });
  const tagged = mainBranchTaggedVersions(icebergRefs(table.read.metadata, table.ordered));
  return snapshotRecords(table.read.metadata, store.uriOf(table.metadataKey)).map((r) => ({ ...r, is_tagged: tagged.has(r.version) }));
}
