/**
 * A bound filter on one row (lib/scan/bind.ts has the semantics): SQL's three-valued logic, NULL
 * compared with anything unknown, NaN above every other value and equal to itself. The planner
 * prunes files; this decides rows.
 */
import type { ScanValue } from "../formats/scan-files.ts";
import { compareValues } from "../formats/scan-values.ts";
import type { BoundFilter } from "./bind.ts";
import { holds } from "./bind.ts";
import { FilterSyntaxError } from "./expression.ts";

const isNaNValue = (v: ScanValue): boolean => typeof v === "number" && Number.isNaN(v);

/** The order of a row's value and a literal, NaN greatest; null when they do not compare. */
export function rowOrder(value: ScanValue, literal: ScanValue): number | null {
  const a = isNaNValue(value);
  const b = isNaNValue(literal);
  if (a || b) return a && b ? 0 : a ? 1 : -1;
  return compareValues(value, literal);
}

/** Refuses, before any row is read, a filter with a leaf rows cannot be judged on (a nested column). */
export function checkRowFilter(filter: BoundFilter): void {
  if (filter.kind === "and" || filter.kind === "or") {
    checkRowFilter(filter.left);
    checkRowFilter(filter.right);
  } else if (filter.kind === "unknown" && !filter.row) {
    throw new FilterSyntaxError(`column "${filter.column.name}" is ${filter.column.formatType}: rows cannot be filtered on it with this literal`, 0);
  }
}

/** The filter's truth value on a row (`cellOf` gives a column's value); a row matches only when true. */
export function evaluate(filter: BoundFilter, cellOf: (column: string) => ScanValue | null): boolean | null {
  switch (filter.kind) {
    case "and": {
      const left = evaluate(filter.left, cellOf);
      if (left === false) return false;
      const right = evaluate(filter.right, cellOf);
      return right === false ? false : left === null || right === null ? null : true;
    }
    case "or": {
      const left = evaluate(filter.left, cellOf);
      if (left === true) return true;
      const right = evaluate(filter.right, cellOf);
      return right === true ? true : left === null || right === null ? null : false;
    }
    case "never":
      return null;
    case "null-check": {
      const isNull = cellOf(filter.column.name) === null;
      return filter.negated ? !isNull : isNull;
    }
    case "unknown":
      return filter.row ? filter.row(cellOf(filter.column.name)) : null;
    case "compare": {
      const value = cellOf(filter.column.name);
      if (value === null) return null;
      const order = rowOrder(value, filter.value);
      return order === null ? null : holds(filter.op, order);
    }
    case "in": {
      const value = cellOf(filter.column.name);
      if (value === null) return null;
      const found = filter.values.some((v) => rowOrder(value, v) === 0);
      const result = found ? true : filter.hasNull ? null : false;
      return result === null ? null : result !== filter.negated;
    }
  }
}
