/**
 * cleanup-table: one cleanup request from the queue → the cleanup pipeline for that table,
 * under the table's lease, stopping cleanly before the Lambda runs out of time.
 *
 * Outcomes per message:
 *   completed                 → acknowledged; metrics for versions, files and bytes removed, and
 *                               the storage after the run (live, history, reclaimed bytes);
 *   stopped (time ran short)  → failed, so SQS redelivers it and the next run finishes the job;
 *   lease held by another run → acknowledged: that run is doing this table's cleanup;
 *   anything else             → failed; retried, then the DLQ (and its alarm).
 */
import { BatchProcessor, EventType, processPartialResponse } from "@aws-lambda-powertools/batch";
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import { LeaseHeldError } from "../../lib/maintenance/errors.ts";
import type { CleanupSettings } from "../../lib/maintenance/policy.ts";
import { filesRemovedCount, type CleanupReport } from "../../lib/maintenance/report.ts";
import type { RunCleanupOptions } from "../../lib/maintenance/run-cleanup.ts";
import { errorSummary } from "../../lib/store/errors.ts";
import type { ObjectStore } from "../../lib/store/object-store.ts";
import { parseCleanupRequest } from "../shared/cleanup-request.ts";
import { METRIC, MetricUnit, type HandlerLog, type HandlerMetrics } from "../shared/observability.ts";
import { isInScope, type TableScopes } from "../shared/table-scopes.ts";

/** Time kept back from the Lambda's remaining time to stop between steps, write the receipt and release the lease. */
export const DEFAULT_STOP_MARGIN_MS = 60_000;

export interface CleanupTableDependencies {
  scopes: TableScopes;
  openStore(uri: string): ObjectStore;
  runCleanup(store: ObjectStore, options: RunCleanupOptions): Promise<CleanupReport>;
  /** Retention defaults (the Lambda environment); each table's `lakewarden.*` config overrides them. */
  settings: CleanupSettings;
  stopMarginMs?: number;
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
  return async (event, context) => {
    const cleanOne = async (record: SQSRecord): Promise<void> => {
      const { table } = parseCleanupRequest(record.body, `SQS message ${record.messageId}`);
      if (!isInScope(table, deps.scopes)) throw new TableOutOfScopeError(table);
      // Without a Lambda context (local callers) there is no deadline but the lease's.
      const remaining = context?.getRemainingTimeInMillis();
      const deadline = remaining === undefined ? undefined : new Date(now() + remaining - margin);
      const owner = context ? `lambda:${context.functionName}:${context.awsRequestId}` : undefined;
      let report: CleanupReport;
      try {
        report = await deps.runCleanup(deps.openStore(table), {
          settings: deps.settings,
          ...(deadline ? { deadline } : {}),
          ...(owner ? { lease: { owner } } : {}),
        });
      } catch (error) {
        if (error instanceof LeaseHeldError) {
          deps.log.info("cleanup skipped: another run holds the table's lease", { table, detail: error.message });
          return;
        }
        deps.log.error("cleanup failed", { table, error: errorSummary(error) });
        throw error;
      }
      reportRun(report, deps);
      if (report.status === "stopped") {
        deps.metrics.addMetric(METRIC.cleanupsStoppedForTime, MetricUnit.Count, 1);
        throw new CleanupStoppedError(table, report.stop_reason ?? "deadline");
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
