/**
 * Lance behind the format-neutral TableFormat interface (lib/formats/table-format.ts).
 * Everything Lance-specific the rest of lakewarden needs goes through `lanceFormat`.
 */
import type { ObjectInfo, ObjectStore } from "../../store/object-store.ts";
import { NotFoundError } from "../../store/errors.ts";
import { ADMITTED, NOTHING_KEPT_TOGETHER } from "../table-format.ts";
import type {
  CleanupView,
  FileReference,
  FileRole,
  ListedVersion,
  ReferenceSequence,
  Refs,
  TableFormat,
  TableSnapshot,
  UnresolvedReference,
  VersionFile,
  VersionKeysAndRefs,
} from "../table-format.ts";
import { defineFormat } from "../define-format.ts";
import { compareKeys } from "../../store/keys.ts";
import { listKeys, type ListedKey } from "../../store/list-keys.ts";
import type { VersionRecord, VersionTotals } from "../../model/version-record.ts";
import { numberedVersionIdentity } from "../../model/version-record.ts";
import { CorruptFileError } from "../errors.ts";
import { proveLanceFile } from "./prove-file.ts";
import { readLanceDataFileFooter } from "./data-file-footer.ts";
import type { LanceManifest, LanceTransaction } from "./manifest-model.ts";
import type { FragmentCache, LanceCleanupView } from "./manifest-reader.ts";
import { loadManifestReader } from "./load-manifest-reader.ts";
import { readLanceCleanupVersion, readLanceVersion } from "./read-version.ts";
import { REFS_PREFIX, readLanceRefs } from "./refs.ts";
import { toSafeNumber } from "./safe-integer.ts";
import { liveFiles, referencedFiles } from "./snapshot-files.ts";
import { summarizeManifest } from "./summary.ts";
import { DATA_PREFIX, DELETIONS_PREFIX, INDICES_PREFIX, TRANSACTIONS_PREFIX } from "./table-paths.ts";
import { VERSIONS_PREFIX, parseVersionKey, versionKey, type ParsedVersionName } from "./version-names.ts";
import { lanceScanFiles } from "./scan-files.ts";

/** The folders Lance cleanup itself lists (since lance#5338); nothing else is ever a candidate. */
export const LANCE_MANAGED_PREFIXES = [VERSIONS_PREFIX, DATA_PREFIX, TRANSACTIONS_PREFIX, INDICES_PREFIX, DELETIONS_PREFIX] as const;

function toVersionFile(object: ObjectInfo, parsed: ParsedVersionName): VersionFile {
  return {
    version: parsed.version,
    key: object.key,
    size: object.size,
    etag: object.etag,
    lastModified: object.lastModified,
  };
}

/**
 * Every version file, ascending. Lance never mixes naming schemes in one folder, but a
 * half-migrated folder can: then a version present under both names is listed once, under
 * its V2 name (the one `findVersionFile` resolves first).
 */
async function listVersionFiles(store: ObjectStore): Promise<VersionFile[]> {
  const byVersion = new Map<number, { file: VersionFile; naming: ParsedVersionName["naming"] }>();
  for await (const object of store.list(VERSIONS_PREFIX, { delimiter: "/" })) {
    const parsed = parseVersionKey(object.key);
    if (parsed === null) continue;
    const existing = byVersion.get(parsed.version);
    if (existing && existing.naming === "v2") continue;
    byVersion.set(parsed.version, { file: toVersionFile(object, parsed), naming: parsed.naming });
  }
  return [...byVersion.values()].map((entry) => entry.file).sort((a, b) => a.version - b.version);
}

/** listVersionFiles without a stat per file on a local disk: the same keys, the same rule for a key listed under both names. */
async function listVersionKeys(store: ObjectStore): Promise<ListedVersion[]> {
  const entries: ListedKey[] = [];
  for await (const entry of listKeys(store, VERSIONS_PREFIX, { delimiter: "/" })) entries.push(entry);
  return versionKeysOf(entries);
}

/**
 * One listing for `_refs/` and `_versions/`: keys from `_` on, after `_refs` (or after the
 * caller's `alsoAfter`, a key of its own folder that sorts before it, which the listing then
 * covers too), with "transactions/" as the delimiter. In a Lance table's root `_refs/` <
 * `_transactions/` < `_versions/` and nothing else starting with `_` sorts after `_refs`
 * (`_deletions/`, `_indices/`, `_latest.manifest`, `_lakewarden/` sort before it), and every key
 * of `_transactions/` (one per commit) rolls up into a single common prefix that S3 counts as
 * one entry of the page. So the two folders come in one LIST of ~tags + versions + 1 entries
 * (plus the caller's keys). No key either reader uses is rolled up: one holding "transactions/"
 * after `_` is nested below `_refs/tags/`, `_refs/branches/` or `_versions/` (a "/" after the
 * folder), and both readers skip nested keys. A store that ignored the delimiter would list
 * `_transactions/` too: more pages, the same answer.
 */
async function listVersionKeysAndRefs(store: ObjectStore, options: { alsoAfter?: string } = {}): Promise<VersionKeysAndRefs> {
  const { alsoAfter } = options;
  const withCaller = alsoAfter !== undefined && alsoAfter.startsWith("_") && compareKeys(alsoAfter, REFS_START_AFTER) < 0;
  const versionEntries: ListedKey[] = [];
  const refKeys: string[] = [];
  const also: ListedKey[] = [];
  for await (const entry of listKeys(store, "_", { startAfter: withCaller ? alsoAfter : REFS_START_AFTER, delimiter: TRANSACTIONS_PREFIX.slice(1) })) {
    if (entry.key.startsWith(VERSIONS_PREFIX)) versionEntries.push(entry);
    else if (entry.key.startsWith(REFS_PREFIX)) refKeys.push(entry.key);
    else also.push(entry);
  }
  const found = { versionKeys: versionKeysOf(versionEntries), refs: await readLanceRefs(store, refKeys) };
  return withCaller ? { ...found, also } : found;
}

/** Every key of `_refs/` is after this one, and nothing of Lance's before `_refs/` is. */
const REFS_START_AFTER = "_refs";

function versionKeysOf(entries: readonly ListedKey[]): ListedVersion[] {
  const byVersion = new Map<number, { listed: ListedVersion; naming: ParsedVersionName["naming"] }>();
  for (const entry of entries) {
    const parsed = parseVersionKey(entry.key);
    if (parsed === null) continue;
    const existing = byVersion.get(parsed.version);
    if (existing && existing.naming === "v2") continue;
    const file = (): VersionFile | null => {
      const info = entry.info();
      return info ? toVersionFile(info, parsed) : null;
    };
    byVersion.set(parsed.version, { listed: { version: parsed.version, key: entry.key, file }, naming: parsed.naming });
  }
  return [...byVersion.values()].map((entry) => entry.listed).sort((a, b) => a.version - b.version);
}

/**
 * V2 names sort newest first, so when the first listed entry is a V2 name it is the latest
 * version: one LIST with max-keys=1 (our stores list in lexicographic order). Otherwise (V1
 * names, a temp file listed first, a mixed folder) list everything and take the max over
 * both schemes. Like Lance (`current_manifest_path`), a first V2 name is trusted: a
 * half-migrated folder whose newest versions still have V1 names is not detected then.
 */
async function latestVersionFile(store: ObjectStore): Promise<VersionFile | null> {
  for await (const first of store.list(VERSIONS_PREFIX, { delimiter: "/", maxKeys: 1 })) {
    const parsed = parseVersionKey(first.key);
    if (parsed?.naming === "v2") return toVersionFile(first, parsed);
    break;
  }
  const all = await listVersionFiles(store);
  return all.at(-1) ?? null;
}

/** HEAD the V2 name, then the V1 name; NotFoundError (for the V1 key) when neither exists. */
async function findVersionFile(store: ObjectStore, version: number): Promise<VersionFile> {
  const v2Key = versionKey(version, "v2");
  try {
    return toVersionFile(await store.head(v2Key), { version, naming: "v2" });
  } catch (error) {
    if (!(error instanceof NotFoundError)) throw error;
  }
  return toVersionFile(await store.head(versionKey(version, "v1")), { version, naming: "v1" });
}

function toVersionRecord(
  manifest: { version: number; timestampNanos: bigint; branch: string | null },
  totals: VersionTotals,
  transaction: LanceTransaction | null,
  uri: string,
): VersionRecord {
  return {
    version: manifest.version,
    // Truncated to the millisecond, as LanceDB's `new Date(micros / 1000)` does.
    timestamp_millis: toSafeNumber(manifest.timestampNanos / 1_000_000n, "manifest timestamp (ms)", uri),
    ...totals,
    is_tagged: false,
    is_cleaned_up: false,
    transaction_uuid: transaction?.uuid ?? null,
    read_version: transaction?.readVersion ?? null,
    operation_type: transaction?.operation ?? null,
    transaction_properties: transaction?.properties ?? {},
    // Lance records the version a commit read, not a parent: versions form one line per branch.
    ...numberedVersionIdentity(manifest.version, manifest.version > 1 ? manifest.version - 1 : null, manifest.branch),
    metrics: {},
  };
}

/** Per scan (cleanup's) or per store (one table): fragments already decoded in an earlier version (manifest-reader.ts). */
const fragmentCaches = new WeakMap<object, FragmentCache>();
/**
 * In readSnapshot, larger manifests are decoded whole, without the cache: keying 100K fragments
 * costs more than it saves for the one manifest a head write reads. Cleanup reads every manifest
 * through the cache whatever its size (readForCleanup): there, sharing fragments between versions
 * is what keeps memory down (bench/results/cleanup.md, scale-cleanup.md).
 */
const FRAGMENT_CACHE_MAX_MANIFEST_BYTES = 1024 * 1024;

async function fragmentCacheOf(owner: object): Promise<FragmentCache> {
  let cache = fragmentCaches.get(owner);
  if (!cache) {
    const { FragmentCache } = await loadManifestReader();
    // Another read of the same owner may have made one while the reader loaded.
    cache = fragmentCaches.get(owner) ?? new FragmentCache();
    fragmentCaches.set(owner, cache);
  }
  return cache;
}

/**
 * Small manifests (`versions` reads every one no checkpoint or head holds): the record, the referenced files and the config
 * come from the cleanup-depth decoding, fragments shared with earlier versions; the live files
 * and the schema (which only a head needs) are decoded on first use. Large ones (a head write
 * reads one, and uses all of it): decoded once, whole; the referenced and live files are
 * derived from it on first use.
 */
async function readSnapshot(store: ObjectStore, file: VersionFile): Promise<TableSnapshot> {
  const uri = store.uriOf(file.key);
  const checkVersion = (version: number) => {
    if (version !== file.version) throw new CorruptFileError(uri, `manifest says version ${version} but its file name says ${file.version}`);
  };
  if (file.size > FRAGMENT_CACHE_MAX_MANIFEST_BYTES) {
    const { manifest, transaction, bytes } = await readLanceVersion(store, file.key, file.size);
    checkVersion(manifest.version);
    let references: ReturnType<typeof referencedFiles> | null = null;
    let live: TableSnapshot["liveFiles"] | null = null;
    return {
      record: toVersionRecord(manifest, summarizeManifest(manifest), transaction, uri),
      get referencedFiles() {
        return (references ??= referencedFiles(manifest, store.uri)).files;
      },
      get unresolvedReferences() {
        return (references ??= referencedFiles(manifest, store.uri)).unresolved;
      },
      get liveFiles() {
        return (live ??= liveFiles(manifest, store.uri));
      },
      schema: manifest.fields,
      config: manifest.config,
      raw: bytes,
      versionFile: file,
    };
  }
  const { view, transaction, bytes } = await readLanceCleanupVersion(store, file.key, file.size, await fragmentCacheOf(store));
  checkVersion(view.version);
  const { decodeLanceManifestFile } = await loadManifestReader();
  let full: LanceManifest | null = null;
  let live: TableSnapshot["liveFiles"] | null = null;
  const manifest = (): LanceManifest => (full ??= decodeLanceManifestFile(bytes, uri).manifest);
  return {
    record: toVersionRecord(view, view.totals, transaction, uri),
    referencedFiles: view.references,
    unresolvedReferences: view.unresolved,
    get liveFiles() {
      return (live ??= liveFiles(manifest(), store.uri));
    },
    get schema() {
      return manifest().fields;
    },
    config: view.config,
    raw: bytes,
    versionFile: file,
  };
}

/**
 * Cleanup's read: only what cleanup needs, fragments shared with the versions read before at any
 * manifest size. A table of 100,000 fragments and hundreds of versions names the same fragments
 * in every manifest: decoded apart, each version held its own objects (~170 bytes a reference,
 * 1.1 GB for 64 versions); shared, a version costs its list of them.
 */
async function readForCleanup(store: ObjectStore, file: VersionFile, scan?: object): Promise<CleanupView> {
  // Cleanup reads every byte of a manifest: one GET of the listed size, not the tail and then the rest.
  const { view, transaction } = await readLanceCleanupVersion(store, file.key, file.size, await fragmentCacheOf(scan ?? store), { whole: true });
  if (view.version !== file.version) throw new CorruptFileError(store.uriOf(file.key), `manifest says version ${view.version} but its file name says ${file.version}`);
  return new LanceCleanupRead(toVersionRecord(view, view.totals, transaction, store.uriOf(file.key)), view);
}

/** A version as cleanup reads it: the list of its references is made only if read (the pipeline reads the sequence). */
class LanceCleanupRead implements CleanupView {
  readonly record: VersionRecord;
  readonly referenceSequence: ReferenceSequence;
  readonly unresolvedReferences: UnresolvedReference[];
  readonly config: Record<string, string>;
  readonly #view: LanceCleanupView;

  constructor(record: VersionRecord, view: LanceCleanupView) {
    this.record = record;
    this.referenceSequence = view.sequence;
    this.unresolvedReferences = view.unresolved;
    this.config = view.config;
    this.#view = view;
  }

  get referencedFiles(): FileReference[] {
    return this.#view.references;
  }
}

function classify(key: string): FileRole | null {
  if (key.startsWith(VERSIONS_PREFIX)) return parseVersionKey(key) ? "commit" : null;
  if (key.startsWith(DATA_PREFIX)) return key.endsWith(".lance") ? "data" : null;
  if (key.startsWith(DELETIONS_PREFIX)) return /\.(arrow|bin)$/.test(key) ? "delete" : null;
  if (key.startsWith(TRANSACTIONS_PREFIX)) return key.endsWith(".txn") ? "transaction" : null;
  if (key.startsWith(INDICES_PREFIX)) return key.length > INDICES_PREFIX.length ? "index" : null;
  return null;
}

/**
 * Lance keeps a branch as a dataset of its own under `{root}/tree/{branch}/` (lance.md §1), whose
 * manifests name the branch. Only a location with a `tree` folder in its path costs a request.
 */
async function branchAt(store: ObjectStore): Promise<string | null> {
  if (!store.uri.includes("/tree/")) return null;
  const latest = await latestVersionFile(store);
  return latest ? (await readLanceVersion(store, latest.key, latest.size)).manifest.branch : null;
}

/** Newer Lance writes this hint on stores whose listing is unordered; it is Lance's to manage. */
const VERSION_HINT_KEY = `${VERSIONS_PREFIX}latest_version_hint.json`;

/** One LIST of one key, unless the first key in `_versions/` is not a version file (a temp file): then the full walk. */
async function detect(store: ObjectStore): Promise<boolean> {
  for await (const first of store.list(VERSIONS_PREFIX, { delimiter: "/", maxKeys: 1 })) {
    if (parseVersionKey(first.key) !== null) return true;
    return (await latestVersionFile(store)) !== null;
  }
  return false;
}

/** A bucket key `{root}/_versions/{name}` that names a version file: its root (`""` for a table at the bucket's root). */
function tableRootOfCommitKey(key: string): string | null {
  // The last occurrence: a version file name never contains "/", a table's parent folders might.
  const at = key.lastIndexOf(`/${VERSIONS_PREFIX}`);
  if (at === -1 && !key.startsWith(VERSIONS_PREFIX)) return null;
  const versionKey = at === -1 ? key : key.slice(at + 1);
  return parseVersionKey(versionKey) === null ? null : at === -1 ? "" : key.slice(0, at);
}

export const lanceFormat: TableFormat = defineFormat({
  name: "lance",
  versionsPrefix: VERSIONS_PREFIX,
  commitPatterns: [{ prefix: VERSIONS_PREFIX, suffix: ".manifest" }],
  managedPrefixes: LANCE_MANAGED_PREFIXES,
  // Lance's own cleanup: reference counting, each removed version's manifest deleted first.
  removal: { kind: "commit-files-first", keptTogether: NOTHING_KEPT_TOGETHER },
  detect,
  tableRootOfCommitKey,
  parseVersionKey: (key: string): number | null => parseVersionKey(key)?.version ?? null,
  // LanceDB names every table folder `{name}.lance`.
  locationSuggests: (uri: string): boolean => /\.lance\/?$/.test(uri),
  formatsWrittenAlongside: async () => [],
  listVersionFiles,
  listVersionKeys,
  listVersionKeysAndRefs,
  latestVersionFile,
  findVersionFile,
  readSnapshot,
  readForCleanup,
  readRefs: (store: ObjectStore): Promise<Refs> => readLanceRefs(store),
  // Reading a manifest refuses the reader features lakewarden does not know; nothing else keeps a Lance table from cleanup.
  admit: async () => ADMITTED,
  declaredRetention: () => ({ sources: {} }),
  branchAt,
  classify,
  scanFiles: lanceScanFiles,
  isBookkeepingFile: (key: string): boolean => key === VERSION_HINT_KEY,
  readDataFileFooter: readLanceDataFileFooter,
  proveFile: proveLanceFile,
});
