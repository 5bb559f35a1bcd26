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
const DATE_TEXT = /^-?\d{4,}-\d{2}-\d{2}$/;
const TIMESTAMP_TEXT = /^-?\d{4,}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?)?(Z|[+-]\d{2}:?\d{2})?$/;
const FLIPPED: Record<CompareOp, CompareOp> = { "=": "=", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<=" };

export function parseFilter(text: string): Expr {
  return new FilterParser(tokenize(text)).parse();
}

class FilterParser {
  private at = 0;
  private readonly tokens: Token[];

  constructor(tokens: Token[]) {
    this.tokens = tokens;
  }

  parse(): Expr {
    if (this.tokens.length === 1) throw new FilterSyntaxError("empty filter", 1);
    const expr = this.or();
    if (this.peek().kind !== "end") this.fail(this.peek(), "AND, OR or the end");
    return expr;
  }

  private peek(): Token {
    return this.tokens[this.at]!;
  }
  private next(): Token {
    return this.tokens[this.at++]!;
  }
  private isKeyword(t: Token, word: string): boolean {
    return t.kind === "name" && !t.quoted && t.text.toLowerCase() === word;
  }
  private isOp(t: Token, op: string): boolean {
    return t.kind === "op" && t.text === op;
  }
  private fail(t: Token, expected: string): never {
    throw new FilterSyntaxError(`expected ${expected} at position ${t.position}, found ${describe(t)}`, t.position);
  }
  private expectOp(op: string): Token {
    return this.isOp(this.peek(), op) ? this.next() : this.fail(this.peek(), `"${op}"`);
  }
  /** Takes the keyword if it is next; says whether it was. */
  private take(word: string): boolean {
    if (!this.isKeyword(this.peek(), word)) return false;
    this.next();
    return true;
  }

  private literal(): Literal | null {
    const t = this.peek();
    if (t.kind === "number" || t.kind === "string") {
      this.next();
      return t.kind === "number" ? { type: "number", text: t.text } : { type: "string", value: t.text };
    }
    if (t.kind !== "name" || t.quoted) return null;
    const word = t.text.toLowerCase();
    if (word === "null" || word === "true" || word === "false" || word === "nan") {
      this.next();
      if (word === "null") return { type: "null" };
      return word === "nan" ? { type: "number", text: "NaN" } : { type: "boolean", value: word === "true" };
    }
    if (word !== "date" && word !== "timestamp") return null;
    this.next();
    const s = this.peek();
    if (s.kind !== "string") return this.fail(s, `a quoted ${word} after ${word.toUpperCase()}`);
    this.next();
    if (word === "date" && !DATE_TEXT.test(s.text)) throw new FilterSyntaxError(`not a date at position ${s.position}: '${s.text}' (expected 'YYYY-MM-DD')`, s.position);
    if (word === "timestamp" && !TIMESTAMP_TEXT.test(s.text)) {
      throw new FilterSyntaxError(`not a timestamp at position ${s.position}: '${s.text}' (expected 'YYYY-MM-DD HH:MM:SS[.ffffff][Z|+HH:MM]')`, s.position);
    }
    return { type: word, text: s.text };
  }

  private column(): { name: string; position: number } | null {
    const t = this.peek();
    if (t.kind !== "name" || (!t.quoted && KEYWORDS.has(t.text.toLowerCase()))) return null;
    this.next();
    return { name: t.text, position: t.position };
  }

  private inList(): Literal[] {
    this.expectOp("(");
    const values: Literal[] = [];
    for (;;) {
      values.push(this.literal() ?? this.fail(this.peek(), "a literal in the IN list"));
      if (!this.isOp(this.peek(), ",")) break;
      this.next();
    }
    this.expectOp(")");
    return values;
  }

  /** What follows a column: IS [NOT] NULL, [NOT] IN (...), or a comparison. */
  private afterColumn(column: { name: string; position: number }): Expr {
    const t = this.peek();
    if (this.take("is")) {
      const negated = this.take("not");
      if (!this.take("null")) this.fail(this.peek(), "NULL after IS");
      return { kind: "null-check", column: column.name, negated, position: column.position };
    }
    if (this.isKeyword(t, "not") || this.isKeyword(t, "in")) {
      const negated = this.take("not");
      if (!this.take("in")) this.fail(this.peek(), "IN after NOT");
      return { kind: "in", column: column.name, values: this.inList(), negated, position: column.position };
    }
    if (t.kind === "op" && COMPARE_OPS.has(t.text)) {
      this.next();
      const value = this.literal() ?? this.fail(this.peek(), this.peek().kind === "name" ? "a literal (comparing two columns is not supported)" : "a literal");
      return { kind: "compare", column: column.name, op: t.text as CompareOp, value, position: column.position };
    }
    return this.fail(t, `a comparison, IN or IS after column "${column.name}"`);
  }

  private primary(): Expr {
    if (this.isOp(this.peek(), "(")) {
      this.next();
      const inner = this.or();
      this.expectOp(")");
      return inner;
    }
    const start = this.peek();
    const column = this.column();
    if (column) return this.afterColumn(column);
    const literal = this.literal();
    if (!literal) return this.fail(start, 'a column, a literal or "("');
    const t = this.peek();
    if (t.kind !== "op" || !COMPARE_OPS.has(t.text)) return this.fail(t, "a comparison after the literal");
    this.next();
    const other = this.column() ?? this.fail(this.peek(), "a column");
    return { kind: "compare", column: other.name, op: FLIPPED[t.text as CompareOp], value: literal, position: other.position };
  }

  private not(): Expr {
    return this.take("not") ? { kind: "not", expr: this.not() } : this.primary();
  }
  private and(): Expr {
    let left = this.not();
    while (this.take("and")) left = { kind: "and", left, right: this.not() };
    return left;
  }
  private or(): Expr {
    let left = this.and();
    while (this.take("or")) left = { kind: "or", left, right: this.and() };
    return left;
  }
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
