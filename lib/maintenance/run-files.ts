/**
 * lakewarden's per-run files under `_lakewarden/runs/`:
 *   {runKey}.json         the receipt of a run (kept for a retention period of its own);
 *   {runKey}.intent.json  written before a run's first delete: the records of the versions it is
 *                         about to remove and the files it is about to delete. Removed once a
 *                         checkpoint holds those versions and every delete succeeded. A run that
 *                         dies half way leaves it behind; the next run archives the versions from
 *                         it (history survives a crash at any step) and takes its file list as
 *                         proof that those files were committed (so it deletes them at once,
 *                         without waiting out the safety window).
 * Run keys start with a UTC timestamp, so listing order is chronological order.
 */
import type { ObjectInfo, ObjectStore } from "../store/object-store.ts";
import { NotFoundError } from "../store/errors.ts";
import type { VersionRecord } from "../model/version-record.ts";

export { RUNS_PREFIX } from "../model/layout.ts";
import { RUNS_PREFIX, RUN_PROGRESS_PREFIX } from "../model/layout.ts";
const INTENT_SUFFIX = ".intent.json";
const RECEIPT_SUFFIX = ".json";

export const DEFAULT_RECEIPT_RETENTION_MS = 30 * 86_400_000;
export const DEFAULT_RECEIPTS_KEPT = 20;

/** `20261129T145534123Z-1a2b3c4d`: sortable, unique enough with the run id's first 8 characters. */
export function runKey(startedAt: Date, runId: string): string {
  return `${startedAt.toISOString().replace(/[-:.]/g, "")}-${runId.replace(/[^a-zA-Z0-9]/g, "").slice(0, 8)}`;
}

function receiptKey(key: string): string {
  return `${RUNS_PREFIX}${key}${RECEIPT_SUFFIX}`;
}

function intentKey(key: string): string {
  return `${RUNS_PREFIX}${key}${INTENT_SUFFIX}`;
}

export interface RunFiles {
  receipts: ObjectInfo[];
  intents: ObjectInfo[];
  /** A budget-stopped run's saved progress (run-progress.ts): never receipts, never pruned here. */
  progress: ObjectInfo[];
}

export async function listRunFiles(store: ObjectStore): Promise<RunFiles> {
  const receipts: ObjectInfo[] = [];
  const intents: ObjectInfo[] = [];
  const progress: ObjectInfo[] = [];
  for await (const object of store.list(RUNS_PREFIX)) {
    if (object.key.startsWith(RUN_PROGRESS_PREFIX)) progress.push(object);
    else if (object.key.endsWith(INTENT_SUFFIX)) intents.push(object);
    else if (object.key.endsWith(RECEIPT_SUFFIX)) receipts.push(object);
  }
  return { receipts, intents, progress };
}

interface IntentBody {
  run_id: string;
  written_at: string;
  removing_versions: VersionRecord[];
  deleting_files: string[];
}

export async function writeIntent(
  store: ObjectStore,
  key: string,
  runId: string,
  intent: { records: readonly VersionRecord[]; files: readonly string[] },
  now: Date,
): Promise<string> {
  const body: IntentBody = {
    run_id: runId,
    written_at: now.toISOString(),
    removing_versions: [...intent.records],
    deleting_files: [...intent.files],
  };
  const objectKey = intentKey(key);
  await store.put(objectKey, new TextEncoder().encode(JSON.stringify(body)), { contentType: "application/json" });
  return objectKey;
}

export interface IntentRead {
  key: string;
  runId: string;
  records: VersionRecord[];
  files: string[];
}

/** Reads intents left by earlier runs; an unreadable one is reported, not fatal (it only adds history). */
export async function readIntents(store: ObjectStore, intents: readonly ObjectInfo[]): Promise<{ read: IntentRead[]; problems: string[] }> {
  const read: IntentRead[] = [];
  const problems: string[] = [];
  for (const object of intents) {
    try {
      const { body } = await store.get(object.key);
      const parsed = JSON.parse(new TextDecoder().decode(body)) as Partial<IntentBody>;
      if (!Array.isArray(parsed.removing_versions)) throw new Error("no removing_versions array");
      read.push({
        key: object.key,
        runId: String(parsed.run_id ?? "unknown"),
        records: parsed.removing_versions.filter(isVersionRecord),
        files: Array.isArray(parsed.deleting_files) ? parsed.deleting_files.filter((f): f is string => typeof f === "string") : [],
      });
    } catch (error) {
      if (error instanceof NotFoundError) continue;
      problems.push(`${store.uriOf(object.key)}: unreadable run intent, ignored: ${(error as Error).message}`);
    }
  }
  return { read, problems };
}

function isVersionRecord(value: unknown): value is VersionRecord {
  const record = value as Partial<VersionRecord> | null;
  return (
    record !== null &&
    typeof record === "object" &&
    Number.isSafeInteger(record.version) &&
    Number.isSafeInteger(record.timestamp_millis) &&
    typeof record.transaction_properties === "object"
  );
}

export async function writeReceipt(store: ObjectStore, key: string, receipt: unknown): Promise<string> {
  const objectKey = receiptKey(key);
  await store.put(objectKey, new TextEncoder().encode(`${JSON.stringify(receipt, null, 2)}\n`), { contentType: "application/json" });
  return objectKey;
}

export interface ReceiptRetention {
  /** Receipts older than this go (default 30 days)... */
  maxAgeMs?: number;
  /** ...except the newest this many, always kept (default 20). */
  keepNewest?: number;
}

/** Receipts to delete under the retention; intents are never pruned here. */
export function expiredReceipts(receipts: readonly ObjectInfo[], retention: ReceiptRetention, now: Date): string[] {
  const maxAge = retention.maxAgeMs ?? DEFAULT_RECEIPT_RETENTION_MS;
  const keepNewest = retention.keepNewest ?? DEFAULT_RECEIPTS_KEPT;
  const newestFirst = [...receipts].sort((a, b) => (a.key < b.key ? 1 : a.key > b.key ? -1 : 0));
  return newestFirst
    .filter((object, rank) => rank >= keepNewest && now.getTime() - object.lastModified.getTime() > maxAge)
    .map((object) => object.key);
}
