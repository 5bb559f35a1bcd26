/**
 * Pruning by facts: what each fact refutes and, above all, what it must not (NaN, nulls,
 * missing counts); Iceberg's bucket hash against the spec's own test vectors.
 */
import { describe, expect, it } from "vitest";
import type { ColumnFacts, ScanColumn } from "../../lib/formats/scan-files.ts";
import { bucketOf, murmur3 } from "../../lib/formats/iceberg/bucket-hash.ts";
import { bindFilter } from "../../lib/scan/bind.ts";
import { parseFilter } from "../../lib/scan/expression.ts";
import { mayMatch } from "../../lib/scan/prune.ts";

const columns: ScanColumn[] = [
  { name: "i", type: "int", formatType: "long" },
  { name: "f", type: "float", formatType: "double" },
  { name: "s", type: "string", formatType: "string" },
];
const may = (where: string, facts: ColumnFacts[]) => mayMatch(bindFilter(parseFilter(where), columns), facts);

describe("mayMatch", () => {
  const ints: ColumnFacts[] = [{ column: "i", lower: 10n, upper: 20n, nullCount: 0, valueCount: 5 }];
  it("bounds refute comparisons outside them and keep the edges", () => {
    expect(may("i = 9", ints)).toBe(false);
    expect(may("i = 10", ints)).toBe(true);
    expect(may("i < 10", ints)).toBe(false);
    expect(may("i <= 10", ints)).toBe(true);
    expect(may("i > 20", ints)).toBe(false);
    expect(may("i >= 20", ints)).toBe(true);
    expect(may("i > 19.5", ints)).toBe(true);
    expect(may("i IN (1, 2, 21)", ints)).toBe(false);
    expect(may("i IN (1, 15)", ints)).toBe(true);
    expect(may("NOT i >= 10", ints)).toBe(false);
    expect(may("i != 15", ints)).toBe(true);
    expect(may("i IS NULL", ints)).toBe(false);
    expect(may("i = 9 OR s = 'x'", ints)).toBe(true);
  });
  it("nulls: all-null files match only IS NULL; NOT IN with a NULL matches nothing", () => {
    const allNull: ColumnFacts[] = [{ column: "i", nullCount: 5, valueCount: 5 }];
    expect(may("i = 1", allNull)).toBe(false);
    expect(may("i != 1", allNull)).toBe(false);
    expect(may("i IS NOT NULL", allNull)).toBe(false);
    expect(may("i IS NULL", allNull)).toBe(true);
    expect(may("i NOT IN (1, NULL)", ints)).toBe(false);
    expect(may("i != 10", [{ column: "i", lower: 10n, upper: 10n, nullCount: 3, valueCount: 5 }])).toBe(false);
  });
  it("NaN: a float file that may hold NaN is kept for what NaN satisfies (greater than all, equal to itself)", () => {
    const noNaN: ColumnFacts[] = [{ column: "f", lower: 1, upper: 2, nanCount: 0 }];
    const maybeNaN: ColumnFacts[] = [{ column: "f", lower: 1, upper: 2 }];
    expect(may("f > 5", noNaN)).toBe(false);
    expect(may("f > 5", maybeNaN)).toBe(true);
    expect(may("f >= 5", [{ column: "f", lower: 1, upper: 2, nanCount: 3 }])).toBe(true);
    expect(may("f != 1", [{ column: "f", lower: 1, upper: 1 }])).toBe(true);
    expect(may("f < 1", maybeNaN)).toBe(false);
    expect(may("f = 5", maybeNaN)).toBe(false);
    expect(may("f = NaN", maybeNaN)).toBe(true);
    expect(may("f = NaN", noNaN)).toBe(false);
    expect(may("f < NaN", noNaN)).toBe(true);
  });
  it("no facts, no pruning", () => {
    for (const where of ["i = 1", "f > 1", "s < 'a'", "i IS NULL", "i IS NOT NULL", "NOT (i IN (1))"]) expect(may(where, [])).toBe(true);
  });
  it("strings compare by code point, as UTF-8 bounds do", () => {
    // U+FF61 sorts after U+1F600 in UTF-16 units but before it by code point.
    expect(may("s = '\u{1F600}'", [{ column: "s", lower: "a", upper: "\uFF61" }])).toBe(false);
    expect(may("s = '\uFF61'", [{ column: "s", lower: "a", upper: "\u{1F600}" }])).toBe(true);
  });
  it("matches (bucket and truncate partitions) refutes equality only", () => {
    const odd: ColumnFacts[] = [{ column: "i", matches: (v) => typeof v === "bigint" && v % 2n === 1n }];
    expect(may("i = 2", odd)).toBe(false);
    expect(may("i IN (2, 4)", odd)).toBe(false);
    expect(may("i IN (2, 3)", odd)).toBe(true);
    expect(may("i > 2", odd)).toBe(true);
  });
});

describe("Iceberg bucket hash (spec Appendix B test vectors)", () => {
  it("murmur3 of the spec's values", () => {
    const col = (type: ScanColumn["type"]): ScanColumn => ({ name: "c", type, formatType: type });
    expect(murmur3(new TextEncoder().encode("iceberg"))).toBe(1210000089);
    const long34 = new Uint8Array(8);
    long34[0] = 34;
    expect(murmur3(long34)).toBe(2017239379);
    expect(bucketOf(col("int"), 34n, 2147483647)).toBe(2017239379 % 2147483647);
    expect(bucketOf(col("date"), 17486, 2147483647)).toBe((-653330422 & 0x7fffffff) % 2147483647);
    expect(bucketOf(col("timestamp"), 1510871468000000n, 2147483647)).toBe((-2047944441 & 0x7fffffff) % 2147483647);
    expect(bucketOf({ name: "c", type: "decimal", scale: 2, formatType: "decimal(9,2)" }, 1420n, 2147483647)).toBe((-500754589 & 0x7fffffff) % 2147483647);
    expect(bucketOf(col("binary"), new Uint8Array([0, 1, 2, 3]), 2147483647)).toBe((-188683207 & 0x7fffffff) % 2147483647);
  });
});
