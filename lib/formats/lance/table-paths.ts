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

/** Why `path` is not a plain relative path, or null when it is one. */
function unsafePathReason(path: string): string | null {
  if (path === "") return "is empty";
  if (path.startsWith("/")) return "is absolute";
  if (path.includes("\\")) return "contains a backslash";
  for (const segment of path.split("/")) {
    if (segment === "") return "has an empty segment (or is a URI)";
    if (segment === "." || segment === "..") return `has a "${segment}" segment`;
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
