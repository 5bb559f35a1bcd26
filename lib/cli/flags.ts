/** Flag values the commands share, checked by the same rules as the settings they stand for. */
import { headCodecs } from "../head/registry.ts";
import { DURATION_EXPECTED, parseSetting, settingOrigin, shortSettingProblem } from "../maintenance/policy.ts";
import { formatDuration, parseDuration } from "../maintenance/duration.ts";
import type { PolicyField } from "../maintenance/policy.ts";
import { UsageError } from "./errors.ts";

const WHERE = "command line";

/** A retention flag (`--older-than 7d`) parsed like the table config value it overrides; UsageError naming the flag. */
export function parseSettingFlag<F extends PolicyField>(field: F, text: string, flag: string): ReturnType<typeof parseSetting<F>> {
  try {
    return parseSetting(field, text, flag, WHERE);
  } catch (error) {
    throw new UsageError((error as Error).message.replace(`${WHERE}: `, ""));
  }
}

/** `--codec`: one of the registered head codecs. */
export function checkHeadCodecFlag(codec: string | undefined): void {
  if (codec !== undefined && !headCodecs.get(codec)) {
    throw new UsageError(`unknown head codec ${JSON.stringify(codec)} (known: ${headCodecs.names().join(", ")})`);
  }
}

/** The acknowledgement `--older-than` needs below MIN_SAFE_RETENTION_MS. */
export const SHORT_RETENTION_FLAG = "--allow-short-retention";
/** The acknowledgement `--safety-window` needs below MIN_SAFE_SAFETY_WINDOW_MS. */
export const SHORT_SAFETY_WINDOW_FLAG = "--allow-short-safety-window";

/**
 * `--older-than` below 7 days (0s included) only with --allow-short-retention: removing a version
 * that a running query or an in-flight commit still reads breaks that reader or writer. The
 * policy's own guard (lib/maintenance/policy.ts), checked here before anything is read.
 */
export function checkShortRetention(olderThanMs: number | undefined, allowed: boolean): void {
  if (olderThanMs === undefined) return;
  const problem = shortSettingProblem("olderThanMs", olderThanMs, settingOrigin("olderThanMs", "option", formatDuration(olderThanMs)), allowed);
  if (problem !== null) throw new UsageError(problem);
}

/**
 * `--safety-window` below one hour only with --allow-short-safety-window: an unreferenced file that
 * young may be one a writer has written and not yet committed (its manifest comes last), and
 * deleting it breaks that commit. Pass it only when no writer runs, or none takes that long.
 */
export function checkShortSafetyWindow(safetyWindowMs: number | undefined, allowed: boolean): void {
  if (safetyWindowMs === undefined) return;
  const problem = shortSettingProblem("safetyWindowMs", safetyWindowMs, settingOrigin("safetyWindowMs", "option", formatDuration(safetyWindowMs)), allowed);
  if (problem !== null) throw new UsageError(problem);
}

/**
 * A duration flag that is not a retention setting (`serve --poll-interval`), with the same
 * error as every other duration: `--flag = "x" is not a duration (e.g. 7d, 12h, 30m)`.
 */
export function parseDurationFlag(flag: string, text: string, { positive = false } = {}): number {
  const millis = parseDuration(text);
  if (millis === null) throw new UsageError(`${flag} = ${JSON.stringify(text)} is not ${DURATION_EXPECTED}`);
  if (positive && millis <= 0) throw new UsageError(`${flag} = ${JSON.stringify(text)} is not ${DURATION_EXPECTED} above zero`);
  return millis;
}

/** A whole number of at least 1 (`--min-work`). */
export function parsePositiveIntegerFlag(flag: string, text: string, unit: string): number {
  const value = /^\d+$/.test(text.trim()) ? Number(text.trim()) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < 1) throw new UsageError(`${flag} = ${JSON.stringify(text)} is not a whole number of ${unit} of at least 1`);
  return value;
}

/** `--max-delete-rate`: keys deleted per second, a positive number. */
export function parseRateFlag(flag: string, text: string): number {
  const value = /^\d+(\.\d+)?$/.test(text.trim()) ? Number(text) : Number.NaN;
  if (!(value > 0)) throw new UsageError(`${flag} = ${JSON.stringify(text)} is not a number of keys per second above zero (e.g. 1000)`);
  return value;
}
