/**
 * Iceberg paths to keys under the table root, through the one validator
 * (lib/model/table-path.ts). Iceberg v1-v3 metadata holds absolute URIs under the table's
 * `location`; the store's root stands for that location (a copied or moved table is read
 * where it is). What this adds to the validator is only Iceberg's knowledge:
 *   - the roots are the table's `location` and the store's URI (`s3a://`, `s3n://` fold to `s3://`);
 *   - some engines write a relative `location` (`data/persistent/t`) and paths under it: those
 *     are rewritten onto the store's URI first;
 *   - a relative path under an absolute location is not defined before format v4: unresolvable;
 *   - a "." segment (`./t`, `s3://b/./t`) names the folder it is in, as Hadoop's Path and RFC 3986
 *     read it: it is dropped from the location and from every path alike, so a location written
 *     `./name` still holds the paths written `name/...`. ".." stays, for the validator to refuse;
 *   - a path whose path part lies under the location's path part but under another scheme or
 *     authority (`gs://b/t/...` for `s3://b/t`, or another bucket) is iceberg-java's "prefix
 *     mismatch", an error there: unresolvable here, so cleanup stops before any delete.
 */
import { fileURLToPath } from "node:url";
import { normalizeUri, resolveTablePath, type ResolvedPath } from "../../model/table-path.ts";

export type IcebergPathResolver = (path: string) => ResolvedPath;

const SCHEME = /^[a-zA-Z][a-zA-Z0-9+.-]*:/;

function isAbsolute(path: string): boolean {
  return SCHEME.test(path) || path.startsWith("/");
}

/** The path part of a URI (`s3://bucket/a/b` → `/a/b`), without a trailing "/". */
function pathPart(uri: string): string {
  const normalized = normalizeUri(uri, true);
  const match = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\/[^/]*(\/.*)?$/.exec(normalized);
  return (match ? (match[1] ?? "") : normalized.replace(SCHEME, "")).replace(/\/+$/, "");
}

/** The store's URI spelled as Iceberg spells paths: a `file:` URI's path as raw text (the store's is percent-encoded). */
function rawRoot(storeUri: string): string {
  return /^file:/i.test(storeUri) ? `file://${fileURLToPath(storeUri)}` : storeUri;
}

/** The path with its "." segments dropped (`./a/./b` → `a/b`, `s3://b/./t` → `s3://b/t`); the authority is left alone. */
export function withoutDotSegments(path: string): string {
  const authority = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\/[^/]*/.exec(path)?.[0] ?? "";
  const rest = path.slice(authority.length);
  if (!rest.split("/").includes(".")) return path;
  return (
    authority +
    rest
      .split("/")
      .filter((segment) => segment !== ".")
      .join("/")
  );
}

/** Resolvers made lately, by location and store URI: one function per table, so what is worked out per resolver (a manifest's references) is shared by every read of the table. */
const resolvers = new Map<string, IcebergPathResolver>();
const RESOLVERS_HELD = 16;

/** The resolver of paths written under `writtenLocation` to keys of the store at `encodedStoreUri` (the same function for the same two). */
export function icebergPathResolver(writtenLocation: string, encodedStoreUri: string): IcebergPathResolver {
  const id = `${writtenLocation}\u0000${encodedStoreUri}`;
  let resolver = resolvers.get(id);
  if (!resolver) {
    resolver = makeResolver(writtenLocation, encodedStoreUri);
    if (resolvers.size >= RESOLVERS_HELD) resolvers.delete(resolvers.keys().next().value!);
    resolvers.set(id, resolver);
  }
  return resolver;
}

function makeResolver(writtenLocation: string, encodedStoreUri: string): IcebergPathResolver {
  const location = withoutDotSegments(writtenLocation);
  const storeUri = rawRoot(encodedStoreUri);
  const relativeLocation = !isAbsolute(location) ? location.replace(/\/+$/, "") : null;
  const roots = relativeLocation === null ? [location, storeUri] : [storeUri];
  const locationPath = relativeLocation === null ? pathPart(location) : null;

  return (writtenPath: string): ResolvedPath => {
    if (typeof writtenPath !== "string" || writtenPath === "") return { kind: "unresolvable", reason: "the path is empty" };
    const path = withoutDotSegments(writtenPath);
    if (path === "") return { kind: "unresolvable", reason: "the path is empty" };
    let target = path;
    if (!isAbsolute(path)) {
      if (relativeLocation === null) {
        return { kind: "unresolvable", reason: `a relative path, where the table's location is ${location} (format v1-v3 paths are absolute)` };
      }
      if (!path.startsWith(`${relativeLocation}/`)) {
        return { kind: "unresolvable", reason: `a relative path not under the table's relative location ${relativeLocation}` };
      }
      target = `${storeUri.replace(/\/+$/, "")}/${path.slice(relativeLocation.length + 1)}`;
    }
    // Iceberg paths are raw text: `%3A` in a path is part of the folder's name (partition values are URL-encoded into names).
    const resolved = resolveTablePath(target, { roots, absolute: true, rawFilePaths: true });
    if (resolved.kind === "outside" && locationPath !== null && locationPath !== "") {
      const part = pathPart(target);
      if (part.startsWith(`${locationPath}/`)) {
        return {
          kind: "unresolvable",
          reason: `prefix mismatch: the path is under the table's location path ${locationPath} but not under ${location} (another scheme or authority)`,
        };
      }
    }
    return resolved;
  };
}
