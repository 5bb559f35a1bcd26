/**
 * File names under `_delta_log/` (delta.md §1, PROTOCOL.md "Delta Log Entries", "Checkpoints",
 * "Log Compaction Files", "Version Checksum File"). Versions are zero-padded to 20 digits, so a
 * lexicographic listing is version order and `list(startAfter)` resumes from a version.
 *
 * Anything else in the folder (Hadoop side files starting with `.`, `.tmp/`, `_autostats/`,
 * `_last_vacuum_info`, ...) is not a log file and is never touched by lakewarden.
 */
export const LOG_PREFIX = "_delta_log/";
export const LAST_CHECKPOINT_KEY = `${LOG_PREFIX}_last_checkpoint`;
export const SIDECARS_PREFIX = `${LOG_PREFIX}_sidecars/`;
export const STAGED_COMMITS_PREFIX = `${LOG_PREFIX}_staged_commits/`;

export type LogFileName =
  | { kind: "commit"; version: number }
  | { kind: "crc"; version: number }
  | { kind: "checkpoint"; version: number; shape: "classic" }
  | { kind: "checkpoint"; version: number; shape: "multipart"; part: number; parts: number }
  | { kind: "checkpoint"; version: number; shape: "uuid"; uuid: string; extension: "json" | "parquet" }
  | { kind: "compaction"; version: number; endVersion: number };

const COMMIT = /^(\d{20})\.json$/;
const CRC = /^(\d{20})\.crc$/;
const CLASSIC = /^(\d{20})\.checkpoint\.parquet$/;
const MULTIPART = /^(\d{20})\.checkpoint\.(\d{10})\.(\d{10})\.parquet$/;
const UUID_CHECKPOINT = /^(\d{20})\.checkpoint\.([^.]+)\.(json|parquet)$/;
const COMPACTION = /^(\d{20})\.(\d{20})\.compacted\.json$/;

function safe(digits: string): number | null {
  const n = Number(digits);
  return Number.isSafeInteger(n) ? n : null;
}

/** Parses a file name directly under `_delta_log/` (no folder); null for anything that is not a log file. */
export function parseLogFileName(name: string): LogFileName | null {
  let m = COMMIT.exec(name);
  if (m) return withVersion(m[1]!, (version) => ({ kind: "commit", version }));
  m = CRC.exec(name);
  if (m) return withVersion(m[1]!, (version) => ({ kind: "crc", version }));
  m = CLASSIC.exec(name);
  if (m) return withVersion(m[1]!, (version) => ({ kind: "checkpoint", version, shape: "classic" }));
  m = MULTIPART.exec(name);
  if (m) {
    const part = Number(m[2]);
    const parts = Number(m[3]);
    if (part < 1 || part > parts) return null;
    return withVersion(m[1]!, (version) => ({ kind: "checkpoint", version, shape: "multipart", part, parts }));
  }
  m = UUID_CHECKPOINT.exec(name);
  if (m) {
    const uuid = m[2]!;
    const extension = m[3] as "json" | "parquet";
    return withVersion(m[1]!, (version) => ({ kind: "checkpoint", version, shape: "uuid", uuid, extension }));
  }
  m = COMPACTION.exec(name);
  if (m) {
    const end = safe(m[2]!);
    const start = safe(m[1]!);
    if (start === null || end === null || end <= start) return null;
    return { kind: "compaction", version: start, endVersion: end };
  }
  return null;
}

function withVersion(digits: string, make: (version: number) => LogFileName): LogFileName | null {
  const version = safe(digits);
  return version === null ? null : make(version);
}

/** Parses a key relative to the table root; null unless it is a log file directly under `_delta_log/`. */
export function parseLogKey(key: string): LogFileName | null {
  if (!key.startsWith(LOG_PREFIX)) return null;
  const name = key.slice(LOG_PREFIX.length);
  return name.includes("/") ? null : parseLogFileName(name);
}

export function padVersion(version: number): string {
  if (!Number.isSafeInteger(version) || version < 0) throw new RangeError(`not a valid Delta version: ${version}`);
  return String(version).padStart(20, "0");
}

export function commitKey(version: number): string {
  return `${LOG_PREFIX}${padVersion(version)}.json`;
}

export function crcKey(version: number): string {
  return `${LOG_PREFIX}${padVersion(version)}.crc`;
}

export function classicCheckpointKey(version: number): string {
  return `${LOG_PREFIX}${padVersion(version)}.checkpoint.parquet`;
}

export function multipartCheckpointKey(version: number, part: number, parts: number): string {
  return `${LOG_PREFIX}${padVersion(version)}.checkpoint.${String(part).padStart(10, "0")}.${String(parts).padStart(10, "0")}.parquet`;
}

/** A sidecar's key from the (already URL-decoded, relative) path a V2 checkpoint gives it: relative to `_delta_log/_sidecars/`. */
export function sidecarKey(path: string): string {
  return `${SIDECARS_PREFIX}${path}`;
}
