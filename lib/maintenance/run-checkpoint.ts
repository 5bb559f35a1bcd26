/**
 * `lakewarden checkpoint`: archive the table's history without deleting anything. Reads the
 * timeline (newest checkpoint + the version files it lacks), adds the records of any interrupted
 * cleanup's intent, writes the checkpoint and prunes old ones. Takes no lease: checkpoint writes
 * are create-only or If-Match, so it cannot undo a concurrent cleanup's checkpoint; it leaves
 * intents in place, since only a cleanup holding the lease knows its own are settled.
 */
import { archiveAndHold } from "../checkpoint/archive.ts";
import type { ArchiveResult } from "../checkpoint/archive.ts";
import { DEFAULT_MAX_ENTRIES } from "../checkpoint/history.ts";
import { cleanupOldCheckpoints } from "../checkpoint/prune.ts";
import { listCheckpointFiles } from "../checkpoint/load.ts";
import { noVersionError } from "../formats/errors.ts";
import { resolveFormat } from "../formats/index.ts";
import type { TableFormat, VersionFile } from "../formats/table-format.ts";
import type { ObjectStore, RequestCounts } from "../store/object-store.ts";
import { mainBranchTaggedVersions } from "../model/refs.ts";
import { readHistory } from "../head/timeline-source.ts";
import type { VersionRecord } from "../model/version-record.ts";
import { unreadableCheckpoints } from "../checkpoint/damaged.ts";
import type { HistoryProblem } from "../checkpoint/damaged.ts";
import { diffCounts } from "./cleanup-report.ts";
import { checkpointMissingPerReceipts, listRunFiles, readIntents } from "./run-files.ts";

export interface RunCheckpointOptions {
  format?: TableFormat;
  maxCheckpointFiles?: number;
  maxCheckpointEntries?: number;
  now?: () => Date;
}

export interface CheckpointReport {
  table: string;
  format: string;
  checkpoint: ArchiveResult;
  checkpoints_pruned: string[];
  /** Version files read (those the previous checkpoint did not hold). */
  manifests_read: number;
  versions: number;
  cleaned_up_versions: number;
  requests: RequestCounts;
  warnings: string[];
  /** Damaged checkpoints and segments of the history (set aside by this run where it could), with the versions they covered. */
  history_problems: HistoryProblem[];
}

/**
 * Live versions whose stored record has no totals (a checkpoint or head written before the
 * format could give them without a replay: Delta's, before readRecords), read again from their
 * version files, so the checkpoint learns them; only for a format that reads many versions at
 * once. Nothing for a version whose totals are known, or already gone.
 */
async function recordsWithTotals(store: ObjectStore, format: TableFormat, versionFiles: readonly VersionFile[], known: readonly VersionRecord[]): Promise<VersionRecord[]> {
  if (!format.readRecords) return [];
  const unknown = new Set(known.filter((r) => !r.is_cleaned_up && r.total_data_files === null && r.total_files_size === null).map((r) => r.version));
  const files = versionFiles.filter((file) => unknown.has(file.version));
  return files.length === 0 ? [] : format.readRecords(store, files);
}

export async function runCheckpoint(store: ObjectStore, options: RunCheckpointOptions = {}): Promise<CheckpointReport> {
  const now = options.now ?? (() => new Date());
  const before = store.stats.snapshot();
  const format = options.format ?? (await resolveFormat(store));
  const [versionFiles, refs, runFiles] = await Promise.all([format.listVersionFiles(store), format.readRefs(store), listRunFiles(store)]);
  if (versionFiles.length === 0) throw await noVersionError(store, format);
  const timeline = await readHistory(store, { format, versionFiles, refs });
  const intents = await readIntents(store, runFiles.intents);
  // A checkpoint deleted outright is a history problem as a damaged one is: set aside, remembered.
  const missing = await checkpointMissingPerReceipts(store, runFiles.receipts, runFiles.receipts.length > 0 ? await listCheckpointFiles(store) : []);
  const records = new Map<number, VersionRecord>();
  for (const intent of intents.read) for (const record of intent.records) records.set(record.version, record);
  for (const record of timeline.records) records.set(record.version, record);
  for (const record of await recordsWithTotals(store, format, versionFiles, timeline.records)) records.set(record.version, record);

  const { result, held } = await archiveAndHold(store, {
    previous: timeline.checkpoint,
    records: [...records.values()],
    liveVersions: timeline.liveVersions,
    taggedVersions: mainBranchTaggedVersions(refs),
    tableFormat: format.name,
    now: now(),
    maxEntries: options.maxCheckpointEntries ?? DEFAULT_MAX_ENTRIES,
    unreadable: withMissing(unreadableCheckpoints(timeline.historyProblems), missing),
  });
  const pruned = await cleanupOldCheckpoints(store, {
    ...(options.maxCheckpointFiles !== undefined ? { maxCheckpointFiles: options.maxCheckpointFiles } : {}),
    keep: result.key ? [result.key] : [],
    held,
  });
  return {
    table: store.uri,
    format: format.name,
    checkpoint: result,
    checkpoints_pruned: pruned.pruned,
    manifests_read: timeline.sources.manifests,
    versions: result.rows,
    cleaned_up_versions: result.cleanedUpRows,
    requests: diffCounts(store.stats.snapshot(), before),
    warnings: [...intents.problems, ...pruned.failed.map((f) => `${store.uriOf(f.key)}: not pruned: ${f.message}`), ...(pruned.problems ?? [])],
    history_problems: timeline.historyProblems.map((problem) => {
      const note = result.setAside?.find((n) => n.file === problem.file);
      return note && problem.set_aside === null ? { ...problem, set_aside: note.set_aside } : problem;
    }),
  };
}

/** The unreadable checkpoints with the one the receipts name, unless the history already knows it (a head names it too). */
function withMissing(unreadable: { key: string; problem: string }[], missing: { key: string; problem: string } | null): { key: string; problem: string }[] {
  return missing && !unreadable.some((file) => file.key === missing.key) ? [...unreadable, missing] : unreadable;
}
