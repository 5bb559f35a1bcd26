/**
 * A parsed filter bound to a table's columns: names resolved, literals turned into values of the
 * column's type (lib/formats/scan-files.ts ScanValue), and NOT pushed down to the leaves.
 *
 * Row semantics (what a matching row is, here and in lib/scan/rows.ts): SQL's, where a comparison
 * with NULL is unknown and a row matches only when the filter is true; NaN is a float value
 * greater than every other and equal to itself (Spark, DuckDB). Under these, NOT (x < 5) is
 * exactly x >= 5, so pushing NOT down changes no answer.
 */
import type { ScanColumn, ScanValue } from "../formats/scan-files.ts";
import { daysOf, timestampMicros, unscaledDecimal } from "../formats/scan-values.ts";
import type { CompareOp, Expr, Literal } from "./expression.ts";
import { FilterSyntaxError } from "./expression.ts";

export type BoundFilter =
  | { kind: "compare"; column: ScanColumn; op: CompareOp; value: ScanValue }
  | { kind: "in"; column: ScanColumn; values: ScanValue[]; hasNull: boolean; negated: boolean }
  | { kind: "null-check"; column: ScanColumn; negated: boolean }
  /**
   * A leaf the planner cannot judge (a type it does not compare, an inexact decimal): may match
   * anything. `row`, when the leaf can still be decided on a row's value: its SQL truth value.
   */
  | { kind: "unknown"; column: ScanColumn; row?: (value: ScanValue | null) => boolean | null }
  /** A leaf that is never true (a comparison with NULL). */
  | { kind: "never" }
  | { kind: "and"; left: BoundFilter; right: BoundFilter }
  | { kind: "or"; left: BoundFilter; right: BoundFilter };

const NEGATED: Record<CompareOp, CompareOp> = { "=": "!=", "!=": "=", "<": ">=", "<=": ">", ">": "<=", ">=": "<" };

const UNKNOWN = Symbol("unknown");

function literalWords(l: Literal): string {
  switch (l.type) {
    case "null":
      return "NULL";
    case "boolean":
      return String(l.value).toUpperCase();
    case "number":
      return l.text;
    case "string":
      return `'${l.value}'`;
    default:
      return `${l.type.toUpperCase()} '${l.text}'`;
  }
}

/** The literal as a value of the column's type; null for NULL; UNKNOWN when the planner cannot compare it exactly. */
function coerce(column: ScanColumn, literal: Literal, position: number): ScanValue | null | typeof UNKNOWN {
  if (literal.type === "null") return null;
  const bad = (expected: string): never => {
    throw new FilterSyntaxError(`column "${column.name}" is ${column.formatType}: ${literalWords(literal)} at position ${position} is not ${expected}`, position);
  };
  switch (column.type) {
    case "boolean":
      return literal.type === "boolean" ? literal.value : bad("TRUE or FALSE");
    case "int":
      if (literal.type !== "number") return bad("a number");
      return /^[-+]?\d+$/.test(literal.text) ? BigInt(literal.text) : Number(literal.text);
    case "float":
      return literal.type === "number" ? Number(literal.text) : bad("a number");
    case "decimal": {
      if (literal.type !== "number" && literal.type !== "string") return bad("a number");
      const text = literal.type === "number" ? literal.text : literal.value;
      if (!/^[-+]?(\d+\.?\d*|\.\d+)$/.test(text.trim())) return literal.type === "number" ? UNKNOWN : bad("a number");
      return unscaledDecimal(text, column.scale ?? 0) ?? UNKNOWN;
    }
    case "string":
      return literal.type === "string" ? literal.value : bad("a string");
    case "date": {
      if (literal.type === "timestamp") return UNKNOWN;
      const text = literal.type === "date" ? literal.text : literal.type === "string" ? literal.value : bad("a date (DATE 'YYYY-MM-DD')");
      return daysOf(text) ?? bad("a date (DATE 'YYYY-MM-DD')");
    }
    case "timestamp":
    case "timestamptz": {
      const text =
        literal.type === "timestamp" || literal.type === "date" ? literal.text : literal.type === "string" ? literal.value : bad("a timestamp (TIMESTAMP 'YYYY-MM-DD HH:MM:SS')");
      const t = timestampMicros(text) ?? bad("a timestamp (TIMESTAMP 'YYYY-MM-DD HH:MM:SS')");
      return t.micros;
    }
    default:
      return UNKNOWN;
  }
}

/** Binds `expr` to `columns` (top-level names, exact first, else case-insensitive when that is unambiguous). */
export function bindFilter(expr: Expr, columns: readonly ScanColumn[]): BoundFilter {
  const find = (name: string, position: number): ScanColumn => {
    const exact = columns.find((c) => c.name === name);
    if (exact) return exact;
    const folded = columns.filter((c) => c.name.toLowerCase() === name.toLowerCase());
    if (folded.length === 1) return folded[0]!;
    throw new FilterSyntaxError(`unknown column "${name}" at position ${position} (columns: ${columns.map((c) => c.name).join(", ")})`, position);
  };
  const bind = (e: Expr, negated: boolean): BoundFilter => {
    switch (e.kind) {
      case "and":
      case "or": {
        const kind = (e.kind === "and") !== negated ? "and" : "or";
        return { kind, left: bind(e.left, negated), right: bind(e.right, negated) };
      }
      case "not":
        return bind(e.expr, !negated);
      case "null-check":
        return { kind: "null-check", column: find(e.column, e.position), negated: e.negated !== negated };
      case "compare": {
        const column = find(e.column, e.position);
        const value = coerce(column, e.value, e.position);
        if (value === null) return { kind: "never" };
        const op = negated ? NEGATED[e.op] : e.op;
        if (value === UNKNOWN) return unknownLeaf(column, [e.value], (c) => (c === null ? null : holds(op, c)));
        return { kind: "compare", column, op, value };
      }
      case "in": {
        const column = find(e.column, e.position);
        const coerced = e.values.map((v) => coerce(column, v, e.position));
        const isNegated = e.negated !== negated;
        if (coerced.includes(UNKNOWN)) {
          const hasNull = coerced.includes(null);
          return unknownLeaf(
            column,
            e.values.filter((v) => v.type !== "null"),
            (...orders) => {
              const result = orders.some((c) => c === 0) ? true : hasNull ? null : false;
              return result === null ? null : result !== isNegated;
            },
          );
        }
        const values = coerced.filter((v): v is ScanValue => v !== null && v !== UNKNOWN);
        return { kind: "in", column, values, hasNull: values.length < coerced.length, negated: isNegated };
      }
    }
  };
  return bind(expr, false);
}

export function holds(op: CompareOp, order: number): boolean {
  return { "=": order === 0, "!=": order !== 0, "<": order < 0, "<=": order <= 0, ">": order > 0, ">=": order >= 0 }[op];
}

/** `value * 10^exponent` of a number text (exponent form included), or null when it is not one (NaN). */
function exactNumber(text: string): { mantissa: bigint; exponent: number } | null {
  const m = /^([-+]?)(\d*)(?:\.(\d*))?(?:[eE]([-+]?\d+))?$/.exec(text.trim());
  if (!m || (m[2] === "" && (m[3] ?? "") === "")) return null;
  const fraction = m[3] ?? "";
  const digits = BigInt((m[2] || "0") + fraction);
  return { mantissa: m[1] === "-" ? -digits : digits, exponent: Number(m[4] ?? 0) - fraction.length };
}

/** The order of a decimal column's value (unscaled at `scale`) and a number literal, exactly; NaN is above every value. */
function decimalOrder(unscaled: bigint, scale: number, literal: Literal): number | null {
  if (literal.type !== "number" && literal.type !== "string") return null;
  const text = literal.type === "number" ? literal.text : literal.value;
  if (/^[-+]?nan$/i.test(text.trim())) return -1;
  const n = exactNumber(text);
  if (!n) return null;
  const e = Math.min(n.exponent, -scale);
  const a = unscaled * 10n ** BigInt(-scale - e);
  const b = n.mantissa * 10n ** BigInt(n.exponent - e);
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * An "unknown" leaf, with a row test when its literals can be ordered against the column's
 * values exactly (a decimal against more digits than its scale, or NaN); `decide` gets one order
 * per literal and gives the leaf's truth value.
 */
function unknownLeaf(column: ScanColumn, literals: Literal[], decide: (...orders: (number | null)[]) => boolean | null): BoundFilter {
  if (column.type !== "decimal") return { kind: "unknown", column };
  const scale = column.scale ?? 0;
  if (literals.some((l) => decimalOrder(0n, scale, l) === null)) return { kind: "unknown", column };
  return {
    kind: "unknown",
    column,
    row: (value) => (typeof value === "bigint" ? decide(...literals.map((l) => decimalOrder(value, scale, l))) : null),
  };
}
