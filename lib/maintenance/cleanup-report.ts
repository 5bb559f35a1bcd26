/**
 * What a cleanup run reports: the CLI's `--json` document, the Lambda's result, and (without
 * the per-file list) the receipt under `_lakewarden/runs/`. snake_case like every JSON lakewarden
 * prints.
 */
import type { ArchiveResult } from "../checkpoint/archive.ts";
import type { DeleteFailure, RequestCounts } from "../store/object-store.ts";
import type { DeleteRate } from "./delete-batches.ts";
import type { PlannedFile, PlannedKind } from "./file-plan.ts";
import type { describePolicy } from "./policy.ts";
import type { ReferenceCheck } from "./reference-check.ts";
import type { OutsideReference } from "./references.ts";
import type { ProtectionOutcome, TaggedOldVersion } from "./version-plan.ts";

/** completed: all stages ran; stopped: the deadline or abort signal stopped it (safe to rerun); dry-run: nothing written. */
export type CleanupStatus = "completed" | "stopped" | "dry-run" | "failed";

import type { KindTotals } from "./stats.ts";
import type { RunStorage } from "./storage-parts.ts";
export type { KindTotals } from "./stats.ts";

export interface VersionLine {
  version: number;
  timestamp_millis: number;
  keep: boolean;
  reason: string;
}

export interface CleanupReport {
  table: string;
  format: string;
  run_id: string;
  status: CleanupStatus;
  /** Where a stopped run stopped (null unless status is "stopped"). */
  stop_reason: string | null;
  /** Why the run had nothing to do at all, in one line (a table with no version yet: "… table with no snapshot yet: nothing to maintain"); else null. */
  nothing_to_do: string | null;
  dry_run: boolean;
  started_at: string;
  finished_at: string;
  duration_ms: number;
  policy: ReturnType<typeof describePolicy> | null;
  /** The latest version when the run started: it and everything newer are kept. */
  latest_version_at_start: number | null;
  /** Versions removed (dry run: that would be), ascending. */
  versions_removed: number[];
  versions_kept: number;
  /** Every live version the run read, with why it is kept or removed. */
  versions: VersionLine[];
  tagged_old_versions: TaggedOldVersion[];
  protection: ProtectionOutcome | null;
  /** Files removed (dry run: that would be) by kind, manifests included. */
  files_removed: Partial<Record<PlannedKind, KindTotals>>;
  bytes_removed: number;
  /**
   * The file plan: every file deleted (or to delete) and every kept file worth reporting, with
   * reasons; the first REPORTED_FILES_LIMIT (10,000) of them on a bigger table, whose counts
   * (files_planned, files_removed) still cover every file.
   */
  files: PlannedFile[];
  /** Files in the plan (deleted or to delete, and kept-and-reported): `files` names the first of them. */
  files_planned: number;
  files_kept_reported: number;
  delete_failures: DeleteFailure[];
  /** How fast the deletes went: the limit, the rate achieved, requests S3 throttled (null: the run deleted nothing). */
  delete_rate: DeleteRate | null;
  references_outside_root: OutsideReference[];
  replans: string[];
  /**
   * The metadata commit of a format that removes versions that way (TableFormat.removal
   * "metadata-commit"), when the plan has one: it drops `versions_removed` and makes
   * `changes` (expired refs), either alone. "would write" on a dry run; "not written" when the
   * run stopped or failed before it. null: no such commit is due.
   */
  removal_commit: RemovalCommit | null;
  /**
   * The proof made before the first delete that every kept version reads whole from what will
   * remain (prove-kept.ts): files looked up, HEADs, files read for their content, data files
   * proven by the size their versions record (not read; `verifyData` reads them), and why the
   * content proof was skipped (null: it ran). null: the run stopped or failed before it.
   */
  proof: { files_checked: number; files_headed: number; files_read: number; files_proven_by_size: number; content_skipped: string | null } | null;
  reference_check: ReferenceCheck | null;
  checkpoint: ArchiveResult | null;
  checkpoints_pruned: string[];
  /** Intents of earlier (interrupted) runs whose versions this run archived. */
  intents_archived: string[];
  receipts_pruned: number;
  /**
   * The run's budget and its chain: runs stopped by the budget save their progress
   * (`progress_saved`) and the next run of the chain resumes from it (`resumed`); the run that
   * completes clears it.
   */
  budget: {
    deadline: string | null;
    max_duration_ms: number | null;
    chain_id: string;
    run_in_chain: number;
    resumed: boolean;
    progress_saved: string | null;
    progress_files_cleared: number;
  };
  receipt: string | null;
  lease: { run_id: string; expires_at: string; took_over_from: string | null } | null;
  requests: RequestCounts;
  /**
   * The storage of the format's folders by part (lib/maintenance/storage-parts.ts), from the plan this run
   * made (before) and that minus what it deleted (after); null when the run made no plan.
   */
  storage: RunStorage | null;
  warnings: string[];
  errors: string[];
}

export interface RemovalCommit {
  status: "would write" | "written" | "not written";
  /** The version file the plan read, which the commit applies on. */
  base: string | null;
  /** The commit written (null unless written). */
  key: string | null;
  versions_removed: number[];
  changes: string[];
}

/** Files removed (dry run: to remove) over every kind. */
export function filesRemovedCount(report: Pick<CleanupReport, "files_removed">): number {
  return Object.values(report.files_removed).reduce((sum, totals) => sum + (totals?.files ?? 0), 0);
}

/** The receipt: the report without the per-file and per-version lists (counts stay), keys in snake_case. */
export function receiptOf(report: CleanupReport): Omit<CleanupReport, "files" | "versions"> & { files_planned: number } {
  const { files: _files, versions: _versions, ...rest } = report;
  return snakeCaseKeys({ ...rest, status: reportedStatus(report) });
}

/**
 * The status people are shown: a run that got through every stage but whose deletes (or
 * checkpoint prunes) failed is "failed", not "completed"; the next run retries them.
 */
export function reportedStatus(report: Pick<CleanupReport, "status" | "delete_failures" | "errors">): CleanupStatus {
  return report.status === "completed" && (report.delete_failures.length > 0 || report.errors.length > 0) ? "failed" : report.status;
}

/**
 * Keys whose values are maps of user data (a table's config, a commit's transaction
 * properties): their keys are what the user wrote (`lakewarden.older_than`, `writer.id`)
 * and are printed as they are.
 */
export const USER_DATA_KEYS: ReadonlySet<string> = new Set(["config", "transaction_properties"]);

/**
 * The one naming rule of every JSON document lakewarden prints or stores (`--json`, receipts,
 * `serve --json` events): keys in snake_case, recursively, except inside USER_DATA_KEYS maps.
 * `cleanedUpRows` → `cleaned_up_rows`; keys already in snake_case are unchanged.
 */
export function snakeCaseKeys<T>(value: T): T {
  return convert(value) as T;
}

function convert(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(convert);
  if (value === null || typeof value !== "object" || value instanceof Uint8Array || value instanceof Date) return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    out[toSnakeCase(key)] = USER_DATA_KEYS.has(key) ? inner : convert(inner);
  }
  return out;
}

/** Keys seen before: a `versions --json` of 512 records converts the same twenty keys 10,000 times. */
const snakeCaseOf = new Map<string, string>();
const SNAKE_CASE_CACHE_LIMIT = 10_000;

export function toSnakeCase(key: string): string {
  let snake = snakeCaseOf.get(key);
  if (snake === undefined) {
    snake = key
      .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
      .replace(/([A-Z])([A-Z][a-z])/g, "$1_$2")
      .toLowerCase();
    // Keys are field names, a bounded set; the limit keeps a caller converting data keys from growing it forever.
    if (snakeCaseOf.size < SNAKE_CASE_CACHE_LIMIT) snakeCaseOf.set(key, snake);
  }
  return snake;
}

export function diffCounts(after: RequestCounts, before: RequestCounts): RequestCounts {
  return {
    get: after.get - before.get,
    head: after.head - before.head,
    list: after.list - before.list,
    put: after.put - before.put,
    delete: after.delete - before.delete,
  };
}
