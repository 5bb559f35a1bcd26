/** What every stage of a cleanup run reads: the table, the format, the caller's options, the clock, the lease and the stop guard. */
import type { TableFormat } from "../formats/table-format.ts";
import type { ObjectStore } from "../store/object-store.ts";
import type { DeletePacing } from "./delete-batches.ts";
import type { Lease } from "./lease.ts";
import type { CleanupSettings } from "./policy.ts";
import type { CleanupProgress } from "./progress.ts";
import type { ReceiptRetention } from "./run-files.ts";
import type { SpillArea } from "./spill.ts";
import type { StopGuard } from "./stop-guard.ts";

export interface RunCleanupOptions {
  /** The caller's explicit settings (CLI flags): above every other source (lib/maintenance/policy.ts). */
  settings?: CleanupSettings;
  /** Settings from LAKEWARDEN_* environment variables (a shell's, a Lambda's): below `settings`, above the table's config. */
  environment?: CleanupSettings;
  /** Default: the table's pinned or detected format. */
  format?: TableFormat;
  /** Plan and report only: no lease, no delete, no checkpoint, no receipt. */
  dryRun?: boolean;
  /** Stop cleanly when aborted (between steps; the run is then safe to repeat). */
  signal?: AbortSignal;
  /** Stop cleanly once this time has passed, e.g. a Lambda's end minus a margin. */
  deadline?: Date;
  /**
   * The run's budget (`cleanup --max-duration`): stop cleanly this long after the start (the
   * earlier of this and `deadline` wins). Every stage stops at it, the manifest scan and the
   * listing included, and saves its progress under `_lakewarden/runs/progress/`; the next run
   * resumes from there after re-checking what may have changed.
   */
  maxDurationMs?: number;
  /**
   * New work a run does before its budget (`maxDurationMs`) may stop it, in objects: a version
   * file read, an object listed, a key in a delete batch each count one. A resumed run first
   * re-checks what may have changed (lists the version files, re-plans, writes the checkpoint
   * and the intent again); a budget shorter than that would otherwise stop every run of a chain
   * before it did anything new, and the chain would never end. Default 1: some progress, and
   * a delete batch is all or nothing, so a run that reaches the deletes sends one whole batch.
   * `deadline` and `signal` (a Lambda's end) stop a run regardless.
   */
  minWorkPerRun?: number;
  lease?: { durationMs?: number; owner?: string };
  maxCheckpointFiles?: number;
  maxCheckpointEntries?: number;
  receiptRetention?: ReceiptRetention;
  /** Keys per delete request (default 1000, S3's maximum). */
  deleteBatchSize?: number;
  deleteConcurrency?: number;
  /** Keys deleted per second at most (default: no limit until S3 answers SlowDown, which always slows the deletes). */
  maxDeleteRate?: number;
  /** Back-off settings and injected clock/sleep for the delete pacer (tests). */
  deletePacing?: DeletePacing;
  manifestConcurrency?: number;
  /**
   * The deep proof (`cleanup --verify-data`): before deleting, read the end of every data,
   * deletion and index file that only kept versions need for its file format's magic, not only
   * those whose versions record no size. A request per such file; by default a file whose
   * version records its size is proven by the listing showing that size.
   */
  verifyData?: boolean;
  maxReplans?: number;
  /** Runs after one whose removal commit lost to another writer's commit, each planned afresh on the new base (default 3). */
  maxCommitReplans?: number;
  progress?: CleanupProgress;
  /** The clock (tests move it; everything time-based reads it). */
  now?: () => Date;
}

export const DEFAULT_MIN_WORK_PER_RUN = 1;

export interface CleanupRun {
  store: ObjectStore;
  format: TableFormat;
  options: RunCleanupOptions;
  runId: string;
  /** The run's key under `_lakewarden/runs/` (its receipt, intent and progress). */
  key: string;
  startedAt: Date;
  now: () => Date;
  progress: CleanupProgress;
  /** Null in a dry run. */
  lease: Lease | null;
  /** Where the run's listing and plan keep their full pages (disposed when the run ends). */
  spill: SpillArea;
  guard: StopGuard;
}
