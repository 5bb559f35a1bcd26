/**
 * Delta's removal plan for the cleanup pipeline (TableFormat.planRemoval): exactly what VACUUM,
 * log cleanup and checkpointProtection allow (the planners in cleanup.ts, vacuum.ts and
 * log-cleanup.ts), decided on the pipeline's own listing of the table root.
 *
 * lakewarden's policy can only lengthen what the table's properties say, never shorten it: the
 * log retention is the longer of `delta.logRetentionDuration` and older-than, the VACUUM
 * retention the longer of `delta.deletedFileRetentionDuration` and the safety window (a
 * deployment's defaults, such as the Lambda's 7 days, must not undercut a table's own 30), and
 * protect-before joins checkpointProtection's V (the larger wins). A shorter retention is set the
 * Delta way, on the table's properties. What lakewarden keeps on top of Delta's rules, never less:
 *   - the kept checkpoint is at or below the latest version when the run started, the oldest of
 *     the newest `retainVersions` versions and every pinned version, so those stay readable;
 *   - files those versions (and every version committed since the run started) name are never
 *     VACUUM candidates, even where a writer's tombstone times would let VACUUM take them, and
 *     that includes the change data each one's own commit wrote (a change-feed read needs it);
 *   - the kept checkpoint decodes whole, or log cleanup keeps an older one (cleanup.ts), and the
 *     checkpoint the latest version replays from decodes whole, or nothing is deleted: VACUUM's
 *     protected set comes from it; so do the latest version's deletion vectors.
 */
import { NotFoundError } from "../../store/errors.ts";
import { mapConcurrent } from "../../store/map-concurrent.ts";
import { objectExists } from "../../store/object-exists.ts";
import type { ObjectInfo, ObjectStore } from "../../store/object-store.ts";
import { TableFormatError } from "../errors.ts";
import type { FileReference, FileRole, RemovalFile, RemovalInput, RemovalPlan, RemovalProtection } from "../table-format.ts";
import { planDeltaLogCleanup, planDeltaVacuum, proveCheckpoint } from "./cleanup.ts";
import type { CheckpointProofs } from "./cleanup.ts";
import { deletionVectorProblem } from "./file-proof.ts";
import type { LogCleanupPlan, LogDeletion } from "./log-cleanup.ts";
import { sortLog } from "./log-listing.ts";
import type { LogListing } from "./log-listing.ts";
import { SIDECARS_PREFIX } from "./log-names.ts";
import { assertCleanable } from "./protocol.ts";
import { loadSnapshot, sharedSnapshot } from "./snapshot.ts";
import type { DeltaSnapshot } from "./snapshot.ts";
import { cleanupProperties, DELETED_FILE_RETENTION, LOG_RETENTION } from "./table-properties.ts";

/** Roles of the log files a kept version replays from. */
const LOG_ROLES: ReadonlySet<FileRole> = new Set(["commit", "checkpoint", "statistics", "sidecar"]);
/**
 * Roles of the data a readable version needs: its live files, their deletion vectors, and the
 * change data its own commit wrote (a change-feed read of the version reads it).
 */
const DATA_ROLES: ReadonlySet<FileRole> = new Set(["data", "delete", "change-data"]);
/** Of those, what a snapshot read needs: change data a Delta VACUUM already took leaves the version readable. */
const SNAPSHOT_ROLES: ReadonlySet<FileRole> = new Set(["data", "delete"]);

const ROLE_OF: Record<LogDeletion["kind"], FileRole> = { commit: "commit", crc: "statistics", checkpoint: "checkpoint", compaction: "commit", sidecar: "sidecar" };

export async function planDeltaRemoval(store: ObjectStore, input: RemovalInput): Promise<RemovalPlan> {
  // With no rebuildable version read, loading the latest one says why, naming the object.
  const newestFile = input.versions.at(-1)?.file;
  const newest = newestFile?.version ?? input.latestAtStart;
  // admit loaded the latest version's snapshot for the same commit file: it is not loaded again.
  const snapshot = await (newestFile ? sharedSnapshot(store, newestFile) : loadSnapshot(store, newest));
  assertCleanable(snapshot.protocol, store.uri);
  const properties = cleanupProperties(snapshot.protocol, snapshot.metadata, store.uri);
  const options = { now: input.now, protectBefore: input.policy.protectBefore ?? 0 };
  const cap = newestKept(input);

  const logListing = sortLog(input.listing);
  const checkpointProofs: CheckpointProofs = new Map();
  await assertLatestCheckpointWhole(store, snapshot, logListing, checkpointProofs);
  const log = await planDeltaLogCleanup(
    store,
    snapshot,
    { ...properties, logRetentionMs: Math.max(properties.logRetentionMs, input.policy.olderThanMs) },
    { ...options, checkpointProofs, ...(cap ? { newestKept: cap } : {}) },
    logListing,
    sidecarsListed(input.listing),
  );
  const vacuum = planDeltaVacuum(store, snapshot, properties, input.listing, { ...options, retentionMs: Math.max(properties.deletedFileRetentionMs, input.policy.safetyWindowMs) });
  if (vacuum.blocked) throw new TableFormatError(store.uri, `VACUUM stopped before any delete: ${vacuum.blocked}`);

  const readable = mustStayReadable(input);
  const needed = new Set<string>();
  for (const version of input.versions) {
    if (!readable.has(version.file.version)) continue;
    for (const reference of version.references) if (DATA_ROLES.has(reference.role)) needed.add(reference.path);
  }

  // The listed keys among the paths versions name (what the checks below ask of the listing), not every listed key.
  const listed = listedAmong(input.listing, input.versions);
  await assertCurrentFilesExist(store, input, listed);
  await assertCurrentDeletionVectorsWhole(store, input);

  const removedCommits = new Map<number, LogDeletion>();
  for (const deletion of log.deletions) if (deletion.kind === "commit") removedCommits.set(deletion.version, deletion);
  const decisions = input.versions.map(({ file }) => {
    const removed = removedCommits.get(file.version);
    if (removed) return { version: file.version, keep: false, reason: removed.reason };
    return { version: file.version, keep: true, reason: file.version === newest ? "latest version" : keptReason(log) };
  });

  const files: RemovalFile[] = log.deletions.map((d) => ({ key: d.key, role: ROLE_OF[d.kind], reason: d.reason, ...(d.kind === "commit" ? { version: d.version } : {}) }));
  for (const candidate of vacuum.candidates) {
    if (needed.has(candidate.key)) continue;
    files.push({ key: candidate.key, role: dataRole(candidate.key), reason: `VACUUM: ${candidate.reason}` });
  }

  const kept = new Map<number, FileReference[]>();
  for (const { file, references } of input.versions) {
    if (removedCommits.has(file.version)) continue;
    const keeps = readable.has(file.version)
      ? // Change data gone before this run (a Delta VACUUM took it) is not this run's to prove or find again.
        (reference: FileReference) => LOG_ROLES.has(reference.role) || SNAPSHOT_ROLES.has(reference.role) || (reference.role === "change-data" && listed.has(reference.path))
      : (reference: FileReference) => LOG_ROLES.has(reference.role);
    kept.set(file.version, references.filter(keeps));
  }
  const unreadable = unreadableAfter(input, readable, removedCommits, new Set(files.map((file) => file.key)), listed);
  const fromTable = (key: string, declared: string | undefined): string => (declared ? `table property ${key}` : `${key}'s default (not set on the table)`);
  return {
    decisions,
    files,
    reported: [...passedOverFiles(logListing, log), ...vacuum.young.map((file) => ({ key: file.key, role: dataRole(file.key), reason: `VACUUM keeps it: ${file.reason}` }))],
    kept,
    ...(unreadable.size > 0 ? { unreadable } : {}),
    protection: protectionOf(Math.max(properties.checkpointProtectionBefore, options.protectBefore), input, log),
    applied: {
      olderThanMs: { value: properties.logRetentionMs, source: `Delta log cleanup: ${fromTable(LOG_RETENTION, properties.declared.logRetentionMs)}` },
      safetyWindowMs: { value: properties.deletedFileRetentionMs, source: `Delta VACUUM: ${fromTable(DELETED_FILE_RETENTION, properties.declared.deletedFileRetentionMs)}` },
    },
  };
}

/**
 * Fail closed: the checkpoint the latest version replays from decodes whole. The reader reads
 * only the action columns and checks no page checksum, so a damaged checkpoint can replay to
 * wrong live files, and VACUUM would take the files the version really names as orphans.
 */
async function assertLatestCheckpointWhole(store: ObjectStore, snapshot: DeltaSnapshot, listing: LogListing, proofs: CheckpointProofs): Promise<void> {
  const used = snapshot.checkpoint;
  if (!used) return;
  const keys = used.files.join("\u0000");
  const checkpoint = listing.checkpoints.find((c) => c.version === used.version && c.files.map((f) => f.key).join("\u0000") === keys);
  // Not in this run's listing (rewritten since): the proof stage asks for it by name.
  if (!checkpoint) return;
  const problem = await proveCheckpoint(store, checkpoint, proofs);
  if (problem !== null) {
    throw new TableFormatError(store.uri, `the latest version (${snapshot.version}) replays from checkpoint ${used.version}, which cannot be used: ${problem}; nothing deleted`);
  }
}

/**
 * Fail closed: every data and deletion-vector file the current version (the latest at the run's
 * start, and any committed since) names must exist. When one does not, the table's paths are not
 * what they seem (a writer that did not URI-encode wrote "x%20y.parquet" for the file it named
 * "x%20y.parquet"), and VACUUM would take the very file the writer meant as an orphan. Files not
 * in the listing (committed after it was made) are asked for one by one.
 */
async function assertCurrentFilesExist(store: ObjectStore, input: RemovalInput, listed: ReadonlySet<string>): Promise<void> {
  for (const { file, references } of input.versions) {
    if (file.version < input.latestAtStart) continue;
    for (const reference of references) {
      if (!SNAPSHOT_ROLES.has(reference.role) || listed.has(reference.path)) continue;
      if (await objectExists(store, reference.path)) continue;
      throw new TableFormatError(
        store.uri,
        `version ${file.version} names "${reference.path}", which does not exist (is a path in the log encoded differently from the file's name?); nothing deleted`,
      );
    }
  }
}

/**
 * Fail closed: every deletion-vector file the current version names is whole (every entry's
 * magic and CRC-32). A damaged one changes which rows the version holds, while the proof stage
 * reads no file an older version shares; and VACUUM would take the older deletion vectors that
 * still describe those rows. Deletion-vector files are few and small beside the data.
 */
async function assertCurrentDeletionVectorsWhole(store: ObjectStore, input: RemovalInput): Promise<void> {
  const firstNamedBy = new Map<string, number>();
  for (const { file, references } of input.versions) {
    if (file.version < input.latestAtStart) continue;
    for (const reference of references) if (reference.role === "delete" && !firstNamedBy.has(reference.path)) firstNamedBy.set(reference.path, file.version);
  }
  const problems = await mapConcurrent([...firstNamedBy.keys()], CONCURRENCY, async (key) => {
    try {
      return deletionVectorProblem((await store.get(key)).body);
    } catch (error) {
      if (error instanceof NotFoundError) return "does not exist";
      throw error;
    }
  });
  const at = problems.findIndex((problem) => problem !== null);
  if (at === -1) return;
  const key = [...firstNamedBy.keys()][at]!;
  throw new TableFormatError(store.uri, `version ${firstNamedBy.get(key)} reads its deleted rows from "${key}", which cannot be used: ${problems[at]}; nothing deleted`);
}

const CONCURRENCY = 8;

/** The sidecar files the listing shows. */
function sidecarsListed(listing: Iterable<ObjectInfo>): ObjectInfo[] {
  const sidecars: ObjectInfo[] = [];
  for (const object of listing) if (object.key.startsWith(SIDECARS_PREFIX)) sidecars.push(object);
  return sidecars;
}

/**
 * The keys of the listing that some version names: what "is it listed?" is asked of here (the
 * current version's files, change data, an unreadable version's files). One walk; the set holds
 * at most the named paths, never the rest of the listing.
 */
function listedAmong(listing: Iterable<ObjectInfo>, versions: RemovalInput["versions"]): Set<string> {
  const named = new Set<string>();
  for (const { references } of versions) for (const reference of references) named.add(reference.path);
  const listed = new Set<string>();
  for (const object of listing) if (named.has(object.key)) listed.add(object.key);
  return listed;
}

/** The newest version the kept checkpoint may be at, and why (null: Delta's own rule alone). */
function newestKept(input: RemovalInput): { version: number; reason: string } | null {
  const caps: { version: number; reason: string }[] = [{ version: input.latestAtStart, reason: "the latest version when this run started" }];
  const atStart = input.versions.filter((v) => v.file.version <= input.latestAtStart);
  const oldestRetained = atStart.slice(-input.policy.retainVersions)[0];
  if (oldestRetained) caps.push({ version: oldestRetained.file.version, reason: `the newest ${input.policy.retainVersions} version(s) stay readable` });
  for (const [version, why] of input.pinned) caps.push({ version, reason: `version ${version} is pinned by a reader (${why})` });
  return caps.reduce((a, b) => (b.version < a.version ? b : a));
}

/**
 * Versions whose data VACUUM must leave whole: pinned ones, the newest `retainVersions` at the
 * run's start, and every one from the latest at the run's start on. The same versions cap the
 * kept checkpoint (newestKept): keeping their log without their data would leave them unreadable.
 */
function mustStayReadable(input: RemovalInput): Set<number> {
  const out = new Set<number>(input.pinned.keys());
  const atStart = input.versions.filter((v) => v.file.version <= input.latestAtStart);
  for (const { file } of atStart.slice(-input.policy.retainVersions)) out.add(file.version);
  for (const { file } of input.versions) if (file.version >= input.latestAtStart) out.add(file.version);
  return out;
}

/**
 * Versions whose commits the plan keeps but whose data is gone once it has run: a data or
 * deletion-vector file they name is deleted by this plan's VACUUM, or was already missing from the
 * listing (a VACUUM before this run, by lakewarden or another engine). Delta lists their commits in
 * its history, and no reader can time-travel to them; the history marks them cleaned up. Known
 * from what the run holds already (the references and the listing): no request of its own.
 */
function unreadableAfter(
  input: RemovalInput,
  readable: ReadonlySet<number>,
  removedCommits: ReadonlyMap<number, LogDeletion>,
  deleted: ReadonlySet<string>,
  listed: ReadonlySet<string>,
): Map<number, string> {
  const out = new Map<number, string>();
  for (const { file, references } of input.versions) {
    if (readable.has(file.version) || removedCommits.has(file.version)) continue;
    const gone = references.find((reference) => SNAPSHOT_ROLES.has(reference.role) && (deleted.has(reference.path) || !listed.has(reference.path)));
    if (!gone) continue;
    const how = deleted.has(gone.path) ? "this run's VACUUM deletes it" : "an earlier VACUUM deleted it";
    out.set(file.version, `its commit stays in the log, but it cannot be read: it names ${gone.path}, and ${how} (Delta keeps time travel only within its VACUUM retention)`);
  }
  return out;
}

/** The files of checkpoints log cleanup could not use, kept and reported with why (the report's "kept and reported"). */
function passedOverFiles(listing: LogListing, log: LogCleanupPlan): RemovalFile[] {
  const files: RemovalFile[] = [];
  for (const { version, reason } of log.passedOver) {
    for (const checkpoint of listing.checkpoints) {
      if (checkpoint.version === version) for (const file of checkpoint.files) files.push({ key: file.key, role: "checkpoint", reason });
    }
  }
  return files;
}

function keptReason(log: LogCleanupPlan): string {
  if (log.keptCheckpoint !== null) return `at or above the kept checkpoint ${log.keptCheckpoint}: log cleanup keeps it and every commit after it`;
  return `log cleanup removes no version: ${log.notes.join("; ") || "nothing is due"}`;
}

function dataRole(key: string): FileRole {
  if (key.startsWith("_change_data/")) return "change-data";
  return /(^|\/)deletion_vector_[0-9a-f-]{36}\.bin$/.test(key) ? "delete" : "data";
}

/** checkpointProtection's outcome in the pipeline's words (null: no boundary in force). */
function protectionOf(boundary: number, input: RemovalInput, log: LogCleanupPlan): RemovalProtection | null {
  if (boundary <= 0) return null;
  const below = input.versions.filter((v) => v.file.version < boundary).length;
  if (below === 0) return { boundary, result: "not-applicable", reason: `no version below ${boundary} remains: protection no longer applies` };
  const note = log.notes.find((n) => n.startsWith("checkpointProtection:"));
  if (log.keptCheckpoint === null) {
    return note
      ? { boundary, result: "kept-all", reason: note }
      : { boundary, result: "nothing-due", reason: `log cleanup removes nothing: ${log.notes.join("; ") || "nothing is due"}` };
  }
  const removed = log.deletions.filter((d) => d.kind === "commit").length;
  if (removed === 0) return { boundary, result: "nothing-due", reason: `no commit below the kept checkpoint ${log.keptCheckpoint} remains` };
  if (log.keptCheckpoint >= boundary) {
    return { boundary, result: "removed-all", reason: `the kept checkpoint ${log.keptCheckpoint} is at or above ${boundary}: all history below ${boundary} goes in this run` };
  }
  return { boundary, result: "partial", reason: note ?? `history below ${boundary} is removed up to the kept checkpoint ${log.keptCheckpoint}` };
}
