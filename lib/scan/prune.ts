/**
 * Whether a file may hold a row matching a bound filter, from the facts its format gives
 * (lib/formats/scan-files.ts). A file is dropped only when some fact proves that no row can
 * match; anything else (a missing count, a NaN the bounds do not cover, a value that does not
 * compare) keeps it.
 */
import type { ColumnFacts, FileFacts, ScanValue } from "../formats/scan-files.ts";
import { compareValues } from "../formats/scan-values.ts";
import type { BoundFilter } from "./bind.ts";

type Leaf = Extract<BoundFilter, { kind: "compare" | "in" | "null-check" }>;

const isNaNValue = (v: ScanValue) => typeof v === "number" && Number.isNaN(v);

/** True when `fact` proves that no row of the file satisfies `leaf`. */
function refutes(fact: ColumnFacts, leaf: Leaf): boolean {
  const allNull = fact.nullCount !== undefined && fact.valueCount !== undefined && fact.nullCount >= fact.valueCount;
  if (leaf.kind === "null-check") return leaf.negated ? allNull : fact.nullCount === 0;
  // Every comparison and IN is unknown on NULL: a file of nulls only holds no match.
  if (allNull) return true;
  // NaN sorts above every value and equals itself, and bounds never cover it: unless the file
  // is known to hold none, a comparison NaN can satisfy cannot be refuted by the bounds.
  const mayHoldNaN = leaf.column.type === "float" && fact.nanCount !== 0;
  const lower = fact.lower;
  const upper = fact.upper;
  const cmp = (a: ScanValue | undefined, b: ScanValue): number | null => (a === undefined ? null : compareValues(a, b));

  const refutesEqual = (value: ScanValue): boolean => {
    if (isNaNValue(value)) return !mayHoldNaN && leaf.column.type === "float";
    if (fact.matches && !fact.matches(value)) return true;
    const belowLower = cmp(lower, value);
    const aboveUpper = cmp(upper, value);
    return (belowLower !== null && belowLower > 0) || (aboveUpper !== null && aboveUpper < 0);
  };
  /** Every non-null value of the file is the one value `value` (bounds equal to it, no NaN). */
  const onlyValue = (value: ScanValue): boolean => !mayHoldNaN && cmp(lower, value) === 0 && cmp(upper, value) === 0;

  if (leaf.kind === "in") {
    if (leaf.negated) return leaf.hasNull || leaf.values.some(onlyValue);
    return leaf.values.every(refutesEqual);
  }
  const value = leaf.value;
  switch (leaf.op) {
    case "=":
      return refutesEqual(value);
    case "!=":
      return onlyValue(value);
    case "<":
    case "<=": {
      // Values below NaN are every value: x < NaN refutes nothing the bounds know.
      if (isNaNValue(value)) return false;
      const c = cmp(lower, value);
      return c !== null && (leaf.op === "<" ? c >= 0 : c > 0);
    }
    case ">":
    case ">=": {
      if (mayHoldNaN || isNaNValue(value)) return leaf.op === ">" && isNaNValue(value) && !mayHoldNaN && leaf.column.type === "float";
      const c = cmp(upper, value);
      return c !== null && (leaf.op === ">" ? c <= 0 : c < 0);
    }
  }
}

/** False only when the facts prove no row of the file matches `filter`. */
export function mayMatch(filter: BoundFilter, facts: readonly ColumnFacts[] | FileFacts): boolean {
  switch (filter.kind) {
    case "and":
      return mayMatch(filter.left, facts) && mayMatch(filter.right, facts);
    case "or":
      return mayMatch(filter.left, facts) || mayMatch(filter.right, facts);
    case "never":
      return false;
    case "unknown":
      return true;
    default:
      // Facts asked per column (FileFacts) come cheapest first: the first that refutes ends it.
      if ("of" in facts) {
        for (const fact of facts.of(filter.column.name)) if (refutes(fact, filter)) return false;
      } else {
        for (const fact of facts) if (fact.column === filter.column.name && refutes(fact, filter)) return false;
      }
      return true;
  }
}
