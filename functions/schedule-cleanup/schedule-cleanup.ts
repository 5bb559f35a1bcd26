/**
 * schedule-cleanup: on each EventBridge tick, one cleanup request per table on the cleanup
 * queue. Tables are the configured URIs plus those discovered under the configured prefixes.
 * Duplicate requests are harmless (cleanup-table runs under the table's lease and is
 * idempotent), so a failed tick is simply retried by EventBridge.
 */
import type { TableFormat } from "../../lib/formats/table-format.ts";
import { discoverTables } from "../../lib/follow/discover-tables.ts";
import { errorSummary } from "../../lib/store/errors.ts";
import type { ObjectStore } from "../../lib/store/object-store.ts";
import { encodeCleanupRequest } from "../shared/cleanup-request.ts";
import { METRIC, MetricUnit, type HandlerLog, type HandlerMetrics } from "../shared/observability.ts";
import { isInScope, type TableScopes } from "../shared/table-scopes.ts";

export interface ScheduleCleanupDependencies {
  scopes: TableScopes;
  /** The version folders that make a folder a table (every registered format's). */
  formats: readonly Pick<TableFormat, "versionsPrefix">[];
  discoveryDepth: number;
  openStore(uri: string): ObjectStore;
  /** Puts the message bodies on the cleanup queue; throws if any was not accepted. */
  enqueue(bodies: string[]): Promise<void>;
  log: HandlerLog;
  metrics: HandlerMetrics;
  now?: () => Date;
}

export interface ScheduleCleanupResult {
  tables: string[];
  /** Prefixes whose discovery failed; their tables wait for the next tick. */
  failedPrefixes: string[];
}

export class DiscoveryFailedError extends Error {
  constructor(prefixes: string[]) {
    super(`table discovery failed under ${prefixes.join(", ")}; the other tables were enqueued`);
    this.name = "DiscoveryFailedError";
  }
}

export function createScheduleCleanupHandler(deps: ScheduleCleanupDependencies): (event?: unknown) => Promise<ScheduleCleanupResult> {
  return async () => {
    const tables = new Set(deps.scopes.tables);
    const failedPrefixes: string[] = [];
    for (const prefixUri of deps.scopes.prefixes) {
      const store = deps.openStore(prefixUri);
      try {
        const roots = await discoverTables(store, deps.formats, { maxDepth: deps.discoveryDepth });
        const skipped: string[] = [];
        for (const root of roots) {
          const uri = root === "" ? store.uri : store.scope(root).uri;
          // A table outside the deployment's table roots: IAM lets its cleanup change nothing.
          if (isInScope(uri, deps.scopes)) tables.add(uri);
          else skipped.push(uri);
        }
        deps.log.info("tables discovered", { prefix: prefixUri, tables: roots.length });
        if (skipped.length > 0) deps.log.warn("tables outside the configured table roots skipped", { prefix: prefixUri, tables: skipped });
      } catch (error) {
        failedPrefixes.push(prefixUri);
        deps.log.error("table discovery failed", { prefix: prefixUri, error: errorSummary(error) });
      }
    }
    const requestedAt = (deps.now?.() ?? new Date()).toISOString();
    const sorted = [...tables].sort();
    await deps.enqueue(sorted.map((table) => encodeCleanupRequest({ table, requestedAt })));
    deps.metrics.addMetric(METRIC.tablesEnqueued, MetricUnit.Count, sorted.length);
    deps.log.info("cleanup requested", { tables: sorted });
    if (failedPrefixes.length > 0) throw new DiscoveryFailedError(failedPrefixes);
    return { tables: sorted, failedPrefixes };
  };
}
