/**
 * Cleanup of a table whose commit pointer a catalog owns, committing through that catalog: the
 * entry is loaded right before each run (never cached), the run plans on the metadata it names,
 * and the format's removal commit goes through the catalog guarded by that entry
 * (lib/formats/catalog-commit.ts). A commit the catalog refuses because another writer moved the
 * entry is a re-plan: the run fails before any delete, and a new run loads the new entry and plans
 * on it, a bounded number of times. A commit with no answer is not retried: it may have applied,
 * and the next scheduled run reads the table back before deciding. A table the catalog says another
 * maintenance service looks after (S3 Tables' own snapshot management) is left alone: nothing is
 * loaded, planned or deleted, and the run fails with MaintenanceOptOutError naming why.
 */
import type { TableCatalog } from "../formats/catalog-commit.ts";
import { formatAtCatalogPointer } from "../formats/catalog.ts";
import { CatalogCommitError, MaintenanceOptOutError } from "../formats/errors.ts";
import type { ObjectStore } from "../store/object-store.ts";
import type { CleanupReport } from "./cleanup-report.ts";
import { runCleanup, type RunCleanupOptions } from "./run-cleanup.ts";

export const DEFAULT_CATALOG_REPLANS = 3;

export interface CatalogCleanupOptions extends Omit<RunCleanupOptions, "format"> {
  /** Runs after a refused commit, each on a freshly loaded entry (default 3). */
  maxCommitReplans?: number;
}

export interface CatalogCleanupReport extends CleanupReport {
  /** Why each earlier run of this call was refused by the catalog and planned again. */
  catalog_replans: string[];
}

export async function runCleanupThroughCatalog(store: ObjectStore, catalog: TableCatalog, options: CatalogCleanupOptions = {}): Promise<CatalogCleanupReport> {
  const { maxCommitReplans = DEFAULT_CATALOG_REPLANS, ...runOptions } = options;
  const elsewhere = (await catalog.maintainedElsewhere?.()) ?? null;
  if (elsewhere !== null) throw new MaintenanceOptOutError(catalog.label, `${elsewhere}; nothing read, written or deleted`);
  const replans: string[] = [];
  for (;;) {
    const { format } = formatAtCatalogPointer(store, await catalog.load(), { commitThrough: catalog });
    try {
      const report = await runCleanup(store, { ...runOptions, format });
      return { ...report, catalog_replans: replans };
    } catch (error) {
      if (!(error instanceof CatalogCommitError) || error.outcome !== "conflict" || replans.length >= maxCommitReplans) throw error;
      replans.push(error.message);
    }
  }
}
