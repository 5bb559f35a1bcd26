/**
 * The one path validator: turns a path that a format's metadata holds into a key under the
 * table root, or says that it lies outside the root (never deleted), or that it cannot be
 * resolved (cleanup stops before any delete when a kept version names such a path).
 *
 * Formats differ only in what they write: Lance and Delta write paths relative to the table
 * root (Delta URL-encodes them: the format decodes first); Iceberg writes absolute URIs under
 * the table's `location`. A format that writes relative paths cannot resolve an absolute one,
 * even when it points inside the root: it does not know what that path means to its readers.
 */
export type ResolvedPath = { kind: "key"; key: string } | { kind: "outside"; reason: string } | { kind: "unresolvable"; reason: string };

export interface PathContext {
  /**
   * The table root's URIs: the store's (`s3://bucket/t`, `file:///dir/t`) and any the format
   * records (Iceberg `location`). A URI under one of them is inside the root.
   */
  roots: readonly string[];
  /** True when the format writes absolute URIs (Iceberg); false for relative paths (Lance, Delta). */
  absolute: boolean;
  /**
   * True when a `file:` path is raw text, not a percent-encoded URI (Iceberg: Java's HadoopFileIO
   * opens `file:/t/p=a%3Ab/f` as the folder named `p=a%3Ab`); the roots are then given raw too.
   * False (the default): `file:` URIs are decoded, as Delta's URI-encoded paths must be.
   */
  rawFilePaths?: boolean;
}

const SCHEME = /^([a-zA-Z][a-zA-Z0-9+.-]*):/;
/** Hadoop's S3 connectors name the same objects as s3://. */
const SCHEME_ALIASES: Record<string, string> = { s3a: "s3", s3n: "s3" };

const SLASH = 0x2f;
const DOT = 0x2e;

/**
 * Why a relative path is not a plain key, or null if it is one. A key may end in one "/" (a
 * folder). One walk over the segments with no split: Lance's path resolution calls this for
 * every new file of every manifest.
 */
export function relativeKeyProblem(path: string): string | null {
  if (path === "") return "is empty";
  if (path.charCodeAt(0) === SLASH) return "is absolute";
  if (path.includes("\\")) return "contains a backslash";
  if (SCHEME.test(path)) return "is a URI";
  const end = path.charCodeAt(path.length - 1) === SLASH ? path.length - 1 : path.length;
  let start = 0;
  while (start <= end) {
    let stop = path.indexOf("/", start);
    if (stop === -1 || stop > end) stop = end;
    const length = stop - start;
    if (length === 0) return "has an empty segment";
    if (length <= 2 && path.charCodeAt(start) === DOT && (length === 1 || path.charCodeAt(start + 1) === DOT)) {
      return `has a "${length === 1 ? "." : ".."}" segment`;
    }
    start = stop + 1;
  }
  return null;
}

/** A URI or absolute path in one spelling: lower-case scheme with aliases folded, no trailing "/". */
export function normalizeUri(uri: string, rawFilePaths = false): string {
  let text = uri;
  if (text.startsWith("/")) text = `file://${rawFilePaths ? text : encodeURI(text)}`;
  const scheme = SCHEME.exec(text)?.[1];
  if (scheme) {
    const lower = scheme.toLowerCase();
    text = `${SCHEME_ALIASES[lower] ?? lower}${text.slice(scheme.length)}`;
  }
  // file:/dir and file:///dir are the same place.
  text = text.replace(/^file:\/(?!\/)/, "file:///");
  return text.replace(/\/+$/, "");
}

export function resolveTablePath(path: string, context: PathContext): ResolvedPath {
  if (typeof path !== "string" || path === "") return { kind: "unresolvable", reason: "the path is empty" };
  const isUri = SCHEME.test(path) || path.startsWith("/");
  if (!isUri) {
    const problem = relativeKeyProblem(path);
    return problem === null ? { kind: "key", key: path } : { kind: "unresolvable", reason: `the relative path ${problem}` };
  }
  const raw = context.rawFilePaths === true;
  const uri = normalizeUri(path, raw);
  for (const root of context.roots) {
    const base = normalizeUri(root, raw);
    if (!uri.startsWith(`${base}/`)) continue;
    if (!context.absolute) {
      return { kind: "unresolvable", reason: `an absolute path inside the table root, where this format writes paths relative to it` };
    }
    let key = uri.slice(base.length + 1);
    if (base.startsWith("file:") && !raw) {
      try {
        key = decodeURIComponent(key);
      } catch {
        return { kind: "unresolvable", reason: "the file URI is not validly percent-encoded" };
      }
    }
    const problem = relativeKeyProblem(key);
    return problem === null ? { kind: "key", key } : { kind: "unresolvable", reason: `the path under the table root ${problem}` };
  }
  const segments = uri.replace(SCHEME, "").split("/");
  if (segments.some((segment) => segment === "." || segment === "..")) {
    return { kind: "unresolvable", reason: `the URI has a "." or ".." segment, so where it points depends on who resolves it` };
  }
  return { kind: "outside", reason: `not under the table root (${context.roots.join(", ")})` };
}
