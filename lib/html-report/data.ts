/**
 * What the HTML report shows, gathered from the store: the whole version history (checkpoint,
 * archive, head, newer manifests: readHistory), the refs, the reader pins, the protection
 * boundary the table's settings declare, and the cleanup receipts under `_lakewarden/runs/`.
 * Format-neutral: everything comes from the model's records and lakewarden's own files.
 */
import { readHistory } from "../head/timeline-source.ts";
import type { HistoryProblem } from "../checkpoint/damaged.ts";
import type { TableFormat } from "../formats/table-format.ts";
import type { VersionRecord } from "../model/version-record.ts";
import type { ObjectStore, RequestCounts } from "../store/object-store.ts";
import { NotFoundError } from "../store/errors.ts";
import { readPins } from "../pins/pins.ts";
import type { PinRecord } from "../pins/pins.ts";
import { listRunFiles } from "../maintenance/run-files.ts";
import { readStoredConfig } from "../maintenance/stored-config.ts";
import type { StorageParts } from "../maintenance/storage-parts.ts";
import { mapConcurrent } from "../store/map-concurrent.ts";

/** The fields of a version the report draws. */
export type ReportVersion = Pick<VersionRecord, "version" | "version_id" | "timestamp_millis" | "total_rows" | "total_files_size" | "operation_type" | "is_cleaned_up" | "branch">;

export interface ReportRun {
  run_id: string;
  started_at: string;
  status: string;
  dry_run: boolean;
  versions_removed: number;
  bytes_removed: number;
  files_removed: number;
  requests: RequestCounts;
  storage: { before: StorageParts; after: StorageParts } | null;
  /** The history protection boundary the run's policy had (null: none). */
  protect_before: number | null;
}

export interface ReportData {
  table: string;
  format: string;
  generated_at: string;
  /** Ascending by version. */
  versions: ReportVersion[];
  tags: { name: string; version: number }[];
  pins: PinRecord[];
  /** History protection boundary from the table's settings (stored config or table config), or null. */
  protect_before: number | null;
  /** Ascending by start time. */
  runs: ReportRun[];
  /** Files of lakewarden's own history that could not be read, with the versions they covered (as `versions` reports them). */
  history_problems: HistoryProblem[];
  warnings: string[];
}

export interface CollectOptions {
  format?: TableFormat;
  now?: Date;
}

export async function collectReportData(store: ObjectStore, options: CollectOptions = {}): Promise<ReportData> {
  const now = options.now ?? new Date();
  const [history, pins, runFiles, storedConfig] = await Promise.all([
    readHistory(store, options.format ? { format: options.format } : {}),
    readPins(store, now),
    listRunFiles(store),
    readStoredConfig(store),
  ]);
  const warnings = [...pins.problems];
  const runs = (
    await mapConcurrent(runFiles.receipts, 8, async (object) => {
      try {
        return runOf(JSON.parse(new TextDecoder().decode((await store.get(object.key)).body)));
      } catch (error) {
        if (!(error instanceof NotFoundError)) warnings.push(`${store.uriOf(object.key)}: unreadable receipt, left out: ${(error as Error).message}`);
        return null;
      }
    })
  ).filter((run): run is ReportRun => run !== null);
  runs.sort((a, b) => a.started_at.localeCompare(b.started_at));
  const boundaryText = storedConfig["lakewarden.protect_before"] ?? null;
  const boundary = boundaryText !== null && /^\d+$/.test(boundaryText) ? Number(boundaryText) : null;
  return {
    table: store.uri,
    format: history.format.name,
    generated_at: now.toISOString(),
    versions: history.records.map(pick),
    tags: history.refs.tags.filter((t) => t.branch === null).map((t) => ({ name: t.name, version: t.version })),
    pins: pins.active,
    protect_before: boundary ?? runs.findLast((run) => run.protect_before !== null)?.protect_before ?? null,
    runs,
    history_problems: history.historyProblems,
    warnings,
  };
}

function pick(record: VersionRecord): ReportVersion {
  return {
    version: record.version,
    version_id: record.version_id,
    timestamp_millis: record.timestamp_millis,
    total_rows: record.total_rows,
    total_files_size: record.total_files_size,
    operation_type: record.operation_type,
    is_cleaned_up: record.is_cleaned_up,
    branch: record.branch,
  };
}

function runOf(receipt: Record<string, unknown>): ReportRun | null {
  if (typeof receipt.started_at !== "string") return null;
  const filesRemoved =
    receipt.files_removed && typeof receipt.files_removed === "object"
      ? Object.values(receipt.files_removed as Record<string, { files?: number }>).reduce((s, t) => s + (t?.files ?? 0), 0)
      : 0;
  const policy = receipt.policy as { protect_before?: { value?: unknown } } | null | undefined;
  const storage = receipt.storage as ReportRun["storage"] | undefined;
  const run: ReportRun = {
    run_id: String(receipt.run_id ?? ""),
    started_at: receipt.started_at,
    status: String(receipt.status ?? "unknown"),
    dry_run: Boolean(receipt.dry_run),
    versions_removed: Array.isArray(receipt.versions_removed) ? receipt.versions_removed.length : 0,
    bytes_removed: typeof receipt.bytes_removed === "number" ? receipt.bytes_removed : 0,
    files_removed: filesRemoved,
    requests: { get: 0, head: 0, list: 0, put: 0, delete: 0, ...(receipt.requests as Partial<RequestCounts> | undefined) },
    storage: storage && storage.before && storage.after ? { before: storage.before, after: storage.after } : null,
    protect_before: typeof policy?.protect_before?.value === "number" ? policy.protect_before.value : null,
  };
  return run;
}
