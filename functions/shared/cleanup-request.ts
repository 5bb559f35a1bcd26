/** The message schedule-cleanup sends and cleanup-table receives: one table to clean. */
import { createHash } from "node:crypto";

export interface CleanupRequest {
  /** The table's URI: `s3://bucket/lake/orders.lance`. */
  table: string;
  /** When the schedule asked, for the logs. */
  requestedAt: string;
  /**
   * 0 (or absent) for a scheduled request; n for the n-th continuation a budget-stopped run sent
   * for the same table. The chain ends at the continuation cap (LAKEWARDEN_MAX_CONTINUATIONS).
   */
  continuation?: number;
  /** The chain of runs a continuation belongs to (the report's budget.chain_id). */
  chain?: string;
}

export class InvalidCleanupRequestError extends Error {
  constructor(source: string, problem: string) {
    super(`${source}: ${problem}`);
    this.name = "InvalidCleanupRequestError";
  }
}

export function encodeCleanupRequest(request: CleanupRequest): string {
  return JSON.stringify(request);
}

export function parseCleanupRequest(body: string, source: string): CleanupRequest {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    throw new InvalidCleanupRequestError(source, "body is not JSON");
  }
  if (typeof value !== "object" || value === null || typeof (value as CleanupRequest).table !== "string" || (value as CleanupRequest).table === "") {
    throw new InvalidCleanupRequestError(source, 'body is not a cleanup request ({"table": "s3://..."} expected)');
  }
  const { table, requestedAt, continuation, chain } = value as CleanupRequest;
  return {
    table,
    requestedAt: typeof requestedAt === "string" ? requestedAt : "",
    ...(Number.isSafeInteger(continuation) && continuation! > 0 ? { continuation } : {}),
    ...(typeof chain === "string" && chain !== "" ? { chain } : {}),
  };
}

/**
 * FIFO message attributes for a cleanup request: the table is the message group, so SQS hands
 * out one message per table at a time (a continuation becomes visible only once the message of
 * the run that sent it is acknowledged): one cleaner per table without relying on the lease
 * alone. Group ids are a hash (S3 URIs can exceed 128 characters); deduplication by content.
 */
export function fifoAttributesOf(body: string): { MessageGroupId: string; MessageDeduplicationId: string } {
  const { table } = parseCleanupRequest(body, "cleanup request");
  return { MessageGroupId: sha256(table), MessageDeduplicationId: sha256(body) };
}

function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}
