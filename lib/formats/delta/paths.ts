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

export type ResolvedDeltaPath =
  | { kind: "key"; key: string }
  | { kind: "outside"; reason: string }
  | { kind: "unresolvable"; reason: string };

function keyProblem(key: string): string | null {
  if (key === "") return "is empty";
  if (key.includes("\\")) return "contains a backslash";
  for (const segment of key.split("/")) {
    if (segment === "") return "has an empty segment";
    if (segment === "." || segment === "..") return `has a "${segment}" segment`;
  }
  return null;
}

function normalizeRoot(uri: string): string {
  let text = uri.replace(/^s3[an]:/i, "s3:").replace(/^file:\/(?!\/)/, "file:///");
  if (text.startsWith("/")) text = `file://${text}`;
  return text.replace(/\/+$/, "");
}

/**
 * A path from an action → a key under the table root. Relative paths are decoded and must be
 * plain keys. An absolute URI under one of `roots` names that key; one that still holds
 * percent-escapes is refused (unresolvable) rather than guessed, since S3 URIs are compared
 * undecoded and a wrong guess would leave a live file unprotected. Anything else is outside.
 */
export function resolveDeltaPath(path: string, roots: readonly string[]): ResolvedDeltaPath {
  const decoded = decodeDeltaPath(path);
  if (decoded.kind === "invalid") return { kind: "unresolvable", reason: decoded.reason };
  if (decoded.kind === "relative") {
    const problem = keyProblem(decoded.path);
    return problem === null ? { kind: "key", key: decoded.path } : { kind: "unresolvable", reason: `the relative path ${problem}` };
  }
  const uri = normalizeRoot(decoded.uri);
  for (const root of roots.map(normalizeRoot)) {
    if (!uri.startsWith(`${root}/`)) continue;
    const key = uri.slice(root.length + 1);
    if (key.includes("%")) return { kind: "unresolvable", reason: "an absolute URI under the table root with percent-escapes" };
    const problem = keyProblem(key);
    return problem === null ? { kind: "key", key } : { kind: "unresolvable", reason: `the path under the table root ${problem}` };
  }
  if (/(^|\/)\.\.?(\/|$)/.test(uri.replace(/^[a-z0-9+.-]+:\/\//i, ""))) return { kind: "unresolvable", reason: `the URI has a "." or ".." segment` };
  return { kind: "outside", reason: `not under the table root (${roots.join(", ")})` };
}
