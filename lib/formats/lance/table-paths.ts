/**
 * Turns paths recorded in a manifest into keys relative to the table root. A manifest is
 * input like any other: a path with `..`, an absolute path or a URI would point outside
 * the table, and cleanup deletes by these keys, so such a path is a corrupt manifest, not
 * a key.
 */
import { CorruptFileError } from "../errors.ts";

export const DATA_PREFIX = "data/";
export const DELETIONS_PREFIX = "_deletions/";
export const TRANSACTIONS_PREFIX = "_transactions/";
export const INDICES_PREFIX = "_indices/";

const SLASH = 0x2f;
const DOT = 0x2e;

/** Why `path` is not a plain relative path, or null when it is one. One scan, no allocation. */
function unsafePathReason(path: string): string | null {
  if (path === "") return "is empty";
  if (path.charCodeAt(0) === SLASH) return "is absolute";
  if (path.includes("\\")) return "contains a backslash";
  let segmentStart = 0;
  for (let i = 0; i <= path.length; i++) {
    if (i < path.length && path.charCodeAt(i) !== SLASH) continue;
    const length = i - segmentStart;
    if (length === 0) return "has an empty segment (or is a URI)";
    if (length <= 2 && path.charCodeAt(segmentStart) === DOT && (length === 1 || path.charCodeAt(segmentStart + 1) === DOT)) {
      return `has a "${path.slice(segmentStart, i)}" segment`;
    }
    segmentStart = i + 1;
  }
  return null;
}

/** `prefix + path`, or CorruptFileError naming the manifest (`uri`) and the offending path. */
export function tableKey(prefix: string, path: string, what: string, uri: string): string {
  const reason = unsafePathReason(path);
  if (reason !== null) {
    throw new CorruptFileError(uri, `${what} path ${JSON.stringify(path)} ${reason}; refusing to resolve it`);
  }
  return prefix + path;
}
