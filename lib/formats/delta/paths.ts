/**
 * Paths in Delta actions are RFC 2396 URIs (PROTOCOL.md "Add File and Remove File"): usually
 * relative to the table root and percent-encoded (`a%20b=1/part-0.parquet`), sometimes absolute
 * (`s3://bucket/t/part-0.parquet`), which the protocol allows. A relative path is decoded here;
 * an absolute one is kept as written and left to the one path validator, which decides whether
 * it lies outside the root or cannot be resolved.
 */
import { resolveTablePath } from "../../model/table-path.ts";
import type { ResolvedPath } from "../../model/table-path.ts";

export type DeltaPath = { kind: "relative"; path: string } | { kind: "absolute"; uri: string } | { kind: "invalid"; reason: string };

const SCHEME = /^[a-zA-Z][a-zA-Z0-9+.-]*:/;

export function decodeDeltaPath(path: string): DeltaPath {
  if (typeof path !== "string" || path === "") return { kind: "invalid", reason: "the path is empty" };
  if (SCHEME.test(path) || path.startsWith("/")) return { kind: "absolute", uri: path };
  try {
    return { kind: "relative", path: decodeURIComponent(path) };
  } catch {
    return { kind: "invalid", reason: `"${path}" is not validly percent-encoded` };
  }
}

/** The text a path is compared by during reconciliation: decoded when relative, as written when absolute or invalid. */
export function pathIdentity(path: string): string {
  // The common case, asked for every add and remove a replay applies: nothing to decode (no
  // escape), and no scheme or leading slash (a scheme needs a colon), so the path is its identity.
  if (typeof path === "string" && path !== "" && path.indexOf("%") === -1 && path.indexOf(":") === -1 && path.charCodeAt(0) !== 47) return path;
  const decoded = decodeDeltaPath(path);
  return decoded.kind === "relative" ? decoded.path : path;
}

export type { ResolvedPath as ResolvedDeltaPath } from "../../model/table-path.ts";

/**
 * A path from an action → a key under the table root, through the one path validator
 * (lib/model/table-path.ts). A relative path is decoded first. An absolute URI (the protocol
 * allows them) is resolved as absolute: under the root it names that key. Except that an
 * absolute non-file URI under the root that still holds percent-escapes is refused
 * (unresolvable): S3 URIs are compared undecoded, so the key could not be known for sure and a
 * live file could go unprotected.
 */
export function resolveDeltaPath(path: string, roots: readonly string[]): ResolvedPath {
  const decoded = decodeDeltaPath(path);
  if (decoded.kind === "invalid") return { kind: "unresolvable", reason: decoded.reason };
  if (decoded.kind === "relative") return resolveTablePath(decoded.path, { roots, absolute: false });
  const resolved = resolveTablePath(decoded.uri, { roots, absolute: true });
  if (resolved.kind === "key" && !/^file:/i.test(decoded.uri) && !decoded.uri.startsWith("/") && /%[0-9A-Fa-f]{2}/.test(decoded.uri)) {
    return { kind: "unresolvable", reason: "an absolute URI under the table root with percent-escapes: its key cannot be known for sure" };
  }
  return resolved;
}
