/**
 * Key rules shared by every store. Keys are relative to a store's root, use `/` between
 * segments, and can never name anything outside the root.
 */
import { InvalidLocationError } from "./errors.ts";

/** Why `key` is not a valid object key, or undefined when it is. */
export function keyProblem(key: string): string | undefined {
  if (typeof key !== "string" || key.length === 0) return "an object key cannot be empty";
  if (key.endsWith("/")) return `key "${key}" ends with "/"; object keys name files, not folders`;
  return pathProblem(key);
}

/** Why `prefix` is not a valid listing prefix ("" and a trailing "/" are fine), or undefined. */
function prefixProblem(prefix: string): string | undefined {
  if (typeof prefix !== "string") return "a listing prefix must be a string";
  if (prefix.length === 0) return undefined;
  return pathProblem(prefix.endsWith("/") ? prefix.slice(0, -1) : prefix);
}

const DOT = 46;

function pathProblem(path: string): string | undefined {
  if (path.startsWith("/")) return `"${path}" is absolute; keys are relative to the store root`;
  if (path.includes("\\")) return `"${path}" contains a backslash`;
  if (path.includes("\0")) return `"${path}" contains a NUL character`;
  // Segment by segment, the first bad one named, with indexOf rather than split: every key a
  // cleanup lists, reads or deletes passes here.
  for (let start = 0; ; ) {
    const slash = path.indexOf("/", start);
    const end = slash === -1 ? path.length : slash;
    if (end === start) return `"${path}" has an empty path segment`;
    if (path.charCodeAt(start) === DOT && (end === start + 1 || (end === start + 2 && path.charCodeAt(start + 1) === DOT))) {
      return `"${path}" has a "${path.slice(start, end)}" segment that could escape the store root`;
    }
    if (slash === -1) return undefined;
    start = slash + 1;
  }
}

/** Throws InvalidLocationError (naming the store root) unless `key` is a valid object key. */
export function checkKey(key: string, rootUri: string): void {
  const problem = keyProblem(key);
  if (problem) throw new InvalidLocationError(`${rootUri}: invalid key: ${problem}`, { uri: `${rootUri}/${String(key)}` });
}

/** Throws InvalidLocationError unless `prefix` is a valid listing prefix. */
export function checkPrefix(prefix: string, rootUri: string): void {
  const problem = prefixProblem(prefix);
  if (problem) throw new InvalidLocationError(`${rootUri}: invalid prefix: ${problem}`, { uri: `${rootUri}/${String(prefix)}` });
}

/** Normalizes a `scope()` subpath: valid segments, no trailing "/". */
export function checkSubpath(subpath: string, rootUri: string): string {
  const trimmed = typeof subpath === "string" && subpath.endsWith("/") ? subpath.slice(0, -1) : subpath;
  const problem = keyProblem(trimmed);
  if (problem) throw new InvalidLocationError(`${rootUri}: invalid scope: ${problem}`, { uri: `${rootUri}/${String(subpath)}` });
  return trimmed;
}

/**
 * S3's key order: by UTF-8 bytes, which is Unicode code point order. JavaScript's `<` compares
 * UTF-16 code units, which disagrees only when a surrogate (a code point above U+FFFF) meets
 * U+E000..U+FFFF; shifting those two ranges restores code point order.
 */
export function compareKeys(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}

function codePointRank(unit: number): number {
  if (unit >= 0xd800 && unit <= 0xdfff) return unit + 0x2000;
  if (unit >= 0xe000) return unit - 0x800;
  return unit;
}
