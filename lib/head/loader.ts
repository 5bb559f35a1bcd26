/**
 * The client API for reading a table's current state: `openTable(location | store)`.
 *
 * Cold load: GET the head and find the latest version at the same time (Lance V2 names: one
 * LIST with max-keys=1). A head holding exactly that version is the answer: no manifest
 * read. A stale, missing, unreadable or otherwise suspicious head is never trusted: the
 * latest manifest is read instead and the state says so (`source: "manifest"` + warning).
 *
 * Iceberg lists `metadata/` (and reads the version hint) beside the head's GET: a head written for
 * its metadata file's current snapshot is current when the listing shows that file unchanged and
 * still the newest, so no metadata file is read; anything else reads it (format.startLatestLookup).
 * Delta cannot list its log's tail before it knows a version: the head's GET, then one LIST from
 * its version.
 *
 * Warm load (`latest()` on the handle): within `versionCheckInterval` of the last check the
 * state is reused without any request (staleness bounded on purpose); after it, the latest
 * version file is looked up again from the state's own (Lance V2 names: one LIST with
 * max-keys=1; Iceberg: one LIST and the hint; Delta: one LIST from the state's version) and only
 * if it is another file is the rest of a cold load made. Asking whether version N+1 exists is not
 * enough: a cleanup removes N+1 when nothing pins it while a tag keeps N, so N+1's absence
 * does not prove that N is still the latest (found by the soak, bench/soak).
 */
import type { DataFileFooter } from "../formats/data-file-footer.ts";
import { noVersionError } from "../formats/errors.ts";
import { formatAtCatalogPointer } from "../formats/catalog.ts";
import type { TableCatalog } from "../formats/catalog-commit.ts";
import { registeredFormat, resolveFormat, suggestedFormat } from "../formats/index.ts";
import type { LatestVersionLookup, TableFormat, TableSnapshot, VersionFile } from "../formats/table-format.ts";
import { StoreError } from "../store/errors.ts";
import type { ObjectStore } from "../store/object-store.ts";
import { openStore } from "../store/open-store.ts";
import type { StoreOptions } from "../store/open-store.ts";
import { createPin, releasePin, renewPin } from "../pins/pins.ts";
import type { PinRecord } from "../pins/pins.ts";
import { headDescribesFile } from "./content.ts";
import type { RecentVersions } from "./content.ts";
import { headCodecs } from "./registry.ts";
import type { HeadCodecRegistry } from "./registry.ts";
import { loadStoredHead } from "./head-reader.ts";
import type { LoadedHead } from "./head-reader.ts";
import { liveFileColumnsFrom } from "./sectioned-content.ts";
import type { HeadIdentity, LiveFileColumns } from "./sectioned-content.ts";
import { HEAD_KEY } from "./stored-head.ts";
import type { PlanOptions, ScanPlan } from "../scan/plan.ts";
import type { ScanOptions, ValueBatch } from "../scan/rows.ts";
import type { RecordBatch } from "apache-arrow";

export const DEFAULT_VERSION_CHECK_INTERVAL_MS = 1000;

export type HeadFallbackReason =
  /** No head object yet (never written, or deleted). */
  | "head-missing"
  /** The head holds an older version than the latest. */
  | "head-stale"
  /** The head holds a version newer than any version file: not to be trusted. */
  | "head-ahead"
  /** The head holds the latest version number, but of another version file (the table was recreated or rewritten). */
  | "head-mismatch"
  /** Wrong magic, unknown codec, truncated, checksum mismatch, undecodable, or the GET failed. */
  | "head-unreadable";

export interface HeadWarning {
  reason: HeadFallbackReason;
  /** One line naming the head object and the problem. */
  message: string;
}

export interface TableState {
  /** The table's format. */
  format: TableFormat;
  version: number;
  /** "head" when the stored head was current and used as is; "manifest" when it fell back. */
  source: "head" | "manifest";
  /** Why the head was not used (null when source is "head"). */
  warning: HeadWarning | null;
  snapshot: TableSnapshot;
  /** Versions after the newest checkpoint, from the head; null when loaded from the manifest. */
  recentVersions: RecentVersions | null;
  /** Inlined data-file footers of live files (from the head; from a stale head only those still live). */
  footers: DataFileFooter[];
  /** Codec of the head used or found (null when there was none or it was unreadable). */
  codec: string | null;
  /** When this state's version was last confirmed as the latest (ms, the handle's clock). */
  checkedAt: number;
  /**
   * The live files as columns (one array per field), for callers that need no object per file:
   * from a sectioned head straight from its live_files section, else from `snapshot.liveFiles`.
   */
  liveFileColumns: () => LiveFileColumns;
}

export interface OpenTableOptions {
  format?: TableFormat;
  /** Reuse a checked version this long without a request (ms; default 1000; 0 = check on every call). */
  versionCheckInterval?: number;
  codecs?: HeadCodecRegistry;
  /** For a location string: how to open its store. */
  store?: StoreOptions;
  /** Called once per fallback, e.g. to log it; the warning is on the state as well. */
  onWarning?: (warning: HeadWarning) => void;
  /** Clock for the check interval (default Date.now). */
  now?: () => number;
  /**
   * The catalog that owns the table's commit pointer (an Iceberg table in AWS Glue or a REST
   * catalog): every check loads its entry and reads the metadata file it names, so the handle
   * never trusts a metadata file the catalog did not accept (the newest one may be a commit the
   * catalog refused or never heard back from).
   */
  catalog?: TableCatalog;
  /**
   * With `format` (and no catalog): openTable makes no request, and when the handle's first call
   * is `scan()`, the head's state is planned and its first data files read while the check that
   * the head is current is still out: two dependent round trips to the first data byte on every
   * format (Delta can list its log from the head's version only once the head is read: three
   * otherwise). No row reaches the caller before the check confirms the head; a head it does not
   * confirm has its reads dropped and the scan is planned again from the latest version
   * (lib/head/first-scan.ts). Any other first call loads as usual.
   */
  speculativeScan?: boolean;
}

/** Opens a table and cold-loads its current state (with `speculativeScan`, on its first call). */
export async function openTable(location: string | ObjectStore, options: OpenTableOptions = {}): Promise<TableHandle> {
  const store = typeof location === "string" ? openStore(location, options.store) : location;
  if (options.catalog) {
    const { format } = formatAtCatalogPointer(store, await options.catalog.load());
    if (options.format && options.format.name !== format.name) throw new TypeError(`${options.catalog.label} is ${format.name} table, not ${options.format.name}`);
    const handle = new TableHandle(store, { ...options, format });
    await handle.latest();
    return handle;
  }
  if (options.format) {
    const handle = new TableHandle(store, { ...options, format: options.format });
    if (!options.speculativeScan) await handle.latest();
    return handle;
  }
  // The first load finds the format (from the head, the pin or detection); the handle keeps it.
  const state = await loadTableState(store, { ...(options.codecs ? { codecs: options.codecs } : {}), checkedAt: (options.now ?? Date.now)() });
  const handle = new TableHandle(store, { ...options, format: state.format });
  handle.adopt(state);
  return handle;
}

export class TableHandle {
  readonly store: ObjectStore;
  private bound: TableFormat;
  private readonly catalog: TableCatalog | undefined;
  private readonly interval: number;
  private readonly codecs: HeadCodecRegistry;
  private readonly onWarning: ((warning: HeadWarning) => void) | undefined;
  private readonly now: () => number;
  private state: TableState | null = null;
  private inflight: Promise<TableState> | null = null;
  private readonly pins = new Set<ReaderPin>();
  /** Opened with `speculativeScan` and nothing loaded or asked yet: a first scan() may read before the check. */
  private coldScan: boolean;

  constructor(store: ObjectStore, options: OpenTableOptions & { format: TableFormat }) {
    const interval = options.versionCheckInterval ?? DEFAULT_VERSION_CHECK_INTERVAL_MS;
    if (!Number.isFinite(interval) || interval < 0) throw new RangeError(`versionCheckInterval must be >= 0 ms, got ${interval}`);
    this.store = store;
    this.bound = options.format;
    this.catalog = options.catalog;
    this.interval = interval;
    this.codecs = options.codecs ?? headCodecs;
    this.onWarning = options.onWarning;
    this.now = options.now ?? Date.now;
    this.coldScan = options.speculativeScan === true && !options.catalog;
  }

  /** The table's format (with a catalog: read at the pointer the catalog named at the last check). */
  get format(): TableFormat {
    return this.bound;
  }

  /** Takes a state loaded elsewhere (openTable's first load) as this handle's own. */
  adopt(state: TableState): void {
    if (state.warning) this.onWarning?.(state.warning);
    this.state = state;
  }

  /** The last state loaded, without any request (null before the first load). */
  current(): TableState | null {
    return this.state;
  }

  /** The latest state: reused within the check interval, else checked (one HEAD), reloaded if newer. */
  latest(): Promise<TableState> {
    const state = this.state;
    if (state && this.now() - state.checkedAt < this.interval) return Promise.resolve(state);
    return this.refresh();
  }

  /** Checks now, whatever the interval. Concurrent calls share one check. */
  refresh(): Promise<TableState> {
    this.coldScan = false;
    this.inflight ??= this.check().finally(() => {
      this.inflight = null;
    });
    return this.inflight;
  }

  /**
   * Pins `version` (default: the current state's version) for readers: cleanup keeps it and
   * every file it references until the pin expires (`ttlMs` from now; renew to extend). The
   * pin is an object under `_lakewarden/pins/`, seen by cleanups in any process; `release()`
   * or `close()` removes it.
   */
  async pin(version?: number, options: PinOptions = {}): Promise<ReaderPin> {
    const ttlMs = options.ttlMs ?? DEFAULT_PIN_TTL_MS;
    const state = this.state ?? (await this.latest());
    const pinned = version ?? state.version;
    // Another version: it must exist, and the pin records the format's own id for it.
    const versionId =
      pinned === state.version
        ? state.snapshot.record.version_id
        : (await this.format.readForCleanup(this.store, await this.format.findVersionFile(this.store, pinned))).record.version_id;
    const record = await createPin(this.store, { version: pinned, versionId, ttlMs, note: options.note ?? null, now: new Date(this.now()) });
    const pin = new ReaderPin(this.store, record, ttlMs, this.now, () => this.pins.delete(pin));
    this.pins.add(pin);
    return pin;
  }

  /**
   * The data files that may hold rows matching `filter` in the latest state (lib/scan/plan.ts),
   * each with the delete files that apply to it and its inline footer: no request beyond
   * `latest()`'s. Throws FilterSyntaxError naming the position of a bad filter or column.
   */
  async plan(options: PlanOptions = {}): Promise<ScanPlan> {
    // Loaded on first use: the Lambdas that open tables never plan queries (bench/results/bundle-sizes.md).
    const { planFiles } = await import("../scan/plan.ts");
    return planFiles(await this.latest(), options);
  }

  /**
   * The rows matching `filter` in the latest state as Arrow record batches (one per data file
   * that has any; lib/scan/rows.ts): deletes applied, the head's inline footers used so a file
   * costs no footer GET. Throws FilterSyntaxError naming a bad filter or column, and the
   * format's error naming a file it cannot read.
   */
  async *scan(options: ScanOptions = {}): AsyncGenerator<RecordBatch> {
    // Loaded on first use, like plan(): no Lambda that opens tables reads rows.
    const [{ scanValues }, { toRecordBatch }] = await Promise.all([import("../scan/rows.ts"), import("../scan/arrow-batches.ts")]);
    const batches = this.takeColdScan() ? this.scanFromCold(options) : scanValues({ ...(await this.latest()), store: this.store }, options);
    for await (const batch of batches) yield toRecordBatch(batch);
  }

  /** True once: for the first call of a handle opened with `speculativeScan`, when nothing was loaded or asked before it. */
  private takeColdScan(): boolean {
    const cold = this.coldScan && this.state === null && this.inflight === null;
    this.coldScan = false;
    return cold;
  }

  private async *scanFromCold(options: ScanOptions): AsyncGenerator<ValueBatch> {
    const { scanFromCold } = await import("./first-scan.ts");
    yield* scanFromCold(this.store, { format: this.format, codecs: this.codecs, checkedAt: this.now(), onState: (state) => this.adopt(state) }, options);
  }

  /** Releases every pin this handle still holds. The handle can still read afterwards. */
  async close(): Promise<void> {
    await Promise.all([...this.pins].map((pin) => pin.release()));
  }

  private async check(): Promise<TableState> {
    const state = this.state;
    const checkedAt = this.now();
    if (!state) return this.load(checkedAt);
    // The catalog's entry, loaded on every check after the first (openTable bound the format to it): its pointer names the current commit.
    if (this.catalog) this.bound = formatAtCatalogPointer(this.store, await this.catalog.load()).format;
    // From the state's own version file: one LIST on every format when nothing changed (Iceberg:
    // the listing shows its metadata file unchanged; Delta: the log listed from its version).
    const known = state.snapshot.versionFile;
    const lookup = this.format.startLatestLookup(this.store, known);
    const latest = await lookup.latestFrom(known).finally(() => lookup.settled());
    if (latest && sameVersionFile(latest, known)) {
      this.state = { ...state, checkedAt };
      return this.state;
    }
    return this.load(checkedAt, latest ?? undefined);
  }

  private async load(checkedAt: number, latest?: VersionFile): Promise<TableState> {
    const loaded = await loadTableState(this.store, { format: this.format, codecs: this.codecs, checkedAt, ...(latest ? { latest } : {}) });
    if (loaded.warning) this.onWarning?.(loaded.warning);
    this.state = loaded;
    return loaded;
  }
}

export const DEFAULT_PIN_TTL_MS = 60 * 60_000;

export interface PinOptions {
  /** How long the pin holds from now (and from each renew); default one hour. */
  ttlMs?: number;
  /** Free text for people reading `lakewarden pins list`. */
  note?: string;
}

/** A reader pin held by this process: renew it while reading, release it when done. */
export class ReaderPin {
  private current: PinRecord;
  private released = false;
  private readonly store: ObjectStore;
  private readonly ttlMs: number;
  private readonly now: () => number;
  private readonly onRelease: () => void;

  constructor(store: ObjectStore, record: PinRecord, ttlMs: number, now: () => number, onRelease: () => void) {
    this.store = store;
    this.current = record;
    this.ttlMs = ttlMs;
    this.now = now;
    this.onRelease = onRelease;
  }

  get id(): string {
    return this.current.id;
  }
  get version(): number {
    return this.current.version;
  }
  get record(): PinRecord {
    return this.current;
  }

  /** Moves the expiry to now + ttl (the pin's own, or the one given). */
  async renew(ttlMs: number = this.ttlMs): Promise<PinRecord> {
    if (this.released) throw new Error(`pin ${this.id} was released`);
    this.current = await renewPin(this.store, this.id, ttlMs, new Date(this.now()));
    return this.current;
  }

  /** Deletes the pin; a second call does nothing. */
  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    this.onRelease();
    await releasePin(this.store, this.id);
  }
}

function sameVersionFile(a: VersionFile, b: VersionFile): boolean {
  return a.version === b.version && a.key === b.key && a.size === b.size && a.etag === b.etag;
}

export interface LoadTableStateOptions {
  format?: TableFormat;
  codecs?: HeadCodecRegistry;
  checkedAt?: number;
  /** The latest version file, when the caller has just listed it (saves the LIST). */
  latest?: VersionFile;
  /** The head, when the caller has just read it (saves the GET). */
  head?: LoadedHead;
}

/** One cold load: the head and the latest version in parallel, the manifest only when needed. */
export async function loadTableState(store: ObjectStore, options: LoadTableStateOptions = {}): Promise<TableState> {
  // A load leaves no request of its own running once it returns: a wrong guess's listing (made
  // alongside the head's read, its answer unused) is waited for, mostly long finished by then.
  const early: Promise<unknown>[] = [];
  try {
    return await loadState(store, options, early);
  } finally {
    await Promise.allSettled(early);
  }
}

async function loadState(store: ObjectStore, options: LoadTableStateOptions, started: Promise<unknown>[]): Promise<TableState> {
  const codecs = options.codecs ?? headCodecs;
  const checkedAt = options.checkedAt ?? Date.now();
  // With the caller's format, the head and the latest version are read at once. Without it the
  // head names the format (its properties come first), then the latest is listed: a round trip
  // more, no request more (unless the location's name suggests the format, below); a head that
  // cannot say leaves it to the pin or detection.
  let known: TableFormat | undefined = options.format;
  // Per format: its lookup (started once), and the answer once one was asked for.
  const lookups = new Map<string, LatestVersionLookup>();
  const answers = new Map<string, Promise<VersionFile | null>>();
  // `known`: a lookup first made to judge a head starts from the head's version file (Delta: no `_last_checkpoint` read).
  const lookupOf = (format: TableFormat, known?: VersionFile): LatestVersionLookup => {
    let lookup = lookups.get(format.name);
    if (!lookup) {
      const given = options.latest && format === options.format ? options.latest : null;
      lookup = given ? { latest: async () => given, latestFrom: async () => given, settled: async () => {} } : format.startLatestLookup(store, known);
      lookups.set(format.name, lookup);
    }
    return lookup;
  };
  const answer = (format: TableFormat, ask: () => Promise<VersionFile | null>): Promise<VersionFile | null> => {
    let latest = answers.get(format.name);
    if (!latest) answers.set(format.name, (latest = ask()));
    return latest;
  };
  const latestOf = (format: TableFormat) => answer(format, () => lookupOf(format).latest());
  // Without a format, one the location's name suggests (a `.lance` folder) is listed at once
  // too: the round trip after the head names the format is saved when the guess is right, and a
  // wrong guess costs one LIST whose answer is not used.
  const early = known ?? suggestedFormat(store.uri);
  if (early) lookupOf(early);
  // A sectioned head is judged by its properties alone, before the rest is read or decompressed;
  // the lookup may answer from the head's version file in fewer round trips (Iceberg: from the
  // listing alone, when it shows the head's metadata file unchanged and still the newest).
  const isCurrent = async (identity: HeadIdentity) => {
    known ??= registeredFormat(identity.format);
    if (!known || identity.format !== known.name) return false;
    const format = known;
    const file = await answer(format, () => lookupOf(format, identity.versionFile).latestFrom(identity.versionFile));
    return file !== null && identityDescribesFile(identity, file, format.name);
  };
  let stored: LoadedHead;
  try {
    stored = options.head ?? (await getHead(store, codecs, isCurrent));
  } finally {
    // What the lookups started is waited for before the load returns (their answers unused by a wrong guess).
    for (const lookup of lookups.values()) started.push(lookup.settled());
  }
  if (!known && stored.state === "readable") known = registeredFormat(stored.content.format);
  const format = known ?? (await resolveFormat(store));
  const latest = await latestOf(format);
  if (!latest) throw await noVersionError(store, format);
  const headUri = store.uriOf(HEAD_KEY);

  if (stored.state === "readable" && headDescribesFile(stored.content, latest, format.name)) return headState(format, stored, checkedAt);

  const warning = fallbackWarning(stored, latest, headUri, format.name);
  const snapshot = await format.readSnapshot(store, latest);
  return {
    format,
    version: latest.version,
    source: "manifest",
    warning,
    snapshot,
    recentVersions: null,
    footers: stored.state === "readable" ? stillLive(stored.content.footers, snapshot) : [],
    codec: stored.state === "readable" || stored.state === "not-current" ? (stored.probe.header?.codec ?? null) : null,
    checkedAt,
    liveFileColumns: () => liveFileColumnsFrom(snapshot.liveFiles),
  };
}

/** The state a readable head holds, as a current head's load returns it. */
export function headState(format: TableFormat, stored: Extract<LoadedHead, { state: "readable" }>, checkedAt: number): TableState {
  const { content } = stored;
  return {
    format,
    version: content.tableVersion,
    source: "head",
    warning: null,
    snapshot: content.snapshot,
    // Getters: a sectioned head decodes these sections only when they are read.
    get recentVersions() {
      return content.recentVersions;
    },
    get footers() {
      return content.footers;
    },
    codec: stored.probe.header?.codec ?? null,
    checkedAt,
    liveFileColumns: () => content.liveFileColumns?.() ?? liveFileColumnsFrom(content.snapshot.liveFiles),
  };
}

/** As headDescribesFile, from what a head's properties say. */
function identityDescribesFile(identity: HeadIdentity, file: VersionFile, formatName: string): boolean {
  const recorded = identity.versionFile;
  return identity.format === formatName && identity.tableVersion === file.version && recorded.size === file.size && recorded.etag === file.etag;
}

/** The head (sectioned: its prefix first); a failed GET is reported like an unreadable head, so a manifest read can still answer. */
async function getHead(store: ObjectStore, codecs: HeadCodecRegistry, isCurrent: (identity: HeadIdentity) => Promise<boolean>): Promise<LoadedHead> {
  try {
    return await loadStoredHead(store, codecs, isCurrent);
  } catch (error) {
    if (error instanceof StoreError) return { state: "failed", problem: error.message };
    throw error;
  }
}

function fallbackWarning(stored: LoadedHead, latest: VersionFile, headUri: string, formatName: string): HeadWarning {
  switch (stored.state) {
    case "missing":
      return { reason: "head-missing", message: `${headUri}: no head object; read the manifest of version ${latest.version} instead` };
    case "failed":
    case "unreadable":
      return { reason: "head-unreadable", message: `${stored.problem}; read the manifest of version ${latest.version} instead` };
    case "readable":
    case "not-current": {
      const identity =
        stored.state === "readable"
          ? { format: stored.content.format, tableVersion: stored.content.tableVersion, versionFile: stored.content.snapshot.versionFile }
          : stored.identity;
      const held = identity.tableVersion;
      if (identity.format !== formatName) {
        return { reason: "head-unreadable", message: `${headUri}: head describes a ${identity.format} table, not ${formatName}; read the manifest instead` };
      }
      if (held === latest.version) {
        const file = identity.versionFile;
        return {
          reason: "head-mismatch",
          message:
            `${headUri}: head describes version ${held} as ${file.key} (${file.size} bytes, ETag ${file.etag}) but the stored one is ` +
            `${latest.key} (${latest.size} bytes, ETag ${latest.etag}); read its manifest instead`,
        };
      }
      return held < latest.version
        ? { reason: "head-stale", message: `${headUri}: head holds version ${held}, the latest is ${latest.version}; read its manifest instead` }
        : { reason: "head-ahead", message: `${headUri}: head holds version ${held} but the latest version file is ${latest.version}; read its manifest instead` };
    }
  }
}

function stillLive(footers: readonly DataFileFooter[], snapshot: TableSnapshot): DataFileFooter[] {
  const live = new Set(snapshot.liveFiles.flatMap((file) => file.paths));
  return footers.filter((footer) => live.has(footer.path));
}
