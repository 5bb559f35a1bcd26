/**
 * The state of a Delta table at version N (PROTOCOL.md "Action Reconciliation"): the newest
 * complete checkpoint at or below N, then every commit after it up to N, in order.
 *   - protocol and metaData: the last one wins;
 *   - files are identified by (decoded path, deletion-vector unique id): an add makes a file live
 *     and clears its tombstone, a remove makes it a tombstone;
 *   - txn: the latest per appId; domainMetadata: the latest per domain, dropped when `removed`.
 * `_last_checkpoint` is a hint: when it is absent, corrupt, or names a checkpoint that cannot be
 * used, the whole log is listed instead. The protocol is checked before the state is returned.
 */
import { CorruptFileError, NotATableError } from "../errors.ts";
import { NotFoundError } from "../../store/errors.ts";
import type { ObjectInfo, ObjectStore } from "../../store/object-store.ts";
import { mapConcurrent } from "../../store/map-concurrent.ts";
import { parseCommit } from "./actions.ts";
import type { AddAction, CommitInfoAction, DeltaAction, DomainMetadataAction, MetadataAction, ProtocolAction, RemoveAction, TxnAction } from "./actions.ts";
import { CheckpointReadError, readCheckpoint } from "./checkpoint-reader.ts";
import type { CheckpointRead } from "./checkpoint-reader.ts";
import { deletionVectorUniqueId } from "./deletion-vectors.ts";
import { readLastCheckpoint } from "./last-checkpoint.ts";
import { cachedActions } from "./log-cache.ts";
import type { LastCheckpointRead } from "./last-checkpoint.ts";
import { completeCheckpointsAtOrBelow, latestCommitVersion, listLog } from "./log-listing.ts";
import type { LogListing } from "./log-listing.ts";
import { LOG_PREFIX, commitKey } from "./log-names.ts";
import { pathIdentity } from "./paths.ts";
import { assertReadable } from "./protocol.ts";

export interface DeltaSnapshot {
  version: number;
  protocol: ProtocolAction;
  metadata: MetadataAction;
  /** Live files, in the order the log made them live. */
  adds: AddAction[];
  /** Tombstones still in the state (a checkpoint keeps only unexpired ones). */
  tombstones: RemoveAction[];
  txns: TxnAction[];
  domains: DomainMetadataAction[];
  /** The checkpoint the replay started from, or null (replayed from version 0). */
  checkpoint: CheckpointRead | null;
  /** Versions of the commits replayed after the checkpoint, ascending. */
  replayedCommits: number[];
  /** commitInfo of version N itself, when its commit has one. */
  commitInfo: CommitInfoAction | null;
  /** Version N's commit file. */
  commitFile: ObjectInfo;
  /** The listing the snapshot was built from (covers at least the checkpoint onwards). */
  listing: LogListing;
  lastCheckpoint: LastCheckpointRead;
}

const CONCURRENCY = 8;

/** Commit `version`'s actions; with the listing's `info`, parsed once per (file, ETag) across calls. */
export async function readCommitActions(store: ObjectStore, version: number, info?: ObjectInfo): Promise<DeltaAction[]> {
  const key = commitKey(version);
  const uri = store.uriOf(key);
  return cachedActions(uri, info?.etag, async () => parseCommit((await store.get(key)).body, uri));
}

export function commitInfoOf(actions: readonly DeltaAction[]): CommitInfoAction | null {
  for (const action of actions) if ("commitInfo" in action) return action.commitInfo;
  return null;
}

/** Loads the snapshot at `version` (default: the latest commit). */
export async function loadSnapshot(store: ObjectStore, version?: number): Promise<DeltaSnapshot> {
  const lastCheckpoint = await readLastCheckpoint(store);
  const hinted = lastCheckpoint.kind === "valid" && (version === undefined || lastCheckpoint.hint.version <= version) ? lastCheckpoint.hint.version : null;
  if (hinted !== null) {
    const listing = await listLog(store, hinted);
    const usable = listing.checkpoints.some((c) => c.complete && c.version === hinted);
    const target = version ?? latestCommitVersion(listing);
    if (usable && target !== null) {
      try {
        return await replay(store, listing, target, lastCheckpoint, false);
      } catch (error) {
        if (!(error instanceof CheckpointReadError)) throw error;
        // The hinted checkpoint is unreadable: fall back to the full listing below.
      }
    }
  }
  const listing = await listLog(store);
  const target = version ?? latestCommitVersion(listing);
  if (target === null) throw new NotATableError(store.uri, `not a Delta table: no commit files under ${LOG_PREFIX}`);
  return replay(store, listing, target, lastCheckpoint, true);
}

/**
 * The snapshot at `file`'s version, loaded once for the steps of a run that ask for the same
 * latest version (cleanup's admit and removal plan: each loaded it whole, its checkpoint and
 * every commit after it). Kept per store, the newest one only, for its commit file as listed
 * (key and ETag) and at most SHARED_TTL_MS: a version's state never changes, and a store lives
 * for a run, but a long-lived one re-reads the log now and then.
 */
export function sharedSnapshot(store: ObjectStore, file: { version: number; key: string; etag: string }): Promise<DeltaSnapshot> {
  const held = shared.get(store);
  const now = Date.now();
  if (held && held.version === file.version && held.key === file.key && held.etag === file.etag && file.etag !== "" && now - held.at < SHARED_TTL_MS) return held.snapshot;
  const snapshot = loadSnapshot(store, file.version);
  const entry = { version: file.version, key: file.key, etag: file.etag, at: now, snapshot };
  shared.set(store, entry);
  snapshot.catch(() => {
    if (shared.get(store) === entry) shared.delete(store);
  });
  return snapshot;
}

const SHARED_TTL_MS = 60_000;
const shared = new WeakMap<ObjectStore, { version: number; key: string; etag: string; at: number; snapshot: Promise<DeltaSnapshot> }>();

async function replay(store: ObjectStore, listing: LogListing, target: number, lastCheckpoint: LastCheckpointRead, fullListing: boolean): Promise<DeltaSnapshot> {
  const commitFile = listing.commits.get(target);
  if (!commitFile) throw new NotFoundError(`version ${target} has no commit file`, { uri: store.uriOf(commitKey(target)) });

  let checkpoint: CheckpointRead | null = null;
  let firstError: unknown = null;
  const candidates = completeCheckpointsAtOrBelow(listing, target);
  prefetchCommits(store, listing, candidates[0] ? candidates[0].version + 1 : 0, target);
  for (const candidate of candidates) {
    try {
      checkpoint = await readCheckpoint(store, candidate);
      break;
    } catch (error) {
      if (!(error instanceof CheckpointReadError)) throw error;
      firstError ??= error;
      if (!fullListing) throw error;
    }
  }
  const start = checkpoint ? checkpoint.version + 1 : 0;
  if (!checkpoint) {
    if (firstError && !listing.commits.has(0)) throw firstError;
    if (!listing.commits.has(0)) {
      const earliest = Math.min(...listing.commits.keys());
      throw new CorruptFileError(
        store.uriOf(LOG_PREFIX),
        `no complete checkpoint at or below version ${target} and no commit 0: the log starts at version ${earliest}, so version ${target} cannot be rebuilt`,
      );
    }
  }
  const versions: number[] = [];
  for (let v = start; v <= target; v++) {
    if (!listing.commits.has(v)) {
      throw new CorruptFileError(store.uriOf(commitKey(v)), `commit ${v} is missing: the log has a gap between ${start} and ${target}`);
    }
    versions.push(v);
  }
  const commits = await mapConcurrent(versions, CONCURRENCY, (v) => readCommitActions(store, v, listing.commits.get(v)));

  const state = new ReplayState();
  if (checkpoint) for (const action of checkpoint.actions) state.apply(action);
  for (const actions of commits) for (const action of actions) state.apply(action);

  const uri = store.uriOf(commitFile.key);
  if (!state.protocol) throw new CorruptFileError(uri, `no protocol action in the log up to version ${target}`);
  if (!state.metadata) throw new CorruptFileError(uri, `no metaData action in the log up to version ${target}`);
  assertReadable(state.protocol, store.uri);

  let commitInfo: CommitInfoAction | null;
  if (versions.length > 0) commitInfo = commitInfoOf(commits[commits.length - 1]!);
  else commitInfo = commitInfoOf(await readCommitActions(store, target, commitFile));

  return {
    version: target,
    protocol: state.protocol,
    metadata: state.metadata,
    adds: [...state.files.values()],
    tombstones: [...state.tombstones.values()],
    txns: [...state.txns.values()],
    domains: [...state.domains.values()],
    checkpoint,
    replayedCommits: versions,
    commitInfo,
    commitFile,
    listing,
    lastCheckpoint,
  };
}

/**
 * Starts reading the first commits after the checkpoint the replay will most likely start from,
 * beside the checkpoint's own read rather than after it (one round trip fewer on S3). Through the
 * parse cache, so the replay's reads below take them; a failure here is the replay's to meet and
 * report when it reads the commit itself.
 */
function prefetchCommits(store: ObjectStore, listing: LogListing, from: number, target: number): void {
  for (let version = from; version <= target && version < from + CONCURRENCY; version++) {
    const info = listing.commits.get(version);
    if (info?.etag) readCommitActions(store, version, info).catch(() => {});
  }
}

/** Reconciles actions in log order (checkpoint first, then commits ascending). */
export class ReplayState {
  protocol: ProtocolAction | null = null;
  metadata: MetadataAction | null = null;
  readonly files = new Map<string, AddAction>();
  readonly tombstones = new Map<string, RemoveAction>();
  readonly txns = new Map<string, TxnAction>();
  readonly domains = new Map<string, DomainMetadataAction>();

  apply(action: DeltaAction): void {
    if ("add" in action) {
      const id = fileId(action.add.path, action.add.deletionVector);
      // An add with a new DV replaces the same path's entry with the old DV only via an explicit remove.
      this.files.set(id, action.add);
      this.tombstones.delete(id);
    } else if ("remove" in action) {
      const id = fileId(action.remove.path, action.remove.deletionVector);
      this.files.delete(id);
      this.tombstones.set(id, action.remove);
    } else if ("protocol" in action) {
      this.protocol = action.protocol;
    } else if ("metaData" in action) {
      this.metadata = action.metaData;
    } else if ("txn" in action) {
      this.txns.set(action.txn.appId, action.txn);
    } else if ("domainMetadata" in action) {
      if (action.domainMetadata.removed) this.domains.delete(action.domainMetadata.domain);
      else this.domains.set(action.domainMetadata.domain, action.domainMetadata);
    }
  }
}

export function fileId(path: string, dv: AddAction["deletionVector"]): string {
  return `${pathIdentity(path)}\u0000${deletionVectorUniqueId(dv)}`;
}
