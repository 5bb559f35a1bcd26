/**
 * The versions of one cleanup scan (readForCleanup's `scan`), replayed in order from one listing
 * of the log: each version's state is the previous version's plus its own commit, or, at a
 * version with a complete checkpoint, that checkpoint's actions, exactly where loadSnapshot
 * would start that version's replay. So a version's state, its replay start and the commits
 * replayed after it are those loadSnapshot gives, and a scan of N versions costs N commits and
 * the checkpoints on the way, not a replay per version (which read the checkpoint and every
 * commit after it again for each version). What is held: the live state (a cost per file) and
 * the commits read ahead of it.
 *
 * Anything out of the ordinary (a version asked for out of order or not in the listing, a
 * commit that does not read, a gap, a checkpoint that does not read, a state without protocol
 * or metadata, a protocol lakewarden cannot read) is not decided here: that version, and every
 * later one once the state cannot be trusted, are read by loadSnapshot alone, as before, which
 * falls back, throws or drops the version as it always has.
 */
import type { ObjectStore } from "../../store/object-store.ts";
import type { VersionFile } from "../table-format.ts";
import type { DeltaAction } from "./actions.ts";
import { readCheckpoint } from "./checkpoint-reader.ts";
import type { CheckpointRead } from "./checkpoint-reader.ts";
import type { CheckpointFiles, LogListing } from "./log-listing.ts";
import { listLog } from "./log-listing.ts";
import { assertReadable } from "./protocol.ts";
import type { DeltaSnapshot } from "./snapshot.ts";
import { ReplayState, commitInfoOf, readCommitActions } from "./snapshot.ts";

/** A version's state as the scan needs it: a DeltaSnapshot without tombstones, txns and domains. */
export type ScannedState = Omit<DeltaSnapshot, "tombstones" | "txns" | "domains" | "lastCheckpoint"> & { ownActions: readonly DeltaAction[] };

/** Not served here: the caller reads the version by loadSnapshot. */
const NOT_SERVED = null;

class ScanReplay {
  private listing: Promise<LogListing> | null = null;
  private state = new ReplayState();
  /** The version the state is at (-1: nothing replayed yet). */
  private at = -1;
  private checkpoint: CheckpointRead | null = null;
  private replayed: number[] = [];
  /** Set once the state cannot be trusted: every later version is loadSnapshot's. */
  private broken = false;
  private turn: Promise<unknown> = Promise.resolve();

  private readonly store: ObjectStore;

  constructor(store: ObjectStore) {
    this.store = store;
  }

  /** The state at `file`'s version, or null when loadSnapshot must read it. */
  stateAt(file: VersionFile): Promise<ScannedState | null> {
    const listing = (this.listing ??= listLog(this.store));
    // Started at once, beside the other versions' reads; applied in version order below.
    const own = listing.then((log) => {
      const info = log.commits.get(file.version);
      return info && info.key === file.key ? readCommitActions(this.store, file.version, info) : null;
    });
    own.catch(() => {});
    const step = this.turn.then(() => this.advance(file, listing, own));
    this.turn = step.catch(() => {});
    return step;
  }

  private async advance(file: VersionFile, listing: Promise<LogListing>, own: Promise<readonly DeltaAction[] | null>): Promise<ScannedState | null> {
    if (this.broken || file.version <= this.at) return NOT_SERVED;
    try {
      const log = await listing;
      const ownActions = await own;
      if (ownActions === null) return NOT_SERVED;
      if (!(await this.replayTo(log, file.version, ownActions))) {
        this.broken = true;
        return NOT_SERVED;
      }
      return this.view(log, file.version, ownActions);
    } catch {
      // Whatever failed here fails again, with its own error, where loadSnapshot reads the version.
      this.broken = true;
      return NOT_SERVED;
    }
  }

  /** Moves the state to `target`; false when the log does not let it (loadSnapshot decides then). */
  private async replayTo(log: LogListing, target: number, ownActions: readonly DeltaAction[]): Promise<boolean> {
    if (this.at === -1 && !(await this.start(log, target))) return false;
    for (let version = this.at + 1; version <= target; version++) {
      const checkpoints = log.checkpoints.filter((c) => c.complete && c.version === version);
      if (checkpoints.length > 0) {
        if (!(await this.restartAt(checkpoints))) return false;
        continue;
      }
      const info = log.commits.get(version);
      if (!info) return false;
      const actions = version === target ? ownActions : await readCommitActions(this.store, version, info);
      for (const action of actions) this.state.apply(action);
      this.replayed.push(version);
      this.at = version;
    }
    return true;
  }

  /** The first version's replay start: the newest complete checkpoint at or below it, else commit 0. */
  private async start(log: LogListing, target: number): Promise<boolean> {
    let newest = -1;
    for (const checkpoint of log.checkpoints) if (checkpoint.complete && checkpoint.version <= target && checkpoint.version > newest) newest = checkpoint.version;
    if (newest === -1) return log.commits.has(0);
    return this.restartAt(log.checkpoints.filter((c) => c.complete && c.version === newest));
  }

  /** The state from the checkpoint loadSnapshot would read first at its version (listing order: UUID, classic, multi-part). */
  private async restartAt(checkpoints: CheckpointFiles[]): Promise<boolean> {
    // One that does not read sends loadSnapshot to the next: its fallback, not repeated here.
    const read = await readCheckpoint(this.store, checkpoints[0]!);
    this.state = new ReplayState();
    for (const action of read.actions) this.state.apply(action);
    this.checkpoint = read;
    this.replayed = [];
    this.at = read.version;
    return true;
  }

  private view(log: LogListing, version: number, ownActions: readonly DeltaAction[]): ScannedState | null {
    const { protocol, metadata } = this.state;
    if (!protocol || !metadata) return NOT_SERVED;
    try {
      assertReadable(protocol, this.store.uri);
    } catch {
      return NOT_SERVED;
    }
    const commitFile = log.commits.get(version)!;
    return {
      version,
      protocol,
      metadata,
      adds: [...this.state.files.values()],
      checkpoint: this.checkpoint,
      replayedCommits: [...this.replayed],
      commitInfo: commitInfoOf(ownActions),
      commitFile,
      listing: log,
      ownActions,
    };
  }
}

const replays = new WeakMap<object, ScanReplay>();

/**
 * Version `file`'s state, replayed after the versions this scan read before it; null when the
 * version must be read by loadSnapshot (see the module comment). One replay per `scan` object,
 * let go with it.
 */
export function scannedState(store: ObjectStore, file: VersionFile, scan: object): Promise<ScannedState | null> {
  let replay = replays.get(scan);
  if (!replay) {
    replay = new ScanReplay(store);
    replays.set(scan, replay);
  }
  return replay.stateAt(file);
}
