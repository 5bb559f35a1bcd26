/**
 * The head after cleanup's own commit. A format that removes versions by writing a new commit
 * (Iceberg's expiry: `v<N+1>.metadata.json`, the same snapshot as before) leaves the stored head
 * describing the previous commit file, and every reader then falls back to the format's metadata
 * with a warning until the next write. So a run whose report says it wrote its removal commit
 * brings the head up to it, when the table has a head: making one is the commit path's job.
 * Format-neutral: the format is the one the run used, or the table's pinned one.
 */
import type { TableFormat } from "../formats/table-format.ts";
import type { ObjectStore } from "../store/object-store.ts";
import { probeStoredHead } from "./stored-head.ts";
import { writeTableHead, type WriteTableHeadResult } from "./write-table-head.ts";

/** What of a cleanup report this needs (lib/maintenance's CleanupReport has it). */
export interface CleanupCommitOutcome {
  removal_commit: { status: string; key: string | null } | null;
}

export type HeadAfterCleanup = { action: "none"; reason: string } | { action: "written"; result: WriteTableHeadResult } | { action: "failed"; problem: string };

export async function refreshHeadAfterCleanup(store: ObjectStore, report: CleanupCommitOutcome, options: { format?: TableFormat } = {}): Promise<HeadAfterCleanup> {
  if (report.removal_commit?.status !== "written") return { action: "none", reason: "the run wrote no commit" };
  try {
    if ((await probeStoredHead(store)) === null) return { action: "none", reason: "the table has no head" };
    return { action: "written", result: await writeTableHead(store, options.format ? { format: options.format } : {}) };
  } catch (error) {
    // The cleanup itself is done and the table whole; a stale head only costs readers a fallback.
    return {
      action: "failed",
      problem: `the head was not brought up to ${report.removal_commit.key ?? "the new commit"}: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
}
