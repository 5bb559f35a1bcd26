/**
 * The function-length budget: the functions over biome.jsonc's noExcessiveLinesPerFunction limit
 * are compared with a checked-in list (function-length-budget.json), which may only shrink. A long
 * function not on the list fails the check; one on the list that got short enough is reported so
 * the list can be lowered (`--update`, which only ever removes entries).
 */
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";

/** One function over the limit, as the linter found it. */
export interface LongFunction {
  /** "path/from/repo/root.ts: functionName", the entry's form in the budget file. */
  id: string;
  /** Lines as Biome counts them. */
  lines: number;
  line: number;
}

export interface BudgetFile {
  "//"?: string;
  functions: string[];
}

export interface BudgetCheck {
  /** Over the limit and not in the budget: what fails the check. */
  added: LongFunction[];
  /** In the budget but no longer over the limit (shortened, renamed or removed): the budget can go down. */
  stale: string[];
  /** Over the limit and in the budget. */
  known: LongFunction[];
}

/** A Biome diagnostic as its JSON reporter prints it (only the fields read here). */
export interface BiomeDiagnostic {
  category: string;
  severity: string;
  message: string;
  location: { path: string; start: { line: number; column: number } };
}

export const RULE = "lint/complexity/noExcessiveLinesPerFunction";

/** Biome's report of this one rule over the folder `cwd`, with the biome.jsonc found there. */
export function biomeReport(cwd: string): { diagnostics: BiomeDiagnostic[] } {
  const biome = createRequire(import.meta.url).resolve("@biomejs/biome/bin/biome");
  const args = [biome, "lint", `--only=${RULE.replace(/^lint\//, "")}`, "--diagnostic-level=warn", "--max-diagnostics=none", "--reporter=json", "."];
  let stdout: string;
  try {
    stdout = execFileSync(process.execPath, args, { cwd, encoding: "utf8", maxBuffer: 64 << 20, stdio: ["ignore", "pipe", "pipe"] });
  } catch (error) {
    // Biome exits non-zero when the run has errors; the report is still on stdout.
    stdout = (error as { stdout?: string }).stdout ?? "";
    if (!stdout.trim().startsWith("{")) throw new Error(`biome lint failed: ${(error as { stderr?: string }).stderr?.trim() || (error as Error).message}`);
  }
  return JSON.parse(stdout) as { diagnostics: BiomeDiagnostic[] };
}

/**
 * The long functions in Biome's JSON report. Only warnings count: `--only` also turns the rule on,
 * at info level and with Biome's default limit, in files outside biome.jsonc's budget override.
 */
export function longFunctions(report: { diagnostics: BiomeDiagnostic[] }, readSource: (path: string) => string): LongFunction[] {
  const found: LongFunction[] = [];
  for (const diagnostic of report.diagnostics) {
    if (diagnostic.category !== RULE || (diagnostic.severity !== "warning" && diagnostic.severity !== "error")) continue;
    const { path, start } = diagnostic.location;
    const lines = Number(/\((\d+)\)/.exec(diagnostic.message)?.[1] ?? Number.NaN);
    if (!Number.isInteger(lines)) throw new Error(`${path}:${start.line}: unexpected ${RULE} message (${diagnostic.message}): is Biome still the pinned version?`);
    const sourceLines = readSource(path).split("\n");
    found.push({ id: `${path}: ${functionName(sourceLines, start.line, start.column)}`, lines, line: start.line });
  }
  return found.sort((a, b) => a.id.localeCompare(b.id) || a.line - b.line);
}

/**
 * The name a function is known by, from the source where Biome says it starts (1-based line and
 * column): a declaration's or method's own name, else the variable or property it is assigned to.
 * Line numbers are not part of the name, so edits elsewhere in the file do not change it.
 */
export function functionName(sourceLines: readonly string[], line: number, column: number): string {
  const text = sourceLines[line - 1] ?? "";
  const from = text.slice(column - 1);
  const declared = /^(?:export\s+)?(?:default\s+)?(?:async\s+)?function\s*\*?\s*([\w$]+)/.exec(from);
  if (declared) return declared[1]!;
  const method = /^(?:(?:public|private|protected|static|override|async|get|set)\s+)*(#?[\w$]+)\s*(?:<[^>]*>)?\(/.exec(from);
  if (method && method[1] !== "function" && method[1] !== "async") return method[1]!;
  const assigned = /(#?[\w$]+)\s*(?::[^=]*)?[=:]\s*$/.exec(text.slice(0, column - 1).trimEnd());
  if (assigned) return assigned[1]!;
  return `(anonymous) ${text.trim().slice(0, 60)}`;
}

export function checkBudget(found: readonly LongFunction[], budget: BudgetFile): BudgetCheck {
  const allowed = new Map<string, number>();
  for (const id of budget.functions) allowed.set(id, (allowed.get(id) ?? 0) + 1);
  const added: LongFunction[] = [];
  const known: LongFunction[] = [];
  for (const fn of found) {
    const left = allowed.get(fn.id) ?? 0;
    if (left > 0) {
      allowed.set(fn.id, left - 1);
      known.push(fn);
    } else {
      added.push(fn);
    }
  }
  const stale = [...allowed].flatMap(([id, left]) => Array<string>(left).fill(id));
  return { added, stale, known };
}

/** The budget with its stale entries removed; never adds one (a new long function is added by hand, in review). */
export function loweredBudget(budget: BudgetFile, check: BudgetCheck): BudgetFile {
  const remove = [...check.stale];
  const functions = budget.functions.filter((id) => {
    const at = remove.indexOf(id);
    if (at < 0) return true;
    remove.splice(at, 1);
    return false;
  });
  return { ...budget, functions };
}
