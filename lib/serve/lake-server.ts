/**
 * `lakewarden serve`: the Lambda handlers' work, on one machine, for every table under a
 * location. Commits are noticed by file watching on disk (plus a slow poll as a safety net,
 * since file events can be missed) or by polling on S3; each notice goes through the same
 * steps as the on-commit Lambda (parse the key, group by table, write the head for the
 * newest version). Cleanup runs on a timer through the same pipeline as cleanup-table,
 * under the table's lease. Everything it does is reported as an event.
 */
import { BranchLocationError, CatalogPointerRequiredError } from "../formats/errors.ts";
import { watch, type FSWatcher } from "node:fs";
import { hostname } from "node:os";
import { sep } from "node:path";
import { fileURLToPath } from "node:url";
import { resolveFormat, TABLE_FORMATS } from "../formats/index.ts";
import type { TableFormat } from "../formats/table-format.ts";
import type { WriteTableHeadOptions } from "../head/write-table-head.ts";
import { LeaseHeldError } from "../maintenance/errors.ts";
import type { CleanupSettings } from "../maintenance/policy.ts";
import { filesRemovedCount } from "../maintenance/cleanup-report.ts";
import { runCleanup } from "../maintenance/run-cleanup.ts";
import { errorSummary } from "../store/errors.ts";
import { openStore } from "../store/open-store.ts";
import type { ObjectStore } from "../store/object-store.ts";
import { parseCommitKey } from "../follow/commits.ts";
import { discoverTables, isHiddenFolder } from "../follow/discover-tables.ts";
import { TableFollower } from "./table-follower.ts";

export type ServeEvent =
  | { type: "started"; location: string; tables: string[]; watching: "files" | "polling"; pollIntervalMs: number; cleanupEveryMs: number | null }
  | { type: "table-found"; table: string }
  /**
   * A folder that looked like a table but is a branch of one (its root's head and cleanup cover
   * it), or a table only its catalog can read (serve is given no catalog): never looked at again.
   */
  | { type: "table-ignored"; table: string; reason: string }
  /** action: created | replaced | skipped-same-version | skipped-newer-present (see lib/head). */
  | { type: "head"; table: string; version: number; action: string; bytes: number; durationMs: number; notifiedVersionGone: boolean }
  | { type: "head-failed"; table: string; version: number; error: string }
  | {
      type: "cleanup";
      table: string;
      status: string;
      latestVersion: number | null;
      versionsRemoved: number[];
      filesRemoved: number;
      bytesRemoved: number;
      durationMs: number;
      warnings: string[];
    }
  | { type: "cleanup-skipped"; table: string; reason: string }
  | { type: "cleanup-failed"; table: string; error: string }
  | { type: "error"; message: string }
  | { type: "stopped" };

export interface ServeOptions {
  /** A local directory or `s3://bucket/prefix`: every table under it is served. */
  location: string;
  /** The store for `location` (default: openStore(location)). */
  store?: ObjectStore;
  format?: TableFormat;
  /** How often to look for new versions: the only mechanism on S3, a safety net on disk. Default 1 s on S3, 5 s on disk. */
  pollIntervalMs?: number;
  /** How often to look for new tables (file watching finds them at once on disk). Default 30 s. */
  rediscoverEveryMs?: number;
  /** Cleanup of every table at this interval (first run one interval after start); null: never. Default 1 h. */
  cleanupEveryMs?: number | null;
  cleanupSettings?: CleanupSettings;
  headOptions?: Pick<WriteTableHeadOptions, "codec" | "inlineBudgetBytes">;
  discoveryDepth?: number;
  onEvent(event: ServeEvent): void;
}

export class LakeServer {
  readonly location: string;
  private readonly store: ObjectStore;
  /** The formats served: the caller's one, else every registered format. */
  private readonly formats: readonly TableFormat[];
  private readonly options: ServeOptions;
  private readonly followers = new Map<string, TableFollower>();
  private readonly tableFormats = new Map<string, Promise<TableFormat>>();
  /** Folders seen and set aside (branch folders, Lance `tree/{branch}/`; catalog-owned tables): never followed or cleaned. */
  private readonly setAside = new Set<string>();
  /** Tables whose cleanup the format refuses until a catalog is named (said once): still followed. */
  private readonly cleanupRefused = new Set<string>();
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly abort = new AbortController();
  private watcher: FSWatcher | null = null;
  private cleaning: Promise<void> | null = null;
  private polling: Promise<void> | null = null;
  private stopped = false;

  private constructor(options: ServeOptions) {
    this.options = options;
    this.location = options.location;
    this.store = options.store ?? openStore(options.location);
    this.formats = options.format ? [options.format] : TABLE_FORMATS;
  }

  static async start(options: ServeOptions): Promise<LakeServer> {
    const server = new LakeServer(options);
    await server.begin();
    return server;
  }

  /** Tables being served, as roots relative to the location ("" = the location itself). */
  get tables(): string[] {
    return [...this.followers.keys()].sort();
  }

  private get isLocal(): boolean {
    return this.store.uri.startsWith("file:");
  }

  private async begin(): Promise<void> {
    const local = this.isLocal;
    const pollIntervalMs = this.options.pollIntervalMs ?? (local ? 5000 : 1000);
    const cleanupEveryMs = this.options.cleanupEveryMs === undefined ? 3_600_000 : this.options.cleanupEveryMs;
    if (local) this.watchFiles();
    await this.discover(false);
    this.emit({ type: "started", location: this.store.uri, tables: this.tables, watching: local ? "files" : "polling", pollIntervalMs, cleanupEveryMs });
    // Heads for what was committed before we started.
    await this.poll();
    this.every(pollIntervalMs, () => this.poll());
    this.every(this.options.rediscoverEveryMs ?? 30_000, () => this.discover(true));
    if (cleanupEveryMs !== null) this.every(cleanupEveryMs, () => this.cleanAll());
  }

  /** Stops watching and timers, aborts a running cleanup between steps, waits for work in flight. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const timer of this.timers) clearInterval(timer);
    this.watcher?.close();
    this.abort.abort();
    await Promise.allSettled([this.cleaning, this.polling, ...[...this.followers.values()].map((f) => f.idle())]);
    this.emit({ type: "stopped" });
  }

  /** Resolves when no head write is running or pending (for callers that commit and then look). */
  async idle(): Promise<void> {
    await Promise.all([...this.followers.values()].map((follower) => follower.idle()));
  }

  /** Runs one cleanup pass over every table now (the timer calls this too). */
  async cleanAll(): Promise<void> {
    if (this.cleaning) return this.cleaning; // one pass at a time
    this.cleaning = (async () => {
      for (const table of this.tables) {
        if (this.abort.signal.aborted) return;
        if (this.cleanupRefused.has(table)) continue;
        await this.cleanTable(table);
      }
    })().finally(() => (this.cleaning = null));
    return this.cleaning;
  }

  private async cleanTable(table: string): Promise<void> {
    const uri = this.tableStore(table).uri;
    try {
      const report = await runCleanup(this.tableStore(table), {
        settings: this.options.cleanupSettings ?? {},
        signal: this.abort.signal,
        lease: { owner: `serve:${hostname()}:${process.pid}` },
      });
      this.emit({
        type: "cleanup",
        table: uri,
        status: report.status,
        latestVersion: report.latest_version_at_start,
        versionsRemoved: report.versions_removed,
        filesRemoved: filesRemovedCount(report),
        bytesRemoved: report.bytes_removed,
        durationMs: report.duration_ms,
        warnings: report.warnings,
      });
    } catch (error) {
      if (error instanceof BranchLocationError) this.setTableAside(table, error);
      else if (error instanceof LeaseHeldError) this.emit({ type: "cleanup-skipped", table: uri, reason: error.message });
      else if (error instanceof CatalogPointerRequiredError) {
        // A table its format reads but cleans only through its catalog (a version hint beside catalog-named files).
        this.cleanupRefused.add(table);
        this.emit({ type: "cleanup-skipped", table: uri, reason: error.message });
      } else this.emit({ type: "cleanup-failed", table: uri, error: errorSummary(error) });
    }
  }

  /** The follower looks for the table's latest version; a table only its catalog can read is set aside. */
  private async lookForNews(table: string, follower: TableFollower): Promise<void> {
    try {
      await follower.lookForNews(await this.formatOf(table));
    } catch (error) {
      if (error instanceof CatalogPointerRequiredError) this.setTableAside(table, error);
      else this.emit({ type: "error", message: `${this.tableStore(table).uri}: looking for new versions failed: ${errorSummary(error)}` });
    }
  }

  /** A table's format, resolved once (the caller's, else pinned or detected). */
  private formatOf(table: string): Promise<TableFormat> {
    let format = this.tableFormats.get(table);
    if (!format) {
      const only = this.formats.length === 1 ? this.formats[0] : undefined;
      format = only ? Promise.resolve(only) : resolveFormat(this.tableStore(table));
      format.catch(() => this.tableFormats.delete(table));
      this.tableFormats.set(table, format);
    }
    return format;
  }

  private tableStore(table: string): ObjectStore {
    return table === "" ? this.store : this.store.scope(table);
  }

  private follower(table: string): TableFollower {
    let follower = this.followers.get(table);
    if (!follower) {
      const uri = this.tableStore(table).uri;
      follower = new TableFollower(uri, this.tableStore(table), this.options.headOptions ?? {}, {
        written: (result, durationMs) =>
          this.emit({
            type: "head",
            table: uri,
            version: result.version,
            action: result.action,
            bytes: result.bytes,
            durationMs: Math.round(durationMs),
            notifiedVersionGone: result.notifiedVersionGone,
          }),
        failed: (version, error) => {
          if (error instanceof BranchLocationError || error instanceof CatalogPointerRequiredError) this.setTableAside(table, error);
          else this.emit({ type: "head-failed", table: uri, version, error: errorSummary(error) });
        },
      });
      this.followers.set(table, follower);
    }
    return follower;
  }

  /** The table's follower, created (and announced) on first sight; null for a folder set aside. */
  private addTable(table: string, announce: boolean): TableFollower | null {
    if (this.setAside.has(table)) return null;
    const known = this.followers.has(table);
    const follower = this.follower(table);
    if (!known && announce) this.emit({ type: "table-found", table: this.tableStore(table).uri });
    return follower;
  }

  /** Stops following a folder for good, in one line: a branch's (served through its table's root), or a table only its catalog can read. */
  private setTableAside(table: string, error: BranchLocationError | CatalogPointerRequiredError): void {
    if (this.setAside.has(table)) return;
    this.setAside.add(table);
    this.followers.delete(table);
    this.emit({ type: "table-ignored", table: this.tableStore(table).uri, reason: error.message });
  }

  private async discover(announce: boolean): Promise<void> {
    try {
      const tables = await discoverTables(this.store, this.formats, { maxDepth: this.options.discoveryDepth ?? 4 });
      for (const table of tables) this.addTable(table, announce);
    } catch (error) {
      this.emit({ type: "error", message: `table discovery under ${this.store.uri} failed: ${errorSummary(error)}` });
    }
  }

  /** One look at every table's latest version; overlapping polls are skipped. */
  private poll(): Promise<void> {
    if (this.polling) return this.polling;
    this.polling = (async () => {
      for (const [table, follower] of this.followers) {
        if (this.stopped) return;
        await this.lookForNews(table, follower);
      }
    })().finally(() => (this.polling = null));
    return this.polling;
  }

  private watchFiles(): void {
    const root = fileURLToPath(this.store.uri);
    try {
      this.watcher = watch(root, { recursive: true }, (_event, filename) => {
        if (filename === null || this.stopped) return;
        const key = sep === "/" ? filename : filename.split(sep).join("/");
        const commit = parseCommitKey(key, this.formats);
        if (commit === null || commit.tableRoot.split("/").some((segment) => segment !== "" && isHiddenFolder(segment))) return;
        const follower = this.addTable(commit.tableRoot, true);
        if (follower && commit.version !== null) follower.notify(commit.version);
        else if (follower) void this.lookForNews(commit.tableRoot, follower);
      });
      this.watcher.on("error", (error) => this.emit({ type: "error", message: `watching ${root} failed: ${errorSummary(error)}; polling continues` }));
    } catch (error) {
      this.emit({ type: "error", message: `cannot watch ${root} (${errorSummary(error)}); polling only` });
    }
  }

  private every(ms: number, task: () => Promise<void>): void {
    const timer = setInterval(() => {
      if (!this.stopped) void task();
    }, ms);
    this.timers.push(timer);
  }

  private emit(event: ServeEvent): void {
    this.options.onEvent(event);
  }
}
