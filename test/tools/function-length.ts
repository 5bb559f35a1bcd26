/**
 * `npm run lint:functions`: the function-length budget (function-length-budget.ts). Prints every
 * function over the limit and fails when one is not in function-length-budget.json.
 * `--update` removes the entries that are no longer over the limit; it never adds one.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { biomeReport, checkBudget, longFunctions, loweredBudget } from "./function-length-budget.ts";
import type { BudgetFile } from "./function-length-budget.ts";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const budgetFile = join(root, "test", "tools", "function-length-budget.json");

try {
  const budget = JSON.parse(readFileSync(budgetFile, "utf8")) as BudgetFile;
  const found = longFunctions(biomeReport(root), (path) => readFileSync(join(root, path), "utf8"));
  const check = checkBudget(found, budget);
  for (const fn of found)
    console.log(`function-length: ${fn.lines} lines  ${fn.id} (line ${fn.line})${check.added.includes(fn) ? "  NEW: over the limit and not in the budget" : ""}`);
  for (const id of check.stale) console.log(`function-length: no longer over the limit: ${id}`);
  if (process.argv.includes("--update")) {
    writeFileSync(budgetFile, `${JSON.stringify(loweredBudget(budget, check), null, 2)}\n`);
    console.log(
      `function-length: budget lowered to ${budget.functions.length - check.stale.length} (removed ${check.stale.length}); commit test/tools/function-length-budget.json`,
    );
  } else if (check.stale.length > 0) {
    console.log(`function-length: the budget can go down by ${check.stale.length}: run npm run lint:functions -- --update and commit test/tools/function-length-budget.json`);
  }
  console.log(`function-length: ${found.length} functions over the limit, budget ${budget.functions.length}`);
  if (check.added.length > 0) {
    console.error(
      `function-length: ${check.added.length} new function(s) over the limit (biome.jsonc, noExcessiveLinesPerFunction): split them; the budget only goes down (docs/development.md)`,
    );
    process.exit(1);
  }
} catch (error) {
  console.error(`function-length: ${(error as Error).message}`);
  process.exit(1);
}
