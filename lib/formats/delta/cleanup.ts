/**
 * Delta cleanup planning on a store: reads what the pure planners need (listings, the `.crc`
 * protocols checkpointProtection asks for, the sidecars remaining checkpoints name) and plans
 * VACUUM and log cleanup. Deleting is the pipeline's (removal.ts plans through planRemoval).
 */
import { CorruptFileError, TableFormatError } from "../errors.ts";
import type { ObjectInfo, ObjectStore } from "../../store/object-store.ts";
import { NotFoundError } from "../../store/errors.ts";
import { mapConcurrent } from "../../store/map-concurrent.ts";
import { plainValue } from "./actions.ts";
import type { DeltaAction, ProtocolAction } from "./actions.ts";
import { checkpointPartActions, checkpointProblem } from "./checkpoint-reader.ts";
import { listLog } from "./log-listing.ts";
import type { CheckpointFiles, LogListing } from "./log-listing.ts";
import { planLogCleanup } from "./log-cleanup.ts";
import type { LogCleanupInput, LogCleanupPlan } from "./log-cleanup.ts";
import { SIDECARS_PREFIX, sidecarKey } from "./log-names.ts";
import { decodeDeltaPath, resolveDeltaPath } from "./paths.ts";
import { hasWriterFeature } from "./protocol.ts";
import type { DeltaSnapshot } from "./snapshot.ts";
import type { CleanupProperties } from "./table-properties.ts";
import { uniformIcebergEnabled } from "./uniform.ts";
import { planVacuum } from "./vacuum.ts";
import type { VacuumPlan } from "./vacuum.ts";

export interface DeltaCleanupOptions {
  now: Date;
  /** A VACUUM retention other than the table's; shorter than the table's only with `allowShortRetention`. */
  retentionMs?: number;
  allowShortRetention?: boolean;
  /** lakewarden's own protected boundary; combined with the table's checkpointProtection V (the larger wins). */
  protectBefore?: number;
  /** The newest version the kept checkpoint may be at (see LogCleanupInput.newestKept). */
  newestKept?: { version: number; reason: string };
  /** Checkpoint proofs already made in this run (shared with removal.ts's proof of the latest one). */
  checkpointProofs?: CheckpointProofs;
}

/** Proofs of checkpoints (checkpointProblem) by their files and ETags: each is read whole once per run. */
export type CheckpointProofs = Map<string, Promise<string | null>>;

/** checkpointProblem, once per checkpoint (its files as listed) in `proofs`. */
export function proveCheckpoint(store: ObjectStore, checkpoint: CheckpointFiles, proofs: CheckpointProofs): Promise<string | null> {
  const id = checkpoint.files.map((file) => `${file.key}\u0000${file.etag}`).join("\u0000");
  let proof = proofs.get(id);
  if (!proof) {
    proof = checkpointProblem(store, checkpoint);
    proofs.set(id, proof);
  }
  return proof;
}

const CONCURRENCY = 8;

async function listAll(store: ObjectStore, prefix: string): Promise<ObjectInfo[]> {
  const out: ObjectInfo[] = [];
  for await (const info of store.list(prefix)) out.push(info);
  return out;
}

/** The protocol a `.crc` file records, or null when the file is missing or holds none. */
async function crcProtocol(store: ObjectStore, key: string): Promise<ProtocolAction | null> {
  try {
    const { body } = await store.get(key);
    const json = JSON.parse(new TextDecoder().decode(body)) as { protocol?: unknown };
    const protocol = plainValue(json.protocol) as ProtocolAction | undefined;
    return protocol && typeof protocol.minReaderVersion === "number" && typeof protocol.minWriterVersion === "number" ? protocol : null;
  } catch (error) {
    if (error instanceof NotFoundError || error instanceof SyntaxError) return null;
    throw error;
  }
}

/** Sidecar keys a checkpoint names (reads only the checkpoint's own files); null when one of them cannot be read. */
async function sidecarsNamedBy(store: ObjectStore, checkpoint: CheckpointFiles): Promise<string[] | null> {
  const names: string[] = [];
  for (const file of checkpoint.files) {
    let actions: DeltaAction[];
    try {
      actions = await checkpointPartActions(store, file);
    } catch (error) {
      if (error instanceof CorruptFileError || error instanceof NotFoundError) return null;
      throw error;
    }
    for (const action of actions) {
      if (!("sidecar" in action)) continue;
      const decoded = decodeDeltaPath(action.sidecar.path);
      if (decoded.kind !== "relative") throw new TableFormatError(store.uriOf(file.key), `sidecar path "${action.sidecar.path}" is not relative; no cleanup`);
      names.push(sidecarKey(decoded.path));
    }
  }
  return names;
}

/**
 * Why no checkpoint of `version` can be the kept one, or null: every complete checkpoint listed
 * at that version must decode whole (checkpointProblem), as a reader may pick any of them.
 */
async function checkpointVersionProblem(store: ObjectStore, log: LogListing, version: number, proofs: CheckpointProofs): Promise<string | null> {
  for (const checkpoint of log.checkpoints) {
    if (checkpoint.version !== version || !checkpoint.complete) continue;
    const problem = await proveCheckpoint(store, checkpoint, proofs);
    if (problem !== null) return problem;
  }
  return null;
}

/**
 * Log cleanup planned on checkpoints proven readable: the pure planner picks the kept checkpoint,
 * which is then read whole; an unusable one is passed over and the planner asked again, so the
 * boundary moves to the newest checkpoint that decodes whole (or the log is left alone). The
 * snapshot reader falls back past a damaged checkpoint on its own, but deleting the commits below
 * one would leave nothing to fall back to.
 */
export async function planDeltaLogCleanup(
  store: ObjectStore,
  snapshot: DeltaSnapshot,
  properties: CleanupProperties,
  options: DeltaCleanupOptions,
  listing?: LogListing,
  sidecarObjects?: readonly ObjectInfo[],
): Promise<LogCleanupPlan> {
  const log = listing ?? (await listLog(store));
  const protectBefore = Math.max(properties.checkpointProtectionBefore, options.protectBefore ?? 0);
  const v2 = hasWriterFeature(snapshot.protocol, "v2Checkpoint");
  const sidecars = v2 ? (sidecarObjects ?? (await listAll(store, SIDECARS_PREFIX))) : [];
  const checkpointProofs = options.checkpointProofs ?? new Map<string, Promise<string | null>>();
  const proofs = new Map<number, string | null>();
  const unusableCheckpoints = new Map<number, string>();
  const base = {
    ...(options.newestKept ? { newestKept: options.newestKept } : {}),
    listing: log,
    sidecars,
    now: options.now,
    logRetentionMs: properties.logRetentionMs,
    expiredLogCleanup: properties.expiredLogCleanup,
    protectBefore,
    unusableCheckpoints,
  };
  const allSidecars = new Set(sidecars.map((s) => s.key));
  const planProven = async (extra: Pick<LogCleanupInput, "sidecarsInUse" | "protocolAt">): Promise<LogCleanupPlan> => {
    for (;;) {
      const plan = planLogCleanup({ ...base, ...extra });
      const kept = plan.keptCheckpoint;
      if (kept === null || proofs.has(kept)) return plan;
      const problem = await checkpointVersionProblem(store, log, kept, checkpointProofs);
      proofs.set(kept, problem);
      if (problem === null) return plan;
      unusableCheckpoints.set(kept, problem);
    }
  };
  // First pass: which checkpoint is kept, with every sidecar counted as in use.
  let plan = await planProven({ sidecarsInUse: allSidecars });
  let protocols = new Map<number, ProtocolAction | null>();
  const protocolAt = (v: number) => protocols.get(v) ?? null;
  if (protectBefore > 0 && plan.keptCheckpoint === null && plan.cutoffCommit !== null) {
    // A partial cleanup below V was refused for want of protocols: read the .crc files and ask again.
    const versions = [...new Set([...log.commits.keys(), ...log.crcs.keys(), ...log.checkpoints.map((c) => c.version)])].filter((v) => v < plan.cutoffCommit!);
    const read = await mapConcurrent(versions, CONCURRENCY, async (v) => [v, log.crcs.has(v) ? await crcProtocol(store, log.crcs.get(v)!.key) : null] as const);
    protocols = new Map(read);
    plan = await planProven({ sidecarsInUse: allSidecars, protocolAt });
  }
  if (!v2 || plan.keptCheckpoint === null) return plan;
  const deletedKeys = new Set(plan.deletions.map((d) => d.key));
  const remaining = log.checkpoints.filter((c) => c.files.some((f) => !deletedKeys.has(f.key)));
  const named = await mapConcurrent(remaining, CONCURRENCY, (c) => sidecarsNamedBy(store, c));
  // A remaining checkpoint that cannot be read may name any sidecar: then none is deleted.
  if (named.includes(null)) return plan;
  return planLogCleanup({ ...base, sidecarsInUse: new Set(named.flat() as string[]), protocolAt });
}

export function planDeltaVacuum(store: ObjectStore, snapshot: DeltaSnapshot, properties: CleanupProperties, files: Iterable<ObjectInfo>, options: DeltaCleanupOptions): VacuumPlan {
  let retentionMs = properties.deletedFileRetentionMs;
  if (options.retentionMs !== undefined) {
    if (options.retentionMs < 0) throw new TableFormatError(store.uri, "a negative VACUUM retention is never allowed");
    if (options.retentionMs < properties.deletedFileRetentionMs && !options.allowShortRetention) {
      throw new TableFormatError(
        store.uri,
        `a VACUUM retention of ${options.retentionMs} ms is shorter than the table's delta.deletedFileRetentionDuration (${properties.deletedFileRetentionMs} ms); pass the explicit short-retention flag to allow it`,
      );
    }
    retentionMs = options.retentionMs;
  }
  return planVacuum({
    adds: snapshot.adds,
    tombstones: snapshot.tombstones,
    partitionColumns: snapshot.metadata.partitionColumns ?? [],
    hideIcebergMetadata: uniformIcebergEnabled(snapshot.metadata.configuration ?? {}),
    files,
    now: options.now,
    retentionMs,
    resolve: (path) => resolveDeltaPath(path, [store.uri]),
  });
}
