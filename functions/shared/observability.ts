/**
 * What a handler reports through: a structured log and metrics. The handlers' cores take these
 * two small interfaces, which Powertools' Logger and Metrics satisfy in Lambda and `serve` or a
 * test satisfies with its own.
 */
import { Logger } from "@aws-lambda-powertools/logger";
import { Metrics, MetricUnit } from "@aws-lambda-powertools/metrics";

export type LogAttributes = Record<string, unknown>;

export interface HandlerLog {
  info(message: string, ...attributes: LogAttributes[]): void;
  warn(message: string, ...attributes: LogAttributes[]): void;
  error(message: string, ...attributes: LogAttributes[]): void;
}

export type MetricUnitName = (typeof MetricUnit)[keyof typeof MetricUnit];

export interface HandlerMetrics {
  addMetric(name: string, unit: MetricUnitName, value: number): void;
}

export { MetricUnit };

/** The metric names lakewarden publishes (namespace `Lakewarden`). */
export const METRIC = {
  headsWritten: "HeadsWritten",
  headsAlreadyCurrent: "HeadsAlreadyCurrent",
  headWriteFailures: "HeadWriteFailures",
  commitToHeadLag: "CommitToHeadLag",
  eventsIgnored: "EventsIgnored",
  tablesEnqueued: "TablesEnqueued",
  cleanupRuns: "CleanupRuns",
  cleanupsStoppedForTime: "CleanupsStoppedForTime",
  /** A budget-stopped run sent its table's next run a continuation message. */
  cleanupContinuations: "CleanupContinuations",
  /** A chain of continuations reached its cap: the table waits for the next schedule (alarmed). */
  continuationCapReached: "ContinuationCapReached",
  versionsRemoved: "VersionsRemoved",
  filesRemoved: "FilesRemoved",
  bytesRemoved: "BytesRemoved",
  /** From the run's storage breakdown (its receipt's `storage`): bytes of the latest version's files. */
  storageLiveBytes: "StorageLiveBytes",
  /** Bytes only older kept versions need (retention, tags, branches, pins, protection), after the run. */
  storageHistoryBytes: "StorageHistoryBytes",
  /** Bytes the run reclaimed: reclaimable before minus reclaimable after. */
  storageReclaimedBytes: "StorageReclaimedBytes",
} as const;

/** Powertools Logger and Metrics for one function; service and namespace come from the environment. */
export function createPowertools(functionName: string): { logger: Logger; metrics: Metrics } {
  const logger = new Logger({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? "lakewarden", persistentKeys: { function: functionName } });
  const metrics = new Metrics({
    namespace: process.env.POWERTOOLS_METRICS_NAMESPACE ?? "Lakewarden",
    serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? "lakewarden",
  });
  return { logger, metrics };
}
