/**
 * The row filter language of `files --where` and `table.plan({ filter })`: a small SQL-like
 * boolean expression.
 *
 *   expr     := or
 *   or       := and ("OR" and)*
 *   and      := not ("AND" not)*
 *   not      := "NOT" not | primary
 *   primary  := "(" expr ")" | column cmp literal | literal cmp column
 *             | column ["NOT"] "IN" "(" literal ("," literal)* ")" | column "IS" ["NOT"] "NULL"
 *   cmp      := = | != | <> | < | <= | > | >=
 *   literal  := number | NaN | 'string' ('' escapes ') | TRUE | FALSE | NULL
 *             | DATE 'YYYY-MM-DD' | TIMESTAMP 'YYYY-MM-DD HH:MM:SS[.ffffff][Z|±HH:MM]'
 *   column   := name ([A-Za-z_][A-Za-z0-9_]*) | "quoted name" ("" escapes ")
 * Keywords are case-insensitive. A hand parser (the grammar is a dozen lines; a parser library
 * would be a dependency for less code than its glue): every error names the 1-based position.
 */

export type CompareOp = "=" | "!=" | "<" | "<=" | ">" | ">=";

export type Literal =
  | { type: "null" }
  | { type: "boolean"; value: boolean }
  /** The number as written (kept as text so a long or decimal loses nothing). */
  | { type: "number"; text: string }
  | { type: "string"; value: string }
  | { type: "date"; text: string }
  | { type: "timestamp"; text: string };

export type Expr =
  | { kind: "compare"; column: string; op: CompareOp; value: Literal; position: number }
  | { kind: "in"; column: string; values: Literal[]; negated: boolean; position: number }
  | { kind: "null-check"; column: string; negated: boolean; position: number }
  | { kind: "and"; left: Expr; right: Expr }
  | { kind: "or"; left: Expr; right: Expr }
  | { kind: "not"; expr: Expr };

/** A filter that does not parse: the message names the position (1-based) and what was found. */
export class FilterSyntaxError extends Error {
  readonly position: number;
  constructor(message: string, position: number) {
    super(message);
    this.name = "FilterSyntaxError";
    this.position = position;
  }
}

type Token =
  | { kind: "name"; text: string; quoted: boolean; position: number }
  | { kind: "number"; text: string; position: number }
  | { kind: "string"; text: string; position: number }
  | { kind: "op"; text: string; position: number }
  | { kind: "end"; position: number };

const describe = (t: Token): string => (t.kind === "end" ? "the end" : t.kind === "string" ? `'${t.text}'` : t.kind === "name" && t.quoted ? `"${t.text}"` : `"${t.text}"`);

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    const position = i + 1;
    if (/\s/.test(c)) {
      i++;
    } else if (c === "'" || c === '"') {
      let value = "";
      i++;
      for (;;) {
        if (i >= text.length) throw new FilterSyntaxError(`unterminated ${c === "'" ? "string" : "quoted name"} starting at position ${position}`, position);
        if (text[i] === c) {
          if (text[i + 1] === c) {
            value += c;
            i += 2;
            continue;
          }
          i++;
          break;
        }
        value += text[i];
        i++;
      }
      tokens.push(c === "'" ? { kind: "string", text: value, position } : { kind: "name", text: value, quoted: true, position });
    } else if (/[0-9]/.test(c) || ((c === "-" || c === "+" || c === ".") && /[0-9.]/.test(text[i + 1] ?? ""))) {
      const m = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?/.exec(text.slice(i));
      if (!m) throw new FilterSyntaxError(`not a number at position ${position}`, position);
      tokens.push({ kind: "number", text: m[0], position });
      i += m[0].length;
    } else if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(i))!;
      tokens.push({ kind: "name", text: m[0], quoted: false, position });
      i += m[0].length;
    } else {
      const op = ["<=", ">=", "!=", "<>", "=", "<", ">", "(", ")", ","].find((o) => text.startsWith(o, i));
      if (!op) throw new FilterSyntaxError(`unexpected character "${c}" at position ${position}`, position);
      tokens.push({ kind: "op", text: op === "<>" ? "!=" : op, position });
      i += op.length;
    }
  }
  tokens.push({ kind: "end", position: text.length + 1 });
  return tokens;
}

const KEYWORDS = new Set(["and", "or", "not", "in", "is", "null", "true", "false", "date", "timestamp", "nan"]);
const COMPARE_OPS = new Set(["=", "!=", "<", "<=", ">", ">="]);
const FLIPPED: Record<CompareOp, CompareOp> = { "=": "=", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<=" };

export function parseFilter(text: string): Expr {
  const tokens = tokenize(text);
  let at = 0;
  const peek = (): Token => tokens[at]!;
  const next = (): Token => tokens[at++]!;
  const isKeyword = (t: Token, word: string) => t.kind === "name" && !t.quoted && t.text.toLowerCase() === word;
  const isOp = (t: Token, op: string) => t.kind === "op" && t.text === op;
  const fail = (t: Token, expected: string): never => {
    throw new FilterSyntaxError(`expected ${expected} at position ${t.position}, found ${describe(t)}`, t.position);
  };
  const expectOp = (op: string) => (isOp(peek(), op) ? next() : fail(peek(), `"${op}"`));

  const literalAt = (): Literal | null => {
    const t = peek();
    if (t.kind === "number") {
      next();
      return { type: "number", text: t.text };
    }
    if (t.kind === "string") {
      next();
      return { type: "string", value: t.text };
    }
    if (t.kind !== "name" || t.quoted) return null;
    const word = t.text.toLowerCase();
    if (word === "null") return (next(), { type: "null" });
    if (word === "true" || word === "false") return (next(), { type: "boolean", value: word === "true" });
    if (word === "nan") return (next(), { type: "number", text: "NaN" });
    if (word === "date" || word === "timestamp") {
      next();
      const s = peek();
      if (s.kind !== "string") fail(s, `a quoted ${word} after ${word.toUpperCase()}`);
      next();
      const value = (s as { text: string }).text;
      if (word === "date" && !/^-?\d{4,}-\d{2}-\d{2}$/.test(value)) throw new FilterSyntaxError(`not a date at position ${s.position}: '${value}' (expected 'YYYY-MM-DD')`, s.position);
      if (word === "timestamp" && !/^-?\d{4,}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?)?(Z|[+-]\d{2}:?\d{2})?$/.test(value)) {
        throw new FilterSyntaxError(`not a timestamp at position ${s.position}: '${value}' (expected 'YYYY-MM-DD HH:MM:SS[.ffffff][Z|+HH:MM]')`, s.position);
      }
      return { type: word, text: value };
    }
    return null;
  };

  const columnAt = (): { name: string; position: number } | null => {
    const t = peek();
    if (t.kind !== "name") return null;
    if (!t.quoted && KEYWORDS.has(t.text.toLowerCase())) return null;
    next();
    return { name: t.text, position: t.position };
  };

  const primary = (): Expr => {
    if (isOp(peek(), "(")) {
      next();
      const inner = or();
      expectOp(")");
      return inner;
    }
    const start = peek();
    const column = columnAt();
    if (column) {
      const t = peek();
      if (isKeyword(t, "is")) {
        next();
        const negated = isKeyword(peek(), "not") ? (next(), true) : false;
        if (!isKeyword(peek(), "null")) fail(peek(), "NULL after IS");
        next();
        return { kind: "null-check", column: column.name, negated, position: column.position };
      }
      if (isKeyword(t, "not") || isKeyword(t, "in")) {
        const negated = isKeyword(t, "not") ? (next(), true) : false;
        if (!isKeyword(peek(), "in")) fail(peek(), "IN after NOT");
        next();
        expectOp("(");
        const values: Literal[] = [];
        for (;;) {
          const value = literalAt() ?? fail(peek(), "a literal in the IN list");
          values.push(value);
          if (isOp(peek(), ",")) {
            next();
            continue;
          }
          expectOp(")");
          break;
        }
        return { kind: "in", column: column.name, values, negated, position: column.position };
      }
      if (t.kind === "op" && COMPARE_OPS.has(t.text)) {
        next();
        const value = literalAt() ?? (peek().kind === "name" ? fail(peek(), "a literal (comparing two columns is not supported)") : fail(peek(), "a literal"));
        return { kind: "compare", column: column.name, op: t.text as CompareOp, value, position: column.position };
      }
      return fail(t, `a comparison, IN or IS after column "${column.name}"`);
    }
    const literal = literalAt();
    if (literal) {
      const t = peek();
      if (t.kind !== "op" || !COMPARE_OPS.has(t.text)) return fail(t, "a comparison after the literal");
      next();
      const other = columnAt() ?? fail(peek(), "a column");
      return { kind: "compare", column: other.name, op: FLIPPED[t.text as CompareOp], value: literal, position: other.position };
    }
    return fail(start, "a column, a literal or \"(\"");
  };

  const not = (): Expr => {
    if (isKeyword(peek(), "not")) {
      next();
      return { kind: "not", expr: not() };
    }
    return primary();
  };
  const and = (): Expr => {
    let left = not();
    while (isKeyword(peek(), "and")) {
      next();
      left = { kind: "and", left, right: not() };
    }
    return left;
  };
  const or = (): Expr => {
    let left = and();
    while (isKeyword(peek(), "or")) {
      next();
      left = { kind: "or", left, right: and() };
    }
    return left;
  };

  if (tokens.length === 1) throw new FilterSyntaxError("empty filter", 1);
  const expr = or();
  if (peek().kind !== "end") fail(peek(), "AND, OR or the end");
  return expr;
}

/** The expression as text the parser reads back to the same tree. */
export function formatFilter(expr: Expr): string {
  const lit = (l: Literal): string => {
    switch (l.type) {
      case "null":
        return "NULL";
      case "boolean":
        return l.value ? "TRUE" : "FALSE";
      case "number":
        return l.text;
      case "string":
        return `'${l.value.replaceAll("'", "''")}'`;
      case "date":
        return `DATE '${l.text}'`;
      case "timestamp":
        return `TIMESTAMP '${l.text}'`;
    }
  };
  const col = (name: string) => `"${name.replaceAll('"', '""')}"`;
  switch (expr.kind) {
    case "compare":
      return `${col(expr.column)} ${expr.op} ${lit(expr.value)}`;
    case "in":
      return `${col(expr.column)} ${expr.negated ? "NOT IN" : "IN"} (${expr.values.map(lit).join(", ")})`;
    case "null-check":
      return `${col(expr.column)} IS ${expr.negated ? "NOT NULL" : "NULL"}`;
    case "and":
      return `(${formatFilter(expr.left)} AND ${formatFilter(expr.right)})`;
    case "or":
      return `(${formatFilter(expr.left)} OR ${formatFilter(expr.right)})`;
    case "not":
      return `NOT (${formatFilter(expr.expr)})`;
  }
}
