/**
 * `lakewarden scan <table> [--where <expr>] [--columns a,b] [--limit n]`: the rows matching a
 * filter, one JSON object a line (lib/scan/json-rows.ts says how each type is written), read
 * from the table's state as a reader loads it: the head's plan, its inline footers, deletes applied,
 * the first data read started beside the check that the head is current (lib/head/first-scan.ts).
 */
import type { Command } from "commander";
import type { ProgramContext } from "../program.ts";
import { UsageError } from "../errors.ts";
import { catalogFormatOption, runOnTable, withCatalogOptions, withOutputOptions, TABLE_ARGUMENT_HELP } from "../table-command.ts";
import type { OutputOptions } from "../table-command.ts";
import type { TableState } from "../../head/loader.ts";
import { FilterSyntaxError } from "../../scan/expression.ts";
import { WHERE_HELP, whereFilter } from "./files.ts";

interface ScanCommandOptions extends OutputOptions {
  where?: string;
  columns?: string;
  limit?: string;
}

export const SCAN_HELP_AFTER = `
Each row is one JSON object. 64-bit integers and decimals are strings (JSON numbers lose digits
past 2^53); dates are YYYY-MM-DD, timestamps ISO 8601 with microseconds (Z when zoned), NaN and
infinities the strings "NaN", "Infinity", "-Infinity", binary base64. Delta and Iceberg tables.`;

function limitOf(text: string | undefined): number | null {
  if (text === undefined) return null;
  if (!/^\d+$/.test(text.trim())) throw new UsageError(`--limit: expected a whole number >= 0, got ${JSON.stringify(text)}`);
  return Number(text);
}

function columnsOf(text: string | undefined): string[] | null {
  if (text === undefined) return null;
  const names = text.split(",").map((c) => c.trim());
  if (names.some((n) => n === "")) throw new UsageError(`--columns: expected column names separated by commas, got ${JSON.stringify(text)}`);
  return names;
}

export function registerScanCommand(program: Command, { io }: ProgramContext): void {
  withOutputOptions(
    withCatalogOptions(
      program
        .command("scan")
        .description("the rows matching a filter, as JSON lines")
        .argument("<table>", TABLE_ARGUMENT_HELP)
        .option("--where <expr>", WHERE_HELP)
        .option("--columns <a,b>", "columns to print (default: all)")
        .option("--limit <n>", "at most n rows")
        .addHelpText("after", SCAN_HELP_AFTER),
    ),
  ).action(async (table: string, options: ScanCommandOptions) => {
    const filter = whereFilter(options.where);
    const columns = columnsOf(options.columns);
    const limit = limitOf(options.limit);
    await runOnTable(table, options, io, async (store) => {
      const [{ scanFromCold }, { jsonValue }] = await Promise.all([import("../../head/first-scan.ts"), import("../../scan/json-rows.ts")]);
      // The head's state is read beside the check that it is current (two round trips to data); no row is printed before the check.
      const onState = (state: TableState) => {
        if (state.warning) io.err(`lakewarden: warning: ${state.warning.message}\n`);
      };
      const cold = { ...(await catalogFormatOption(options, store)), checkedAt: Date.now(), onState };
      try {
        for await (const batch of scanFromCold(store, cold, { filter, columns, limit })) {
          const lines: string[] = [];
          for (let i = 0; i < batch.rows; i++) {
            lines.push(JSON.stringify(Object.fromEntries(batch.columns.map((c) => [c.name, jsonValue(c, batch.values.get(c.name)![i]!)]))));
          }
          io.out(`${lines.join("\n")}\n`);
        }
      } catch (error) {
        if (error instanceof FilterSyntaxError) throw new UsageError(error.position > 0 ? `--where: ${error.message}` : error.message);
        throw error;
      }
    });
  });
}
