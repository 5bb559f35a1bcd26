/**
 * Paths in Delta actions are RFC 2396 URIs (PROTOCOL.md "Add File and Remove File"): usually
 * relative to the table root and percent-encoded (`a%20b=1/part-0.parquet`), sometimes absolute
 * (`s3://bucket/t/part-0.parquet`), which the protocol allows. A relative path is decoded here;
 * an absolute one is kept as written and left to the one path validator, which decides whether
 * it lies outside the root or cannot be resolved.
 */
export type DeltaPath =
  | { kind: "relative"; path: string }
  | { kind: "absolute"; uri: string }
  | { kind: "invalid"; reason: string };

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
  const decoded = decodeDeltaPath(path);
  return decoded.kind === "relative" ? decoded.path : path;
}
