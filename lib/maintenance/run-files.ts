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
 *   {runKey}.intent.files-N  the intent's file list, at most intentPartFiles() keys a part (a
 *                         million-file run never holds its list as one text); written before the
 *                         intent that names them, removed with it.
 * Run keys start with a UTC timestamp, so listing order is chronological order.
 */
import type { ObjectInfo, ObjectStore } from "../store/object-store.ts";
import { NotFoundError } from "../store/errors.ts";
import type { VersionRecord } from "../model/version-record.ts";
import { inChunks, partItemsFromEnvironment } from "./spill.ts";

export { RUNS_PREFIX } from "../model/layout.ts";
import { RUN_INTENT_SUFFIX, RUN_PROGRESS_PREFIX, RUN_RECEIPT_SUFFIX, RUNS_PREFIX, parseCheckpointKey, runIntentKey, runIntentPartKey, runReceiptKey } from "../model/layout.ts";

export const DEFAULT_RECEIPT_RETENTION_MS = 30 * 86_400_000;
export const DEFAULT_RECEIPTS_KEPT = 20;

/** `20261129T145534123Z-1a2b3c4d`: sortable, unique enough with the run id's first 8 characters. */
export function runKey(startedAt: Date, runId: string): string {
  return `${startedAt.toISOString().replace(/[-:.]/g, "")}-${runId.replace(/[^a-zA-Z0-9]/g, "").slice(0, 8)}`;
}

export interface RunFiles {
  receipts: ObjectInfo[];
  intents: ObjectInfo[];
  /** A budget-stopped run's saved progress (run-progress.ts): never receipts, never pruned here. */
  progress: ObjectInfo[];
  /** Parts of intents' file lists whose intent is not there (a run died between writing them and its intent). */
  orphanIntentParts: ObjectInfo[];
}

const INTENT_PART = /\.intent\.json\.files-\d+$/;

export async function listRunFiles(store: ObjectStore): Promise<RunFiles> {
  const receipts: ObjectInfo[] = [];
  const intents: ObjectInfo[] = [];
  const progress: ObjectInfo[] = [];
  const parts: ObjectInfo[] = [];
  for await (const object of store.list(RUNS_PREFIX)) {
    if (object.key.startsWith(RUN_PROGRESS_PREFIX)) progress.push(object);
    else if (object.key.endsWith(RUN_INTENT_SUFFIX)) intents.push(object);
    else if (object.key.endsWith(RUN_RECEIPT_SUFFIX)) receipts.push(object);
    else if (INTENT_PART.test(object.key)) parts.push(object);
  }
  const intentKeys = new Set(intents.map((intent) => intent.key));
  const orphanIntentParts = parts.filter((part) => !intentKeys.has(part.key.replace(/\.files-\d+$/, "")));
  return { receipts, intents, progress, orphanIntentParts };
}

interface IntentBody {
  run_id: string;
  written_at: string;
  removing_versions: VersionRecord[];
  deleting_files: string[];
  /** The modification time (ms) of each of deleting_files, as listed. */
  deleting_files_modified?: number[];
  /** Parts holding the file list instead ({ keys, modified }), for a long one. */
  deleting_file_parts?: string[];
}

interface IntentPart {
  keys: string[];
  modified: number[];
}

/** Files an intent part holds (65,536). */
export function intentPartFiles(): number {
  return partItemsFromEnvironment();
}

/** A file an intent names: its key and its modification time as listed. */
export interface IntentFile {
  key: string;
  lastModifiedMillis: number;
}

/**
 * Writes the intent's file parts, then the intent naming them. Returns every key written, the
 * intent's first. A short list stays inline, as intents always had it; a long one is all in parts.
 */
export async function writeIntent(
  store: ObjectStore,
  key: string,
  runId: string,
  intent: { records: readonly VersionRecord[]; files: Iterable<IntentFile> },
  now: Date,
): Promise<string[]> {
  const parts: string[] = [];
  const writePart = async (files: readonly IntentFile[]) => {
    const part: IntentPart = { keys: files.map((file) => file.key), modified: files.map((file) => file.lastModifiedMillis) };
    const partKey = runIntentPartKey(key, parts.length);
    await store.put(partKey, new TextEncoder().encode(JSON.stringify(part)), { contentType: "application/json" });
    parts.push(partKey);
  };
  // The last chunk is held back: when it is the only one, it goes inline.
  let held: IntentFile[] = [];
  for (const chunk of inChunks(intent.files, intentPartFiles())) {
    if (held.length > 0) await writePart(held);
    held = chunk;
  }
  const inline = parts.length === 0;
  if (!inline && held.length > 0) await writePart(held);
  const body: IntentBody = {
    run_id: runId,
    written_at: now.toISOString(),
    removing_versions: [...intent.records],
    deleting_files: inline ? held.map((file) => file.key) : [],
    ...(inline ? { deleting_files_modified: held.map((file) => file.lastModifiedMillis) } : { deleting_file_parts: parts }),
  };
  const objectKey = runIntentKey(key);
  await store.put(objectKey, new TextEncoder().encode(JSON.stringify(body)), { contentType: "application/json" });
  return [objectKey, ...parts];
}

export interface IntentRead {
  key: string;
  runId: string;
  records: VersionRecord[];
  /** The inline file list (a long one is in `parts`, read by intentFiles). */
  files: IntentFile[];
  /** The intent's file parts: read on demand, removed with it. */
  parts: string[];
}

/** Modification time of a file an intent written before times were kept names: unknown. */
const UNKNOWN_TIME = Number.NaN;

/** Reads intents left by earlier runs; an unreadable one is reported, not fatal (it only adds history). */
export async function readIntents(store: ObjectStore, intents: readonly ObjectInfo[]): Promise<{ read: IntentRead[]; problems: string[] }> {
  const read: IntentRead[] = [];
  const problems: string[] = [];
  for (const object of intents) {
    try {
      const { body } = await store.get(object.key);
      const parsed = JSON.parse(new TextDecoder().decode(body)) as Partial<IntentBody>;
      if (!Array.isArray(parsed.removing_versions)) throw new Error("no removing_versions array");
      const keys = Array.isArray(parsed.deleting_files) ? parsed.deleting_files : [];
      const modified = Array.isArray(parsed.deleting_files_modified) ? parsed.deleting_files_modified : [];
      const files: IntentFile[] = [];
      keys.forEach((file, i) => {
        if (typeof file === "string") files.push({ key: file, lastModifiedMillis: typeof modified[i] === "number" ? modified[i]! : UNKNOWN_TIME });
      });
      const parts = Array.isArray(parsed.deleting_file_parts)
        ? parsed.deleting_file_parts.filter((p): p is string => typeof p === "string" && p.startsWith(`${object.key}.files-`))
        : [];
      read.push({ key: object.key, runId: String(parsed.run_id ?? "unknown"), records: parsed.removing_versions.filter(isVersionRecord), files, parts });
    } catch (error) {
      if (error instanceof NotFoundError) continue;
      problems.push(`${store.uriOf(object.key)}: unreadable run intent, ignored: ${(error as Error).message}`);
    }
  }
  return { read, problems };
}

/** Every file an intent names, its parts read one at a time. */
export async function* intentFiles(store: ObjectStore, intent: IntentRead): AsyncIterable<IntentFile> {
  yield* intent.files;
  for (const key of intent.parts) {
    const part = JSON.parse(new TextDecoder().decode((await store.get(key)).body)) as Partial<IntentPart>;
    if (!Array.isArray(part.keys) || !Array.isArray(part.modified)) throw new Error(`${store.uriOf(key)}: not a part of a run intent's file list`);
    for (let i = 0; i < part.keys.length; i++) {
      const file = part.keys[i];
      if (typeof file === "string") yield { key: file, lastModifiedMillis: typeof part.modified[i] === "number" ? part.modified[i]! : UNKNOWN_TIME };
    }
  }
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
  const objectKey = runReceiptKey(key);
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
  return newestFirst.filter((object, rank) => rank >= keepNewest && now.getTime() - object.lastModified.getTime() > maxAge).map((object) => object.key);
}

/** Receipts read at most, newest first, to find the checkpoint the last archiving run left. */
const RECEIPTS_READ_FOR_CHECKPOINT = 5;

/**
 * The checkpoint the newest receipts say their run left, when it is gone and no checkpoint of its
 * version or newer took its place: deleted outright, with nothing else naming it. Without this the
 * load falls back to an older checkpoint and the next archive writes over the lost history with
 * fewer rows; with it, the archive sets it aside (a note under `_lakewarden/damaged/`) and the
 * checkpoint it writes remembers it, so `versions` says which versions may be missing. Reads at
 * most a few receipts (a GET each); a receipt that does not read is passed over, never an error.
 */
export async function checkpointMissingPerReceipts(
  store: ObjectStore,
  receipts: readonly ObjectInfo[],
  checkpoints: readonly { key: string; version: number }[],
): Promise<{ key: string; problem: string } | null> {
  const newestFirst = [...receipts].sort((a, b) => (a.key < b.key ? 1 : a.key > b.key ? -1 : 0)).slice(0, RECEIPTS_READ_FOR_CHECKPOINT);
  for (const receipt of newestFirst) {
    let named: unknown;
    try {
      named = (JSON.parse(new TextDecoder().decode((await store.get(receipt.key)).body)) as { checkpoint?: { key?: unknown } | null }).checkpoint?.key;
    } catch (error) {
      if (error instanceof NotFoundError || error instanceof SyntaxError) continue;
      throw error;
    }
    if (typeof named !== "string") continue;
    const version = parseCheckpointKey(named);
    if (version === null) continue;
    if (checkpoints.some((file) => file.key === named || file.version >= version)) return null;
    return {
      key: named,
      problem: `${store.uriOf(named)}: missing, though run ${receipt.key.slice(RUNS_PREFIX.length, -RUN_RECEIPT_SUFFIX.length)} wrote it and no newer checkpoint replaced it`,
    };
  }
  return null;
}
