/** The --where language: what parses to what, and errors that name the position. */
import { describe, expect, it } from "vitest";
import { formatFilter, FilterSyntaxError, parseFilter } from "../../lib/scan/expression.ts";
import { bindFilter } from "../../lib/scan/bind.ts";
import type { ScanColumn } from "../../lib/formats/scan-files.ts";

describe("parseFilter", () => {
  it("precedence: NOT over AND over OR; literal-first comparisons flip", () => {
    expect(formatFilter(parseFilter("a = 1 OR b < 2 AND NOT c IS NULL"))).toBe(`("a" = 1 OR ("b" < 2 AND NOT ("c" IS NULL)))`);
    expect(parseFilter("5 < x")).toMatchObject({ kind: "compare", column: "x", op: ">", value: { type: "number", text: "5" } });
    expect(parseFilter("x <> 'it''s'")).toMatchObject({ op: "!=", value: { type: "string", value: "it's" } });
    expect(parseFilter(`"my col" not in (1, -2.5e3, NULL)`)).toMatchObject({
      kind: "in",
      column: "my col",
      negated: true,
      values: [{ text: "1" }, { text: "-2.5e3" }, { type: "null" }],
    });
    expect(parseFilter("d >= DATE '2024-02-29' and t < timestamp '2024-01-01 10:00:00.5Z'")).toMatchObject({
      kind: "and",
      left: { value: { type: "date" } },
      right: { value: { type: "timestamp" } },
    });
    expect(parseFilter("f = NaN or b = true")).toMatchObject({ kind: "or", left: { value: { text: "NaN" } }, right: { value: { type: "boolean", value: true } } });
  });

  it("round-trips through formatFilter", () => {
    for (const text of ["a = 1", "NOT (a IN ('x', 'y') OR b IS NOT NULL)", `"q""uote" <= DATE '2020-01-01'`]) {
      // Positions differ (names come back quoted); the trees do not.
      const tree = (t: string) => JSON.parse(JSON.stringify(parseFilter(t), (k, v) => (k === "position" ? undefined : v)));
      expect(tree(formatFilter(parseFilter(text)))).toEqual(tree(text));
    }
  });

  const errors: [string, RegExp][] = [
    ["", /empty filter/],
    ["a = ", /expected a literal at position 5, found the end/],
    ["a = 1 AND", /position 10/],
    ["a >> 1", /expected a literal at position 4, found ">"/],
    ["a = b", /comparing two columns is not supported/],
    ["(a = 1", /expected "\)" at position 7/],
    ["a = 'open", /unterminated string starting at position 5/],
    ["a IN 1", /expected "\(" at position 6/],
    ["a = 1 b = 2", /expected AND, OR or the end at position 7/],
    ["a = DATE '2024-1-1'", /not a date at position 10/],
    ["a # 1", /unexpected character "#" at position 3/],
    ["a IS 1", /NULL after IS at position 6/],
  ];
  for (const [text, message] of errors) {
    it(`refuses ${JSON.stringify(text)} with the position`, () => {
      expect(() => parseFilter(text)).toThrow(FilterSyntaxError);
      expect(() => parseFilter(text)).toThrow(message);
    });
  }
});

describe("bindFilter", () => {
  const columns: ScanColumn[] = [
    { name: "id", type: "int", formatType: "long" },
    { name: "name", type: "string", formatType: "string" },
    { name: "day", type: "date", formatType: "date" },
    { name: "price", type: "decimal", scale: 2, formatType: "decimal(9,2)" },
  ];
  it("pushes NOT down to the leaves and types the literals", () => {
    expect(bindFilter(parseFilter("NOT (id < 5 AND name IS NULL)"), columns)).toMatchObject({
      kind: "or",
      left: { kind: "compare", op: ">=", value: 5n },
      right: { kind: "null-check", negated: true },
    });
    expect(bindFilter(parseFilter("day = '1970-01-02'"), columns)).toMatchObject({ value: 1 });
    expect(bindFilter(parseFilter("price = 1.5"), columns)).toMatchObject({ value: 150n });
    // More digits than the scale: no exact value, so the leaf never prunes.
    expect(bindFilter(parseFilter("price = 1.505"), columns)).toMatchObject({ kind: "unknown" });
    expect(bindFilter(parseFilter("id = NULL"), columns)).toEqual({ kind: "never" });
  });
  it("names unknown columns and mistyped literals with their position", () => {
    expect(() => bindFilter(parseFilter("id = 1 AND nam = 'x'"), columns)).toThrow(/unknown column "nam" at position 12 \(columns: id, name, day, price\)/);
    expect(() => bindFilter(parseFilter("id = 'x'"), columns)).toThrow(/column "id" is long: 'x' at position 1 is not a number/);
    expect(() => bindFilter(parseFilter("day < 'soon'"), columns)).toThrow(/is not a date/);
  });
});
