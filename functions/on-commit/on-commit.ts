/**
 * on-commit: an SQS batch of S3 object-created events for version files → the head of every
 * table they name, written for its newest version → a partial batch response failing exactly
 * the messages that named a table whose head could not be written.
 *
 * Events arrive late, twice and out of order: grouping keeps the newest version per table and
 * the head writer never moves a head back, so none of that matters. The S3 test event, keys
 * that are not version files and tables outside this deployment's scopes are acknowledged and
 * logged, never retried. A body that is not an S3 event fails its message, which SQS then
 * retries and finally moves to the dead-letter queue.
 *
 * A table named in LAKEWARDEN_GLUE_TABLES or LAKEWARDEN_CATALOG_TABLES gets the head of the
 * metadata file its catalog names now (Glue's GetTable, the REST protocol's loadTable; never
 * cached), not of the file an event names (catalog-head.ts). An entry that cannot be used (not
 * found, access denied, credentials unreadable, not Iceberg, a pointer outside the table root) is
 * a failed head write: no head, one line, HeadWriteFailures, the messages retried. An Iceberg table
 * whose metadata files are all catalog-named but that no catalog setting names gets no head either
 * (its newest file may be a commit the catalog refused): one warning, the messages acknowledged,
 * since a retry cannot succeed until the deployment names the catalog.
 */
import { BranchLocationError, CatalogPointerRequiredError, NoVersionYetError } from "../../lib/formats/errors.ts";
import { BatchProcessor, EventType, processPartialResponse } from "@aws-lambda-powertools/batch";
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import type { TableFormat } from "../../lib/formats/table-format.ts";
import { groupCommitsByTable, parseCommitKey, type Commit, type TableCommits } from "../../lib/follow/commits.ts";
import { mapConcurrent } from "../../lib/store/map-concurrent.ts";
import { headWasWritten, writeHeadForCommit } from "../../lib/follow/write-head-for-commit.ts";
import { errorSummary } from "../../lib/store/errors.ts";
import type { ObjectStore } from "../../lib/store/object-store.ts";
import type { TableCatalog } from "../../lib/formats/catalog-commit.ts";
import type { WriteTableHeadOptions, WriteTableHeadResult } from "../../lib/head/write-table-head.ts";
import { METRIC, MetricUnit, type HandlerLog, type HandlerMetrics } from "../shared/observability.ts";
import { parseS3Notification } from "../shared/s3-event.ts";
import { isInScope, type TableScopes } from "../shared/table-scopes.ts";
import type { TableCatalogs } from "../shared/catalog-tables.ts";
import { DEFAULT_CATALOG_WAIT_MS, writeHeadAtCatalogPointer } from "./catalog-head.ts";

export interface OnCommitDependencies {
  scopes: TableScopes;
  /** The formats whose commits the handler follows (default: every registered format). */
  formats?: readonly TableFormat[];
  openStore(uri: string): ObjectStore;
  /** Head settings for every table (codec, inline budget); unset ones come from each table's config. */
  headOptions?: Pick<WriteTableHeadOptions, "codec" | "inlineBudgetBytes">;
  /** Tables whose heads are written at once (default 4). */
  concurrency?: number;
  /** The catalog owning a table's pointer (LAKEWARDEN_GLUE_TABLES, LAKEWARDEN_CATALOG_TABLES), or null. */
  catalogs?: TableCatalogs;
  /** How long a notified file newer than the catalog's pointer may take to become it (default 20 s from its creation). */
  catalogWaitMs?: number;
  log: HandlerLog;
  metrics: HandlerMetrics;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

type TableUri = string;
type MessageId = string;

/** What one SQS message asks for: the tables it names, or why it cannot be read. */
type ParsedMessage = { tables: TableUri[] } | { error: Error };

export function createOnCommitHandler(deps: OnCommitDependencies): (event: SQSEvent, context?: Context) => Promise<SQSBatchResponse> {
  const now = deps.now ?? Date.now;
  return async (event, context) => {
    const { messages, commits, notified } = parseMessages(event.Records, deps);
    const failedTables = writeHeads(groupCommitsByTable(commits), notified, deps, now);
    const processor = new BatchProcessor(EventType.SQS);
    return processPartialResponse(
      event,
      async (record: SQSRecord) => {
        const message = messages.get(record.messageId);
        if (message === undefined || "error" in message) throw message?.error ?? new Error(`SQS message ${record.messageId} was not parsed`);
        const failed = await failedTables;
        const failures = message.tables.filter((table) => failed.has(table));
        if (failures.length > 0) throw new Error(`head not written for ${failures.map((t) => `${t} (${failed.get(t)})`).join(", ")}`);
      },
      processor,
      // A batch whose every record failed is reported like any partial failure; the DLQ alarm is the signal.
      { ...(context ? { context } : {}), throwOnFullBatchFailure: false },
    );
  };
}

/** Per table, the commit files the events named (keys under the root) and when each was created. */
type NotifiedFiles = Map<TableUri, Map<string, Date | undefined>>;

function parseMessages(
  records: readonly SQSRecord[],
  deps: OnCommitDependencies,
): { messages: Map<MessageId, ParsedMessage>; commits: Commit<MessageId>[]; notified: NotifiedFiles } {
  const messages = new Map<MessageId, ParsedMessage>();
  const commits: Commit<MessageId>[] = [];
  const notified: NotifiedFiles = new Map();
  for (const record of records) {
    const source = `SQS message ${record.messageId}`;
    let notification;
    try {
      notification = parseS3Notification(record.body, source);
    } catch (error) {
      deps.log.error("unreadable commit event", { messageId: record.messageId, error: (error as Error).message });
      messages.set(record.messageId, { error: error as Error });
      continue;
    }
    const tables = new Set<TableUri>();
    if (notification.kind === "test") {
      deps.log.info("S3 test event ignored", { messageId: record.messageId, bucket: notification.bucket });
      deps.metrics.addMetric(METRIC.eventsIgnored, MetricUnit.Count, 1);
    } else {
      for (const object of notification.objects) {
        const uri = `s3://${object.bucket}/${object.key}`;
        const commit = object.eventName.startsWith("ObjectCreated:") ? parseCommitKey(object.key, deps.formats) : null;
        const table = commit && (commit.tableRoot === "" ? `s3://${object.bucket}` : `s3://${object.bucket}/${commit.tableRoot}`);
        if (commit === null || table === null) {
          deps.log.info("event ignored: not a new version file", { messageId: record.messageId, object: uri, eventName: object.eventName });
          deps.metrics.addMetric(METRIC.eventsIgnored, MetricUnit.Count, 1);
        } else if (!isInScope(table, deps.scopes)) {
          deps.log.warn("event ignored: table outside this deployment's tables", { messageId: record.messageId, table, version: commit.version });
          deps.metrics.addMetric(METRIC.eventsIgnored, MetricUnit.Count, 1);
        } else {
          tables.add(table);
          commits.push({ table, version: commit.version, committedAt: object.eventTime, source: record.messageId, format: commit.format });
          let files = notified.get(table);
          if (!files) notified.set(table, (files = new Map()));
          files.set(commit.versionKey, object.eventTime);
        }
      }
    }
    messages.set(record.messageId, { tables: [...tables] });
  }
  return { messages, commits, notified };
}

const CATALOG_NOT_CONFIGURED = "catalog-owned table with no catalog configured: no head";

/** Writes every table's head; resolves to the tables that failed, with the reason. Never rejects. */
async function writeHeads(groups: TableCommits<MessageId>[], notified: NotifiedFiles, deps: OnCommitDependencies, now: () => number): Promise<Map<TableUri, string>> {
  const failed = new Map<TableUri, string>();
  await mapConcurrent(groups, deps.concurrency ?? 4, async (group) => {
    const attributes = { table: group.table, version: group.newestVersion, messages: group.sources.length };
    try {
      const catalog = await deps.catalogs?.catalogOf(group.table);
      if (catalog) {
        await writeCatalogHead(group, catalog, notified.get(group.table) ?? new Map(), deps, now);
        return;
      }
      const result = await writeHeadForCommit(deps.openStore(group.table), group.newestVersion, {
        ...deps.headOptions,
        ...(group.format ? { format: group.format } : {}),
      });
      reportHead(
        result,
        group.newestCommittedAt,
        { ...attributes, ...(result.notifiedVersionGone ? { notifiedVersion: group.newestVersion, notifiedVersionGone: true } : {}) },
        deps,
        now,
      );
    } catch (error) {
      if (error instanceof BranchLocationError) {
        // A commit on a branch: its table's head is written from the root's own commits.
        deps.log.info("commit to a branch folder: no head", { ...attributes, reason: error.message });
        return;
      }
      if (error instanceof NoVersionYetError) {
        // A table just created (Iceberg without a snapshot): its first commit writes the head.
        deps.log.info("table with no version yet: no head", { ...attributes, reason: error.message });
        return;
      }
      if (error instanceof CatalogPointerRequiredError) {
        // Only its catalog can say which commit is current, and the deployment names none for it:
        // every retry would be refused the same way, so the messages are acknowledged, not dead-lettered.
        deps.log.warn(CATALOG_NOT_CONFIGURED, { ...attributes, reason: error.message });
        return;
      }
      const reason = errorSummary(error);
      failed.set(group.table, reason);
      deps.log.error("head not written", { ...attributes, error: reason });
      deps.metrics.addMetric(METRIC.headWriteFailures, MetricUnit.Count, 1);
    }
  });
  return failed;
}

const NOT_CATALOG_CURRENT = "not the catalog's current metadata: the head follows the catalog's pointer";

/** The head of a catalog-owned table, at the metadata file its catalog names now; throws as a failed head write. */
async function writeCatalogHead(
  group: TableCommits<MessageId>,
  catalog: TableCatalog,
  files: ReadonlyMap<string, Date | undefined>,
  deps: OnCommitDependencies,
  now: () => number,
): Promise<void> {
  const store = deps.openStore(group.table);
  const done = await writeHeadAtCatalogPointer({
    store,
    catalog,
    notified: files,
    ...(deps.headOptions ? { headOptions: deps.headOptions } : {}),
    waitMs: deps.catalogWaitMs ?? DEFAULT_CATALOG_WAIT_MS,
    now,
    sleep: deps.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms))),
  });
  const { result } = done;
  const attributes = { table: group.table, messages: group.sources.length, catalogTable: done.catalogTable, pointer: done.pointer };
  for (const file of done.elsewhere) {
    // A newer one is a commit the catalog did not take (a failed or racing writer); an older one, a late event.
    const line = { ...attributes, object: store.uriOf(file.key), newerThanCatalog: file.newer, ...(done.lookups > 1 ? { lookups: done.lookups } : {}) };
    if (file.newer) deps.log.warn(NOT_CATALOG_CURRENT, line);
    else deps.log.info(NOT_CATALOG_CURRENT, line);
  }
  // The lag is the catalog's file's own, when an event named it.
  reportHead(result, files.get(done.key), attributes, deps, now);
}

/** One log line and the metrics for a head write: written or already current, and the commit-to-head lag. */
function reportHead(result: WriteTableHeadResult, committedAt: Date | undefined, attributes: Record<string, unknown>, deps: OnCommitDependencies, now: () => number): void {
  const written = headWasWritten(result);
  const lagMs = committedAt ? Math.max(0, now() - committedAt.getTime()) : undefined;
  deps.log.info(written ? "head written" : "head already current", {
    ...attributes,
    version: result.version,
    action: result.action,
    storedVersion: result.storedVersion,
    bytes: result.bytes,
    ...(lagMs !== undefined ? { lagMs } : {}),
  });
  deps.metrics.addMetric(written ? METRIC.headsWritten : METRIC.headsAlreadyCurrent, MetricUnit.Count, 1);
  if (written && lagMs !== undefined) deps.metrics.addMetric(METRIC.commitToHeadLag, MetricUnit.Milliseconds, lagMs);
}
