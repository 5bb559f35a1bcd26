/**
 * The client API for reading a table's current state: `openTable(location | store)`.
 *
 * Cold load: GET the head and find the latest version at the same time (Lance V2 names: one
 * LIST with max-keys=1). A head holding exactly that version is the answer: no manifest
 * read. A stale, missing, unreadable or otherwise suspicious head is never trusted: the
 * latest manifest is read instead and the state says so (`source: "manifest"` + warning).
 *
 * Warm load (`latest()` on the handle): within `versionCheckInterval` of the last check the
 * state is reused without any request (staleness bounded on purpose); after it, the latest
 * version file is looked up again (Lance V2 names: one LIST with max-keys=1) and only if it
 * is another file is the rest of a cold load made. Asking whether version N+1 exists is not
 * enough: a cleanup removes N+1 when nothing pins it while a tag keeps N, so N+1's absence
 * does not prove that N is still the latest (found by the soak, bench/soak).
 */
import type { DataFileFooter } from "../formats/data-file-footer.ts";
import { noVersionFilesError } from "../formats/errors.ts";
import { resolveFormat, TABLE_FORMATS } from "../formats/index.ts";
import type { TableFormat, TableSnapshot, VersionFile } from "../formats/table-format.ts";
import { NotFoundError, StoreError } from "../store/errors.ts";
import type { ObjectStore } from "../store/object-store.ts";
import { openStore } from "../store/open-store.ts";
import type { StoreOptions } from "../store/open-store.ts";
import { headDescribesFile } from "./content.ts";
import type { RecentVersions } from "./content.ts";
import { headCodecs } from "./registry.ts";
import type { HeadCodecRegistry } from "./registry.ts";
import { HEAD_KEY, interpretStoredHead } from "./stored-head.ts";
import type { StoredHead } from "./stored-head.ts";

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
}

/** Opens a table and cold-loads its current state. */
export async function openTable(location: string | ObjectStore, options: OpenTableOptions = {}): Promise<TableHandle> {
  const store = typeof location === "string" ? openStore(location, options.store) : location;
  if (options.format) {
    const handle = new TableHandle(store, { ...options, format: options.format });
    await handle.latest();
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
  readonly format: TableFormat;
  private readonly interval: number;
  private readonly codecs: HeadCodecRegistry;
  private readonly onWarning: ((warning: HeadWarning) => void) | undefined;
  private readonly now: () => number;
  private state: TableState | null = null;
  private inflight: Promise<TableState> | null = null;

  constructor(store: ObjectStore, options: OpenTableOptions & { format: TableFormat }) {
    const interval = options.versionCheckInterval ?? DEFAULT_VERSION_CHECK_INTERVAL_MS;
    if (!Number.isFinite(interval) || interval < 0) throw new RangeError(`versionCheckInterval must be >= 0 ms, got ${interval}`);
    this.store = store;
    this.format = options.format;
    this.interval = interval;
    this.codecs = options.codecs ?? headCodecs;
    this.onWarning = options.onWarning;
    this.now = options.now ?? Date.now;
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
    this.inflight ??= this.check().finally(() => {
      this.inflight = null;
    });
    return this.inflight;
  }

  private async check(): Promise<TableState> {
    const state = this.state;
    const checkedAt = this.now();
    if (!state) return this.load(checkedAt);
    const latest = await this.format.latestVersionFile(this.store);
    if (latest && sameVersionFile(latest, state.snapshot.versionFile)) {
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

function sameVersionFile(a: VersionFile, b: VersionFile): boolean {
  return a.version === b.version && a.key === b.key && a.size === b.size && a.etag === b.etag;
}

export interface LoadTableStateOptions {
  format?: TableFormat;
  codecs?: HeadCodecRegistry;
  checkedAt?: number;
  /** The latest version file, when the caller has just listed it (saves the LIST). */
  latest?: VersionFile;
}

/**
 * One cold load: the head and the latest version in parallel, the manifest only when needed.
 * Without a format the head is read first and names it (the pin or detection when it cannot),
 * which costs a round trip but no request: pass `format` to load in one.
 */
export async function loadTableState(store: ObjectStore, options: LoadTableStateOptions = {}): Promise<TableState> {
  const codecs = options.codecs ?? headCodecs;
  const checkedAt = options.checkedAt ?? Date.now();
  let format = options.format;
  let stored: StoredHead | { state: "failed"; problem: string };
  let latest: VersionFile | null;
  if (format) {
    [stored, latest] = await Promise.all([getHead(store, codecs), options.latest ?? format.latestVersionFile(store)]);
  } else {
    stored = await getHead(store, codecs);
    const named = stored.state === "readable" ? TABLE_FORMATS.find((f) => f.name === (stored as Extract<StoredHead, { state: "readable" }>).content.format) : undefined;
    format = named ?? (await resolveFormat(store));
    latest = options.latest ?? (await format.latestVersionFile(store));
  }
  if (!latest) throw noVersionFilesError(store.uri, format);
  const headUri = store.uriOf(HEAD_KEY);

  if (stored.state === "readable" && headDescribesFile(stored.content, latest, format.name)) {
    const { content } = stored;
    return {
      format,
      version: content.tableVersion,
      source: "head",
      warning: null,
      snapshot: content.snapshot,
      recentVersions: content.recentVersions,
      footers: content.footers,
      codec: stored.probe.header?.codec ?? null,
      checkedAt,
    };
  }

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
    codec: stored.state === "readable" ? (stored.probe.header?.codec ?? null) : null,
    checkedAt,
  };
}

/** The whole head in one GET; a failed GET is reported like an unreadable head, so a manifest read can still answer. */
async function getHead(store: ObjectStore, codecs: HeadCodecRegistry): Promise<StoredHead | { state: "failed"; problem: string }> {
  try {
    const object = await store.get(HEAD_KEY);
    return interpretStoredHead(object, store.uriOf(HEAD_KEY), codecs);
  } catch (error) {
    if (error instanceof NotFoundError) return { state: "missing" };
    if (error instanceof StoreError) return { state: "failed", problem: error.message };
    throw error;
  }
}

function fallbackWarning(
  stored: StoredHead | { state: "failed"; problem: string },
  latest: VersionFile,
  headUri: string,
  formatName: string,
): HeadWarning {
  switch (stored.state) {
    case "missing":
      return { reason: "head-missing", message: `${headUri}: no head object; read the manifest of version ${latest.version} instead` };
    case "failed":
    case "unreadable":
      return { reason: "head-unreadable", message: `${stored.problem}; read the manifest of version ${latest.version} instead` };
    case "readable": {
      const held = stored.content.tableVersion;
      if (stored.content.format !== formatName) {
        return { reason: "head-unreadable", message: `${headUri}: head describes a ${stored.content.format} table, not ${formatName}; read the manifest instead` };
      }
      if (held === latest.version) {
        const file = stored.content.snapshot.versionFile;
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
