/** The message schedule-cleanup sends and cleanup-table receives: one table to clean. */

export interface CleanupRequest {
  /** The table's URI: `s3://bucket/lake/orders.lance`. */
  table: string;
  /** When the schedule asked, for the logs. */
  requestedAt: string;
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
  const { table, requestedAt } = value as CleanupRequest;
  return { table, requestedAt: typeof requestedAt === "string" ? requestedAt : "" };
}
