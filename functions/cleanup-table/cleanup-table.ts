/**
 * cleanup-table: one cleanup request from the queue → the cleanup pipeline for that table,
 * under the table's lease, stopping cleanly before the Lambda runs out of time.
 *
 * Outcomes per message:
 *   completed                 → acknowledged; metrics for versions, files and bytes removed, and
 *                               the storage after the run (live, history, reclaimed bytes);
 *   stopped (time ran short)  → a continuation message for the same table goes on the queue
 *                               (the run saved its progress; the next run resumes it) and this
 *                               one is acknowledged: a long cleanup is a chain of runs, not a
 *                               failing message that ends in the DLQ. A chain stops at its cap
 *                               (metric ContinuationCapReached, alarmed); the next scheduled
 *                               request resumes the saved progress. Without a queue to continue
 *                               on, the message fails and SQS redelivers it;
 *   lease held by another run → acknowledged: that run is doing this table's cleanup;
 *   anything else             → failed; retried, then the DLQ (and its alarm).
 *
 * A table named in LAKEWARDEN_GLUE_TABLES or LAKEWARDEN_CATALOG_TABLES is one whose catalog owns
 * its commit pointer (an Iceberg table Athena, Glue jobs, Spark or pyiceberg write through AWS
 * Glue or a REST catalog): the run loads the entry right before it starts and expires snapshots
 * through the catalog's own commit (UpdateTable guarded by Glue's VersionId; the REST protocol's
 * table commit with its requirements), as `cleanup --glue-table` / `--catalog` does
 * (lib/maintenance/catalog-cleanup.ts). The message never carries the pointer: a message may be
 * hours old, the catalog's answer is not. An entry that cannot be used (not found, access denied,
 * not Iceberg, a pointer outside the table root), a commit refused past its re-plans or one whose
 * answer was lost fails the message with one line and nothing deleted; the retry reads the table
 * back before deciding. A table whose catalog forbids deletes (gc.enabled=false) or that another
 * maintenance service looks after (S3 Tables' own snapshot management) is left alone with one line.
 */
import { BatchProcessor, EventType, processPartialResponse } from "@aws-lambda-powertools/batch";
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import { LeaseHeldError } from "../../lib/maintenance/errors.ts";
import { MaintenanceOptOutError } from "../../lib/formats/errors.ts";
import type { CleanupSettings } from "../../lib/maintenance/policy.ts";
import { filesRemovedCount, type CleanupReport } from "../../lib/maintenance/cleanup-report.ts";
import type { RunCleanupOptions } from "../../lib/maintenance/run-cleanup.ts";
import { formatAtCatalogPointer, type CatalogTable } from "../../lib/formats/catalog.ts";
import type { TableCatalog } from "../../lib/formats/catalog-commit.ts";
import { runCleanupThroughCatalog, type CatalogCleanupReport } from "../../lib/maintenance/catalog-cleanup.ts";
import { errorSummary } from "../../lib/store/errors.ts";
import { refreshHeadAfterCleanup } from "../../lib/head/after-cleanup.ts";
import type { ObjectStore } from "../../lib/store/object-store.ts";
import { encodeCleanupRequest, parseCleanupRequest, type CleanupRequest } from "../shared/cleanup-request.ts";
import { METRIC, MetricUnit, type HandlerLog, type HandlerMetrics } from "../shared/observability.ts";
import { isInScope, type TableScopes } from "../shared/table-scopes.ts";
import type { TableCatalogs } from "../shared/catalog-tables.ts";

/** Time kept back from the Lambda's remaining time to stop between steps, write the receipt and release the lease. */
export const DEFAULT_STOP_MARGIN_MS = 60_000;
/**
 * Time kept back that even a run which has not yet made progress does not use: the margin is
 * the run's budget, which it may overrun to do its minimum of new work (a resumed run re-checks
 * the table first), up to this much before the Lambda ends.
 */
export const DEFAULT_HARD_STOP_MARGIN_MS = 15_000;
export { DEFAULT_MAX_CONTINUATIONS } from "../shared/environment.ts";
import { DEFAULT_MAX_CONTINUATIONS } from "../shared/environment.ts";
import type { TableFormat } from "../../lib/formats/table-format.ts";

export interface CleanupTableDependencies {
  scopes: TableScopes;
  openStore(uri: string): ObjectStore;
  runCleanup(store: ObjectStore, options: RunCleanupOptions): Promise<CleanupReport>;
  /**
   * Settings from the Lambda environment (the stack's CDK props): the "environment" source, above
   * each table's `lakewarden.*` and stored config (lib/maintenance/policy.ts), which they override with a warning.
   */
  settings: CleanupSettings;
  stopMarginMs?: number;
  /** Below `stopMarginMs`: the Lambda time no run uses, progress or not. */
  hardStopMarginMs?: number;
  /** Keys deleted per second at most (LAKEWARDEN_MAX_DELETE_RATE). */
  maxDeleteRate?: number;
  /** Sends the request for a stopped run's continuation (the cleanup queue); absent → the message is retried instead. */
  sendContinuation?: (body: string) => Promise<void>;
  /** Continuations a chain may have (LAKEWARDEN_MAX_CONTINUATIONS, default 20). */
  maxContinuations?: number;
  /** Objects of new work a budgeted run does before its budget may stop it (LAKEWARDEN_MIN_WORK_PER_RUN). */
  minWorkPerRun?: number;
  /** The catalog owning a table's pointer (LAKEWARDEN_GLUE_TABLES, LAKEWARDEN_CATALOG_TABLES), or null. */
  catalogs?: TableCatalogs;
  /** Cleanup through a catalog's own commit (default: the library's runCleanupThroughCatalog). */
  runCleanupThroughCatalog?(store: ObjectStore, catalog: TableCatalog, options: Omit<RunCleanupOptions, "format">): Promise<CatalogCleanupReport>;
  log: HandlerLog;
  metrics: HandlerMetrics;
  now?: () => number;
}

export class CleanupStoppedError extends Error {
  constructor(table: string, detail: string) {
    super(`${table}: cleanup stopped before finishing (${detail}); it is safe to rerun and will be retried`);
    this.name = "CleanupStoppedError";
  }
}

export class TableOutOfScopeError extends Error {
  constructor(table: string) {
    super(`${table}: not one of this deployment's tables; refusing to clean it`);
    this.name = "TableOutOfScopeError";
  }
}

export function createCleanupTableHandler(deps: CleanupTableDependencies): (event: SQSEvent, context?: Context) => Promise<SQSBatchResponse> {
  const now = deps.now ?? Date.now;
  const margin = deps.stopMarginMs ?? DEFAULT_STOP_MARGIN_MS;
  const hardMargin = Math.min(deps.hardStopMarginMs ?? DEFAULT_HARD_STOP_MARGIN_MS, margin);
  return async (event, context) => {
    const cleanOne = async (record: SQSRecord): Promise<void> => {
      const request = parseCleanupRequest(record.body, `SQS message ${record.messageId}`);
      const { table } = request;
      if (!isInScope(table, deps.scopes)) throw new TableOutOfScopeError(table);
      // Without a Lambda context (local callers) there is no deadline but the lease's.
      const remaining = context?.getRemainingTimeInMillis();
      // The margin bounds the run as its budget; only the hard margin stops a run that has made no progress yet.
      const deadline = remaining === undefined ? undefined : new Date(now() + remaining - hardMargin);
      const budgetMs = remaining === undefined ? undefined : Math.max(0, remaining - margin);
      const owner = context ? `lambda:${context.functionName}:${context.awsRequestId}` : undefined;
      let report: CleanupReport;
      let store: ObjectStore;
      let catalogFormat: TableFormat | string | undefined;
      try {
        store = deps.openStore(table);
        const options: Omit<RunCleanupOptions, "format"> = {
          environment: deps.settings,
          ...(deps.minWorkPerRun !== undefined ? { minWorkPerRun: deps.minWorkPerRun } : {}),
          ...(deps.maxDeleteRate !== undefined ? { maxDeleteRate: deps.maxDeleteRate } : {}),
          ...(deadline ? { deadline } : {}),
          ...(budgetMs !== undefined ? { maxDurationMs: budgetMs } : {}),
          ...(owner ? { lease: { owner } } : {}),
          ...(deps.now ? { now: () => new Date(now()) } : {}),
        };
        ({ report, catalogFormat } = await cleanTable(table, store, options, deps));
      } catch (error) {
        if (error instanceof LeaseHeldError) {
          deps.log.info("cleanup skipped: another run holds the table's lease", { table, detail: error.message });
          return;
        }
        if (error instanceof MaintenanceOptOutError) {
          // The table forbids maintenance from deleting its files: every retry would be refused the same way.
          deps.log.info("cleanup skipped: the table opts out of maintenance", { table, detail: error.message });
          return;
        }
        deps.log.error("cleanup failed", { table, error: errorSummary(error) });
        throw error;
      }
      // The run's own commit (Iceberg's expiry) leaves the head on the commit before it; the
      // commit trigger may be off for this table, so the run brings it up itself (through a
      // catalog, to the file the catalog named at the run's last load, after its commit).
      const head =
        typeof catalogFormat === "string"
          ? { action: "failed" as const, problem: catalogFormat }
          : await refreshHeadAfterCleanup(store, report, catalogFormat ? { format: catalogFormat } : {});
      if (head.action === "failed") {
        report.warnings.push(head.problem);
        deps.log.warn("head not refreshed after cleanup's commit", { table, problem: head.problem });
      }
      reportRun(report, deps);
      if (report.status === "stopped") {
        deps.metrics.addMetric(METRIC.cleanupsStoppedForTime, MetricUnit.Count, 1);
        if (!deps.sendContinuation) throw new CleanupStoppedError(table, report.stop_reason ?? "deadline");
        await continueChain(request, report, deps);
      }
    };
    // One table at a time: each run may use the whole remaining time (the queue's batch size is 1 anyway).
    return processPartialResponse(event, cleanOne, new BatchProcessor(EventType.SQS), {
      ...(context ? { context } : {}),
      processInParallel: false,
      throwOnFullBatchFailure: false,
    });
  };
}

/**
 * One run on the table: through its catalog's own commit when a catalog owns its pointer, else
 * the plain pipeline. `catalogFormat`: the format at the catalog's last answer, for the head.
 */
async function cleanTable(
  table: string,
  store: ObjectStore,
  options: Omit<RunCleanupOptions, "format">,
  deps: CleanupTableDependencies,
): Promise<{ report: CleanupReport; catalogFormat?: TableFormat | string }> {
  const catalog = await deps.catalogs?.catalogOf(table);
  if (!catalog) return { report: await deps.runCleanup(store, options) };
  const watched = watchLoads(catalog, (entry) => {
    // An entry that names no usable pointer is the run's to refuse, with its own line.
    const pointer = pointerOf(store, entry);
    if (pointer !== null) deps.log.info("commit pointer read from the catalog", { table, catalogTable: entry.label, pointer });
  });
  const report = await (deps.runCleanupThroughCatalog ?? runCleanupThroughCatalog)(store, watched.catalog, options);
  for (const replan of report.catalog_replans) deps.log.info("the catalog refused the expiry commit: planned again on its new entry", { table, reason: replan });
  const catalogFormat = formatAtLastLoad(store, watched.last());
  return { report, ...(catalogFormat !== undefined ? { catalogFormat } : {}) };
}

/** The catalog, every load of it reported to `onFirst` (the first only) and the last one kept. */
function watchLoads(catalog: TableCatalog, onFirst: (entry: CatalogTable) => void): { catalog: TableCatalog; last(): CatalogTable | null } {
  let last: CatalogTable | null = null;
  const load = async (): Promise<CatalogTable> => {
    const entry = await catalog.load();
    if (last === null) onFirst(entry);
    last = entry;
    return entry;
  };
  return {
    catalog: {
      label: catalog.label,
      load,
      ...(catalog.updateParameters ? { updateParameters: catalog.updateParameters.bind(catalog) } : {}),
      ...(catalog.commitChanges ? { commitChanges: catalog.commitChanges.bind(catalog) } : {}),
      ...(catalog.maintainedElsewhere ? { maintainedElsewhere: catalog.maintainedElsewhere.bind(catalog) } : {}),
    },
    last: () => last,
  };
}

function pointerOf(store: ObjectStore, entry: CatalogTable): string | null {
  try {
    return formatAtCatalogPointer(store, entry).pointer;
  } catch {
    return null;
  }
}

/**
 * The format at the entry the run loaded last (after its commit, the fresh load that confirmed
 * it), for the head; or why not, as a warning: the cleanup is done whatever this finds.
 */
function formatAtLastLoad(store: ObjectStore, entry: CatalogTable | null): TableFormat | string | undefined {
  if (entry === null) return undefined;
  try {
    return formatAtCatalogPointer(store, entry).format;
  } catch (error) {
    return `the head was not brought up to the catalog's current commit: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/** Sends the next run of a budget-stopped chain, or, at the cap, raises the alarm metric instead. */
async function continueChain(request: CleanupRequest, report: CleanupReport, deps: CleanupTableDependencies): Promise<void> {
  const done = request.continuation ?? 0;
  const cap = deps.maxContinuations ?? DEFAULT_MAX_CONTINUATIONS;
  const chain = report.budget.chain_id;
  if (done >= cap) {
    deps.metrics.addMetric(METRIC.continuationCapReached, MetricUnit.Count, 1);
    deps.log.error("cleanup chain reached its continuation cap: the table waits for the next scheduled run, which resumes its saved progress", {
      table: request.table,
      chain,
      continuations: done,
      cap,
    });
    return;
  }
  const next: CleanupRequest = { table: request.table, requestedAt: request.requestedAt, continuation: done + 1, chain };
  // Sent before this message is acknowledged: a failed send fails the message, which SQS redelivers.
  await deps.sendContinuation!(encodeCleanupRequest(next));
  deps.metrics.addMetric(METRIC.cleanupContinuations, MetricUnit.Count, 1);
  deps.log.info("cleanup stopped for time and continues", { table: request.table, chain, continuation: done + 1, stopReason: report.stop_reason });
}

function reportRun(report: CleanupReport, deps: CleanupTableDependencies): void {
  const files = filesRemovedCount(report);
  deps.log.info(report.status === "completed" ? "cleanup completed" : "cleanup stopped for time", {
    table: report.table,
    status: report.status,
    version: report.latest_version_at_start,
    versionsRemoved: report.versions_removed,
    versionsKept: report.versions_kept,
    filesRemoved: files,
    bytesRemoved: report.bytes_removed,
    checkpoint: report.checkpoint?.key ?? null,
    durationMs: report.duration_ms,
    requests: report.requests,
    warnings: report.warnings,
  });
  deps.metrics.addMetric(METRIC.cleanupRuns, MetricUnit.Count, 1);
  deps.metrics.addMetric(METRIC.versionsRemoved, MetricUnit.Count, report.versions_removed.length);
  deps.metrics.addMetric(METRIC.filesRemoved, MetricUnit.Count, files);
  deps.metrics.addMetric(METRIC.bytesRemoved, MetricUnit.Bytes, report.bytes_removed);
  if (report.storage) {
    const { before, after } = report.storage;
    deps.metrics.addMetric(METRIC.storageLiveBytes, MetricUnit.Bytes, after.live.bytes);
    deps.metrics.addMetric(METRIC.storageHistoryBytes, MetricUnit.Bytes, after.history.bytes);
    deps.metrics.addMetric(METRIC.storageReclaimedBytes, MetricUnit.Bytes, before.reclaimable.bytes - after.reclaimable.bytes);
  }
}
