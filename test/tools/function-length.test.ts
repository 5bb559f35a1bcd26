/** The function-length budget: names from the source, the comparison with the budget, and Biome's real report. */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { biomeReport, checkBudget, functionName, longFunctions, loweredBudget } from "./function-length-budget.ts";
import type { LongFunction } from "./function-length-budget.ts";

const long = (id: string, lines = 100): LongFunction => ({ id, lines, line: 1 });

describe("function names", () => {
  const nameAt = (line: string, column: number) => functionName([line], 1, column);

  it("takes a declaration's own name, exported, async or a generator", () => {
    expect(nameAt("function plain(a: number): void {", 1)).toBe("plain");
    expect(nameAt("export async function cleanTable(run: RunContext): Promise<void> {", 8)).toBe("cleanTable");
    expect(nameAt("export default function* pages() {", 8)).toBe("pages");
  });

  it("takes a method's name", () => {
    expect(nameAt("  async acquire(store: ObjectStore): Promise<Lease> {", 3)).toBe("acquire");
    expect(nameAt("  static #decode<T>(bytes: Uint8Array): T {", 3)).toBe("#decode");
  });

  it("takes the variable or property an arrow function or function expression is assigned to", () => {
    expect(nameAt("const render = (data: ReportData): string => {", 16)).toBe("render");
    expect(nameAt("export const handler: Handler = async (event) => {", 33)).toBe("handler");
    expect(nameAt("  run: async () => {", 8)).toBe("run");
    expect(nameAt("  parse: function (text) {", 10)).toBe("parse");
  });

  it("names an anonymous callback by its line, without the line number", () => {
    expect(nameAt("  items.map((item) => {", 13)).toBe("(anonymous) items.map((item) => {");
  });
});

describe("the budget", () => {
  const budget = { functions: ["lib/a.ts: one", "lib/b.ts: two", "lib/b.ts: two"] };

  it("passes the functions it lists, however many lines they have", () => {
    const found = [long("lib/a.ts: one", 300), long("lib/b.ts: two"), long("lib/b.ts: two")];
    expect(checkBudget(found, budget)).toEqual({ added: [], stale: [], known: found });
  });

  it("reports a long function it does not list, also one more of a listed name", () => {
    const found = [long("lib/a.ts: one"), long("lib/a.ts: one"), long("lib/c.ts: three"), long("lib/b.ts: two"), long("lib/b.ts: two")];
    expect(checkBudget(found, budget).added.map((fn) => fn.id)).toEqual(["lib/a.ts: one", "lib/c.ts: three"]);
  });

  it("reports the entries no longer over the limit, and lowering removes exactly those", () => {
    const check = checkBudget([long("lib/b.ts: two")], budget);
    expect(check.stale).toEqual(["lib/a.ts: one", "lib/b.ts: two"]);
    expect(loweredBudget(budget, check).functions).toEqual(["lib/b.ts: two"]);
  });

  it("lowering never adds the new long functions", () => {
    const check = checkBudget([long("lib/a.ts: one"), long("lib/b.ts: two"), long("lib/b.ts: two"), long("lib/new.ts: fresh")], budget);
    expect(loweredBudget(budget, check).functions).toEqual(budget.functions);
  });
});

describe("on Biome's own report", () => {
  let dir: string;
  const source = (bodyLines: number) => Array.from({ length: bodyLines }, (_, i) => `  total += ${i};`).join("\n");

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "lakewarden-function-length-"));
    const rule = { level: "warn", options: { maxLines: 5 } };
    await writeFile(
      join(dir, "biome.json"),
      JSON.stringify({
        linter: { rules: { preset: "none" } },
        overrides: [{ includes: ["counted/**"], linter: { rules: { complexity: { noExcessiveLinesPerFunction: rule } } } }],
      }),
    );
    const code = [
      `export function longOne(): number {\n  let total = 0;\n${source(8)}\n  return total;\n}`,
      `export function shortOne(): number {\n  return 1;\n}`,
      `export const longArrow = (): number => {\n  let total = 0;\n${source(8)}\n  return total;\n};`,
    ].join("\n\n");
    await mkdir(join(dir, "counted"));
    await mkdir(join(dir, "outside"));
    await writeFile(join(dir, "counted", "code.ts"), `${code}\n`);
    await writeFile(join(dir, "outside", "code.ts"), `${code}\n`);
  });

  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("finds the long functions where the budget's override applies, by name, with Biome's line count", () => {
    const found = longFunctions(biomeReport(dir), (path) => readFileSync(join(dir, path), "utf8"));
    expect(found.map((fn) => fn.id)).toEqual(["counted/code.ts: longArrow", "counted/code.ts: longOne"]);
    for (const fn of found) expect(fn.lines).toBeGreaterThan(5);
  });
});
