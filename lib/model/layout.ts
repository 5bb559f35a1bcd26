/**
 * Every key lakewarden writes, relative to a table root, in one place: the fixed keys, the
 * folders, and how a name inside each folder is made (and read back). Everything of ours lives
 * under `_lakewarden/`: the leading underscore keeps Lance cleanup, Delta VACUUM and Iceberg
 * orphan removal away from it, and we never write inside a format's own folders.
 */
export const LAKEWARDEN_PREFIX = "_lakewarden/";
/** The head object: the table's current state in one GET. */
export const HEAD_KEY = `${LAKEWARDEN_PREFIX}head`;
/** The cleanup lease: one cleaner per table at a time. */
export const LEASE_KEY = `${LAKEWARDEN_PREFIX}lease`;
/** The table's cleanup settings as `lakewarden config set` stores them (JSON). */
export const STORED_CONFIG_KEY = `${LAKEWARDEN_PREFIX}config`;
/** Per-run intents and receipts (lib/maintenance/run-files.ts says what each holds). */
export const RUNS_PREFIX = `${LAKEWARDEN_PREFIX}runs/`;
export const RUN_INTENT_SUFFIX = ".intent.json";
export const RUN_RECEIPT_SUFFIX = ".json";

/** `_lakewarden/runs/{runKey}.json`: a run's receipt. */
export function runReceiptKey(runKey: string): string {
  return `${RUNS_PREFIX}${runKey}${RUN_RECEIPT_SUFFIX}`;
}

/** `_lakewarden/runs/{runKey}.intent.json`: what a run is about to remove, written before its first delete. */
export function runIntentKey(runKey: string): string {
  return `${RUNS_PREFIX}${runKey}${RUN_INTENT_SUFFIX}`;
}

/** `_lakewarden/runs/{runKey}.intent.files-{part}`: one part of an intent's file list. */
export function runIntentPartKey(runKey: string, part: number): string {
  return `${runIntentKey(runKey)}.files-${part}`;
}

/**
 * A budget-stopped cleanup's saved progress (the version files it read, the listing up to its
 * cursor, the keys it deleted), so the next run resumes instead of starting over: `progress.json`
 * names the segment files beside it. Removed when a run completes.
 */
export const RUN_PROGRESS_PREFIX = `${RUNS_PREFIX}progress/`;
export const RUN_PROGRESS_KEY = `${RUN_PROGRESS_PREFIX}progress.json`;

/** `_lakewarden/runs/progress/{runKey}.{kind}.json`: one segment of a stopped run's saved progress. */
export function runProgressSegmentKey(runKey: string, kind: string): string {
  return `${RUN_PROGRESS_PREFIX}${runKey}.${kind}.json`;
}

/**
 * Version checkpoints, `{version:020}.arrow`: the zero-padded name makes a plain ascending
 * listing list them oldest first, on every store.
 */
export const CHECKPOINTS_PREFIX = `${LAKEWARDEN_PREFIX}checkpoints/`;
const CHECKPOINT_NAME = /^(\d{20})\.arrow$/;

/** The key of the checkpoint covering history up to and including `version`. */
export function checkpointKey(version: number): string {
  if (!Number.isSafeInteger(version) || version < 0) throw new RangeError(`not a table version: ${version}`);
  return `${CHECKPOINTS_PREFIX}${String(version).padStart(20, "0")}.arrow`;
}

/** The version a checkpoint key names, or null for any other key (temp files, foreign files). */
export function parseCheckpointKey(key: string): number | null {
  if (!key.startsWith(CHECKPOINTS_PREFIX)) return null;
  const match = CHECKPOINT_NAME.exec(key.slice(CHECKPOINTS_PREFIX.length));
  if (!match) return null;
  const version = Number(match[1]);
  return Number.isSafeInteger(version) ? version : null;
}

/** History rows a checkpoint could no longer hold, `{first:020}-{last:020}.arrow`, never pruned. */
export const ARCHIVE_PREFIX = `${LAKEWARDEN_PREFIX}archive/`;
const SEGMENT_NAME = /^(\d{20})-(\d{20})\.arrow$/;

/** An archive segment: its key and the versions it holds (`first` to `last`). */
export interface SegmentFile {
  key: string;
  first: number;
  last: number;
}

export function segmentKey(first: number, last: number): string {
  return `${ARCHIVE_PREFIX}${String(first).padStart(20, "0")}-${String(last).padStart(20, "0")}.arrow`;
}

export function parseSegmentKey(key: string): SegmentFile | null {
  if (!key.startsWith(ARCHIVE_PREFIX)) return null;
  const match = SEGMENT_NAME.exec(key.slice(ARCHIVE_PREFIX.length));
  if (!match) return null;
  const first = Number(match[1]);
  const last = Number(match[2]);
  return Number.isSafeInteger(first) && Number.isSafeInteger(last) && first <= last ? { key, first, last } : null;
}

/** The table's detected format, written once, so later runs need not detect it again. */
export const FORMAT_PIN_KEY = `${LAKEWARDEN_PREFIX}format`;
/** Reader pins, `{id}.json`: a version (and every file it needs) kept until the pin expires. */
export const PINS_PREFIX = `${LAKEWARDEN_PREFIX}pins/`;

export function pinKey(id: string): string {
  return `${PINS_PREFIX}${id}.json`;
}
/**
 * Checkpoints and archive segments that could not be read, set aside by the writer that met them
 * (`{name}.{time}`), never deleted by lakewarden: a repaired file there has its rows merged back.
 */
export const DAMAGED_PREFIX = `${LAKEWARDEN_PREFIX}damaged/`;

/** `_lakewarden/damaged/{name}.{time}`: the time keeps two damages of one name apart. */
export function damagedKey(file: string, nowMillis: number): string {
  const name = file.slice(file.lastIndexOf("/") + 1);
  const time = new Date(nowMillis).toISOString().replace(/[-:]/g, "").replace(".", "");
  return `${DAMAGED_PREFIX}${name}.${time}`;
}
