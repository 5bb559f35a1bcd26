/**
 * `lakewarden files <table> [--where <expr>]`: the data files a query with that filter must read,
 * planned from the table's state as a reader loads it (the head when current), each with the
 * delete files that apply to it and whether the head inlines its footer. `--json` gives full
 * URIs, so another engine (DuckDB, Polars, Spark) can be handed the list.
 */
import type { Command } from "commander";
import type { ProgramContext } from "../program.ts";
import { UsageError } from "../errors.ts";
import { catalogFormatOption, printJson, runOnTable, withCatalogOptions, withOutputOptions, TABLE_ARGUMENT_HELP } from "../table-command.ts";
import type { OutputOptions } from "../table-command.ts";
import { loadTableState } from "../../head/loader.ts";
import type { TableState } from "../../head/loader.ts";
import type { ObjectStore } from "../../store/object-store.ts";
import { FilterSyntaxError, formatFilter, parseFilter } from "../../scan/expression.ts";
import type { Expr } from "../../scan/expression.ts";
import { planFiles } from "../../scan/plan.ts";
import type { ScanPlan } from "../../scan/plan.ts";
import { textTable } from "../text-table.ts";
import { formatBytes, plural } from "../../text/human-units.ts";

interface FilesOptions extends OutputOptions {
  where?: string;
}

export const WHERE_HELP = "row filter, e.g. \"id > 5 AND day = DATE '2024-01-31'\"";

/** Parses --where before anything is read: a syntax error is a usage error naming the position. */
export function whereFilter(where: string | undefined): Expr | null {
  if (where === undefined) return null;
  try {
    return parseFilter(where);
  } catch (error) {
    if (error instanceof FilterSyntaxError) throw new UsageError(`--where: ${error.message}`);
    throw error;
  }
}

/** Runs `plan` and turns a bad column or literal into a usage error. */
export function planOrUsageError<T>(plan: () => T): T {
  try {
    return plan();
  } catch (error) {
    if (error instanceof FilterSyntaxError) throw new UsageError(error.position > 0 ? `--where: ${error.message}` : error.message);
    throw error;
  }
}

export function registerFilesCommand(program: Command, { io }: ProgramContext): void {
  withOutputOptions(
    withCatalogOptions(
      program
        .command("files")
        .description("the data files a filtered query must read, with their delete files")
        .argument("<table>", TABLE_ARGUMENT_HELP)
        .option("--where <expr>", WHERE_HELP),
    ),
  ).action(async (table: string, options: FilesOptions) => {
    const filter = whereFilter(options.where);
    const { state, plan, store } = await runOnTable(table, options, io, async (store) => {
      const state = await loadTableState(store, await catalogFormatOption(options, store));
      return { state, store, plan: planOrUsageError(() => planFiles(state, { filter })) };
    });
    if (state.warning) io.err(`lakewarden: warning: ${state.warning.message}\n`);
    if (options.json) printJson(io, filesJson(state, plan, store, filter));
    else io.out(describePlan(state, plan));
  });
}

function filesJson(state: TableState, plan: ScanPlan, store: ObjectStore, filter: Expr | null) {
  return {
    version: plan.version,
    format: plan.format,
    source: state.source,
    filter: filter ? formatFilter(filter) : null,
    total_files: plan.totalFiles,
    total_size: plan.totalSize,
    matched_files: plan.files.length,
    files: plan.files.map((f) => ({
      uri: store.uriOf(f.paths[0]!),
      uris: f.paths.map((p) => store.uriOf(p)),
      file_format: f.fileFormat,
      size: f.size,
      rows: f.rows,
      partition: f.partition,
      deletes: f.deletes.map((d) => ({
        uri: d.path === null ? null : store.uriOf(d.path),
        role: d.kind,
        rows: d.rows,
        size: d.size,
        offset: d.offset ?? null,
        length: d.length ?? null,
        storage: d.storage,
        ...(d.inline ? { inline: d.inline } : {}),
        ...(d.equalityColumns ? { equality_columns: d.equalityColumns } : {}),
      })),
      footer: f.footer ? { offset: f.footer.offset, length: f.footer.bytes.length } : null,
    })),
  };
}

function describePlan(state: TableState, plan: ScanPlan): string {
  const head =
    `version ${plan.version} from the ${state.source}: ${plural(plan.files.length, "data file")} of ${plan.totalFiles} may match` +
    `${plan.filter ? "" : " (no filter)"}, ${formatBytes(plan.files.reduce((n, f) => n + f.size, 0))} of ${formatBytes(plan.totalSize)}\n`;
  const rows = plan.files.map((f) => [
    f.paths.join(" "),
    f.rows === null ? "?" : String(f.rows),
    formatBytes(f.size),
    f.partition,
    f.deletes.map((d) => `${d.kind}${d.path ? ` ${d.path}` : " (inline)"}`).join("; "),
    f.footer ? "inline" : "",
  ]);
  return head + (rows.length ? textTable(["file", "rows", "size", "partition", "deletes", "footer"], rows) : "");
}
