/**
 * The key rules (lib/store/keys.ts) find the first bad segment by index, not by splitting the
 * key: the same answers, messages included, as a walk over `key.split("/")`.
 */
import { describe, expect, it } from "vitest";
import { checkPrefix, keyProblem } from "../../lib/store/keys.ts";

/** The rule as a split: the first empty, "." or ".." segment. */
function segmentsBySplit(path: string): string | undefined {
  if (path.startsWith("/")) return `"${path}" is absolute; keys are relative to the store root`;
  if (path.includes("\\")) return `"${path}" contains a backslash`;
  if (path.includes("\0")) return `"${path}" contains a NUL character`;
  for (const segment of path.split("/")) {
    if (segment === "") return `"${path}" has an empty path segment`;
    if (segment === "." || segment === "..") return `"${path}" has a "${segment}" segment that could escape the store root`;
  }
  return undefined;
}

function bySplit(key: string): string | undefined {
  if (key.length === 0) return "an object key cannot be empty";
  if (key.endsWith("/")) return `key "${key}" ends with "/"; object keys name files, not folders`;
  return segmentsBySplit(key);
}

const KEYS = [
  "a",
  ".",
  "..",
  "...",
  ".a",
  "a.",
  "..a",
  "a..",
  "a/.",
  "a/..",
  "./a",
  "../a",
  "a/./b",
  "a/../b",
  "a/.b/c",
  "a/..b/c",
  "a/.../b",
  "a//b",
  "a/b//",
  "/a",
  "a/",
  "a\\b",
  "a\0b",
  "data/0-1.lance",
  "_versions/18446744073709551615.manifest",
  "a/b/c/d/e/..",
  "x/./../y",
  "x//..",
  "",
];

describe("key rules", () => {
  it("name the first bad segment as a walk over the segments does", () => {
    for (const key of KEYS) expect(keyProblem(key), key).toBe(bySplit(key));
  });

  it("check a listing prefix, its trailing slash allowed, by the same rules", () => {
    for (const key of KEYS) {
      const prefix = key.endsWith("/") ? key : `${key}/`;
      const expected = segmentsBySplit(prefix.slice(0, -1));
      if (expected === undefined) expect(() => checkPrefix(prefix, "file:///t")).not.toThrow();
      else expect(() => checkPrefix(prefix, "file:///t")).toThrow(expected);
    }
  });
});
