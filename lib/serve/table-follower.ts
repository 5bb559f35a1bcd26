/**
 * Keeps one table's head following its commits: notices of new versions come in (from file
 * events, polling, anything), at most one head write runs at a time, and a burst of notices
 * collapses into one write for the newest version. The head writer's own rules keep racing
 * writers elsewhere (a Lambda, another `serve`) harmless. Looking for a new version is the
 * loader's lookup (TableFormat.startLatestLookup) from the version file last found: one LIST on
 * every format while nothing changes (Iceberg: no metadata file read).
 */
import type { TableFormat, VersionFile } from "../formats/table-format.ts";
import type { ObjectStore } from "../store/object-store.ts";
import type { WriteTableHeadOptions } from "../head/write-table-head.ts";
import { writeHeadForCommit, type HeadForCommitResult } from "../follow/write-head-for-commit.ts";

export interface FollowerCallbacks {
  written(result: HeadForCommitResult, durationMs: number): void;
  failed(version: number, error: unknown): void;
}

export class TableFollower {
  readonly table: string;
  private readonly store: ObjectStore;
  private readonly headOptions: Omit<WriteTableHeadOptions, "version">;
  private readonly callbacks: FollowerCallbacks;
  /** The newest version any notice named; nothing older is ever written. */
  private newestNotified = -1;
  /** The newest version a write has handled (written, found current, or failed). */
  private newestHandled = -1;
  private running: Promise<void> | null = null;
  /** The latest version file the last lookup found: where the next one starts. */
  private lastFound: VersionFile | undefined;

  constructor(table: string, store: ObjectStore, headOptions: Omit<WriteTableHeadOptions, "version">, callbacks: FollowerCallbacks) {
    this.table = table;
    this.store = store;
    this.headOptions = headOptions;
    this.callbacks = callbacks;
  }

  /** The newest version this follower has heard of. */
  get knownVersion(): number {
    return this.newestNotified;
  }

  /** A version was committed; returns false when it is not news. */
  notify(version: number): boolean {
    if (version <= this.newestNotified) return false;
    this.newestNotified = version;
    if (!this.running) this.running = this.drain().finally(() => (this.running = null));
    return true;
  }

  /** Looks for the table's latest version and notifies it; rejects as the format's lookup does. */
  async lookForNews(format: TableFormat): Promise<void> {
    const known = this.lastFound;
    const lookup = format.startLatestLookup(this.store, known);
    try {
      const latest = await (known ? lookup.latestFrom(known) : lookup.latest());
      if (!latest) return;
      this.lastFound = latest;
      this.notify(latest.version);
    } finally {
      await lookup.settled();
    }
  }

  /** Resolves when no write is running or pending. */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private async drain(): Promise<void> {
    while (this.newestHandled < this.newestNotified) {
      const version = this.newestNotified;
      const started = performance.now();
      try {
        const result = await writeHeadForCommit(this.store, version, this.headOptions);
        this.callbacks.written(result, performance.now() - started);
      } catch (error) {
        this.callbacks.failed(version, error);
      }
      this.newestHandled = version;
    }
  }
}
