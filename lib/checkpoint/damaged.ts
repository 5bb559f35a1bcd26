/**
 * Damaged history files. A checkpoint or archive segment that cannot be read is never silent,
 * never overwritten with fewer rows and never deleted: the writer that meets one copies its bytes
 * to `_lakewarden/damaged/{name}.{time}` (a missing one gets a note there instead) and the
 * checkpoint it writes remembers it (a DamageNote), so every later reader still says which
 * versions may be missing. The note goes when the file set aside is repaired in place (the next
 * writer merges its rows back) or deleted (the user accepted the loss).
 */
import { ConflictError, NotFoundError, PreconditionFailedError } from "../store/errors.ts";
import type { ObjectStore } from "../store/object-store.ts";
import { damagedKey } from "../model/layout.ts";
import type { CheckpointContent } from "./codec.ts";
import { decodeCheckpoint } from "./codec.ts";
import { CorruptCheckpointError } from "./errors.ts";
import { parseCheckpointKey } from "../model/layout.ts";
import type { SegmentFile } from "../model/layout.ts";

/** Versions a file held, as far as known (`from` null: from the table's first version on). */
export interface CoveredVersions {
  from: number | null;
  through: number;
}

/** A damaged file a checkpoint remembers (stored in its metadata, snake_case as printed). */
export interface DamageNote {
  /** Where the file was: `_lakewarden/checkpoints/…` or `_lakewarden/archive/…`. */
  file: string;
  /** Where its bytes (or, for a missing file, a note) are kept now. */
  set_aside: string;
  problem: string;
  covered: CoveredVersions;
  found_at_millis: number;
}

/** One file of the history that could not be read, as `versions` reports it. */
export interface HistoryProblem {
  file: string;
  role: "checkpoint" | "archive segment";
  problem: string;
  covered: CoveredVersions;
  /** Ranges of the covered versions that nothing listed now holds (`from` null: no lower bound known). */
  unlisted: { from: number | null; through: number }[];
  /** Where the file's bytes are kept, once a writer set it aside; null while it is in place (or gone). */
  set_aside: string | null;
  /** What lists the versions meanwhile: a checkpoint, archive segments, the head, the version files. */
  served_by: string[];
}

/** The checkpoints among `problems` still in place (not set aside yet): what the next writer sets aside. */
export function unreadableCheckpoints(problems: readonly HistoryProblem[]): { key: string; problem: string }[] {
  return problems.filter((p) => p.role === "checkpoint" && p.set_aside === null).map((p) => ({ key: p.file, problem: p.problem }));
}

export interface SetAside {
  /** Where the bytes (or the note of a missing file) are now. */
  key: string;
  /** The ETag of the damaged file as copied (null: it was missing). */
  etag: string | null;
}

/**
 * Copies a damaged file's bytes to `_lakewarden/damaged/`, create-only; a missing file gets a
 * one-line note there instead, so the user has a place to restore it into.
 */
export async function setAside(store: ObjectStore, file: string, problem: string, nowMillis: number): Promise<SetAside> {
  let body: Uint8Array;
  let etag: string | null = null;
  try {
    const read = await store.get(file);
    body = read.body;
    etag = read.etag;
  } catch (error) {
    if (!(error instanceof NotFoundError)) throw error;
    body = new TextEncoder().encode(
      `${file} was missing when lakewarden needed it (${problem}); restore the file here to have its rows merged back, or delete this to accept the loss\n`,
    );
  }
  for (let attempt = 0; ; attempt++) {
    const key = damagedKey(file, nowMillis + attempt);
    try {
      await store.put(key, body, { ifNoneMatch: "*", contentType: etag === null ? "text/plain" : "application/octet-stream" });
      return { key, etag };
    } catch (error) {
      if (!(error instanceof PreconditionFailedError || error instanceof ConflictError) || attempt >= 4) throw error;
    }
  }
}

/** What a file set aside holds now: repaired (it decodes: its rows can come back), still damaged, or gone (loss accepted). */
export type SetAsideState = { state: "repaired"; content: CheckpointContent } | { state: "damaged"; problem: string } | { state: "gone" };

export async function readSetAside(store: ObjectStore, note: DamageNote): Promise<SetAsideState> {
  let body: Uint8Array;
  try {
    body = (await store.get(note.set_aside)).body;
  } catch (error) {
    if (error instanceof NotFoundError) return { state: "gone" };
    throw error;
  }
  try {
    return { state: "repaired", content: decodeCheckpoint(body, store.uriOf(note.set_aside)) };
  } catch (error) {
    if (error instanceof CorruptCheckpointError) return { state: "damaged", problem: note.problem };
    throw error;
  }
}

/**
 * The versions a checkpoint covered, as far as known: up to the version its name gives; from
 * after the newest archive segment older than that (its older rows were moved there), else from
 * `first`, the table's first version when a sound checkpoint knows it (null: unknown).
 */
export function checkpointCoverage(file: string, segments: readonly Pick<SegmentFile, "last">[], first: number | null): CoveredVersions | null {
  const through = parseCheckpointKey(file);
  if (through === null) return null;
  const older = segments.filter((s) => s.last < through).map((s) => s.last);
  return { from: older.length > 0 ? Math.max(...older) + 1 : first !== null && first <= through ? first : null, through };
}

/**
 * The table's first version as `checkpoint` knows it, when it can be trusted: a checkpoint
 * written past a damaged one may know only the versions left, so it says nothing.
 */
export function soundFirstVersion(checkpoint: CheckpointContent | null): number | null {
  return checkpoint && (checkpoint.damaged ?? []).length === 0 ? checkpoint.datasetCreatedFromVersion : null;
}

/** The parts of `covered` no listed version falls in (`from` null: below the oldest listed, no lower bound known). */
export function unlistedRanges(covered: CoveredVersions, listed: readonly number[]): { from: number | null; through: number }[] {
  const low = covered.from;
  const inRange = listed.filter((v) => (low === null || v >= low) && v <= covered.through).sort((a, b) => a - b);
  const ranges: { from: number | null; through: number }[] = [];
  let next = low;
  for (const version of inRange) {
    if (next === null) ranges.push({ from: null, through: version - 1 });
    else if (version > next) ranges.push({ from: next, through: version - 1 });
    next = version + 1;
  }
  if (next === null) ranges.push({ from: null, through: covered.through });
  else if (next <= covered.through) ranges.push({ from: next, through: covered.through });
  return ranges;
}

/** `21-28`, `before 29`, `5`: for the one-line messages. */
export function describeRange(range: { from: number | null; through: number }): string {
  if (range.from === null) return `before ${range.through + 1}`;
  return range.from === range.through ? String(range.from) : `${range.from}-${range.through}`;
}

/** A note as stored in a checkpoint's metadata; throws on anything that is not one. */
export function parseDamageNotes(text: string): DamageNote[] | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (!Array.isArray(value)) return null;
  const isNote = (n: unknown): n is DamageNote => {
    if (n === null || typeof n !== "object") return false;
    const note = n as Partial<DamageNote>;
    const covered = note.covered as Partial<CoveredVersions> | undefined;
    return (
      typeof note.file === "string" &&
      typeof note.set_aside === "string" &&
      typeof note.problem === "string" &&
      Number.isSafeInteger(note.found_at_millis) &&
      covered !== undefined &&
      covered !== null &&
      Number.isSafeInteger(covered.through) &&
      (covered.from === null || Number.isSafeInteger(covered.from))
    );
  };
  return value.every(isNote) ? value : null;
}

/** Ranges shown in a line; the JSON has them all. */
const RANGES_SHOWN = 5;

/** One line for a history problem (the CLI's stderr line, the HTML report's list item). */
export function describeHistoryProblem(problem: HistoryProblem): string {
  const { covered, unlisted } = problem;
  const versions =
    covered.from === null ? `versions up to ${covered.through}` : covered.from === covered.through ? `version ${covered.from}` : `versions ${covered.from}-${covered.through}`;
  const shown = unlisted.slice(0, RANGES_SHOWN).map(describeRange).join(", ") + (unlisted.length > RANGES_SHOWN ? `, and ${unlisted.length - RANGES_SHOWN} more ranges` : "");
  const missing = unlisted.length === 0 ? "every one of them is still listed" : `not listed now: ${shown}`;
  const kept =
    problem.set_aside === null ? "" : `; set aside at ${problem.set_aside}: repair it there and run lakewarden checkpoint to merge its rows back, or delete it to accept the loss`;
  return `history incomplete: ${problem.role} ${problem.file} cannot be read (${reasonOf(problem)}); it covered ${versions}; ${missing}; listed from ${problem.served_by.join(", ")}${kept}`;
}

/** The problem without the file's URI in front (the line names the file already). */
function reasonOf(problem: HistoryProblem): string {
  const colon = problem.problem.indexOf(": ");
  return colon > 0 && problem.problem.slice(0, colon).endsWith(problem.file) ? problem.problem.slice(colon + 2) : problem.problem;
}
