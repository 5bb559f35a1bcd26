import { describe, expect, it } from "vitest";
import { normalizeUri, relativeKeyProblem, resolveTablePath } from "../../lib/model/table-path.ts";

const s3Root = { roots: ["s3://bucket/warehouse/t"], absolute: true };
const relative = { roots: ["s3://bucket/warehouse/t"], absolute: false };

describe("resolveTablePath", () => {
  it("relative paths are keys when every segment is plain", () => {
    expect(resolveTablePath("data/a.parquet", relative)).toEqual({ kind: "key", key: "data/a.parquet" });
    expect(resolveTablePath("_indices/abc/", relative)).toEqual({ kind: "key", key: "_indices/abc/" });
    for (const bad of ["a/../b", "./a", "a//b", "a\\b", ""]) expect(resolveTablePath(bad, relative).kind, bad).toBe("unresolvable");
  });

  it("absolute URIs under the root are keys for formats that write them, with s3a and s3n read as s3", () => {
    expect(resolveTablePath("s3://bucket/warehouse/t/data/a.parquet", s3Root)).toEqual({ kind: "key", key: "data/a.parquet" });
    expect(resolveTablePath("s3a://bucket/warehouse/t/metadata/v1.metadata.json", s3Root)).toEqual({ kind: "key", key: "metadata/v1.metadata.json" });
    expect(resolveTablePath("S3N://bucket/warehouse/t/x", s3Root)).toEqual({ kind: "key", key: "x" });
  });

  it("an absolute URI inside the root cannot be resolved by a format that writes relative paths", () => {
    expect(resolveTablePath("s3://bucket/warehouse/t/data/a.lance", relative)).toMatchObject({ kind: "unresolvable" });
  });

  it("other buckets, other schemes and sibling prefixes are proven outside", () => {
    for (const path of ["s3://other/warehouse/t/data/a", "gs://bucket/warehouse/t/data/a", "s3://bucket/warehouse/t2/data/a", "s3://bucket/warehouse/x"]) {
      expect(resolveTablePath(path, s3Root).kind, path).toBe("outside");
    }
  });

  it("dot segments in a URI make it unresolvable, inside or out", () => {
    expect(resolveTablePath("s3://bucket/warehouse/t/../t/data/a", s3Root).kind).toBe("unresolvable");
    expect(resolveTablePath("s3://bucket/warehouse/x/../t/data/a", s3Root).kind).toBe("unresolvable");
  });

  it("local roots: file URIs and absolute paths, percent-encoding decoded", () => {
    const local = { roots: ["file:///lake/my%20t"], absolute: true };
    expect(resolveTablePath("file:///lake/my%20t/data/a%20b.parquet", local)).toEqual({ kind: "key", key: "data/a b.parquet" });
    expect(resolveTablePath("/lake/my t/data/x", local)).toEqual({ kind: "key", key: "data/x" });
    expect(resolveTablePath("file:/lake/my%20t/data/x", local)).toEqual({ kind: "key", key: "data/x" });
    expect(resolveTablePath("/lake/other/x", local).kind).toBe("outside");
  });
});

describe("normalizeUri / relativeKeyProblem", () => {
  it("folds scheme case and aliases, drops trailing slashes", () => {
    expect(normalizeUri("S3A://b/p/")).toBe("s3://b/p");
  });
  it("names the problem of a relative path", () => {
    expect(relativeKeyProblem("a/../b")).toBe('has a ".." segment');
    expect(relativeKeyProblem("s3://x")).toBe("is a URI");
    expect(relativeKeyProblem("data/x")).toBeNull();
  });

  it("gives the split-based check's answer for every path over a small alphabet (the walk allocates no segments)", () => {
    const bySplit = (path: string): string | null => {
      if (path === "") return "is empty";
      if (path.startsWith("/")) return "is absolute";
      if (path.includes("\\")) return "contains a backslash";
      if (/^([a-zA-Z][a-zA-Z0-9+.-]*):/.test(path)) return "is a URI";
      const segments = path.split("/");
      if (path.endsWith("/")) segments.pop();
      for (const segment of segments) {
        if (segment === "") return "has an empty segment";
        if (segment === "." || segment === "..") return `has a "${segment}" segment`;
      }
      return null;
    };
    const alphabet = ["a", ".", "/", ":", "\\", "_"];
    let paths = [""];
    let checked = 0;
    for (let length = 0; length <= 6; length++) {
      for (const path of paths) {
        expect(relativeKeyProblem(path), JSON.stringify(path)).toBe(bySplit(path));
        checked++;
      }
      paths = paths.flatMap((path) => alphabet.map((letter) => path + letter));
    }
    expect(checked).toBe((6 ** 7 - 1) / 5);
  });
});
