/**
 * `lakewarden report <table> -o report.html`: one self-contained HTML file (inline SVG, no
 * script, no network) picturing the table's life: versions over time, storage at each cleanup
 * run, what each run reclaimed and the requests it made (lib/html-report).
 */
import { writeFile } from "node:fs/promises";
import type { Command } from "commander";
import type { ProgramContext } from "../program.ts";
import { formatBytes, plural } from "../../text/human-units.ts";
import { catalogFormatOption, printJson, runOnTable, withCatalogOptions, withOutputOptions, TABLE_ARGUMENT_HELP } from "../table-command.ts";
import type { OutputOptions } from "../table-command.ts";
import { collectReportData } from "../../html-report/data.ts";
import { renderReport } from "../../html-report/render.ts";

interface ReportFlags extends OutputOptions {
  output: string;
}

export function registerReportCommand(program: Command, { io }: ProgramContext): void {
  withOutputOptions(
    withCatalogOptions(
      program
        .command("report")
        .description("write one HTML file picturing the table's versions, storage and runs")
        .argument("<table>", TABLE_ARGUMENT_HELP)
        .requiredOption("-o, --output <file>", "the HTML file to write (replaced if it exists)"),
    ),
  ).action(async (table: string, flags: ReportFlags) => {
    const data = await runOnTable(table, flags, io, async (store) => collectReportData(store, await catalogFormatOption(flags, store)));
    const html = renderReport(data);
    await writeFile(flags.output, html);
    for (const warning of data.warnings) io.err(`lakewarden: warning: ${warning}\n`);
    const summary = {
      output: flags.output,
      bytes: Buffer.byteLength(html),
      versions: data.versions.length,
      runs: data.runs.length,
      tags: data.tags.length,
      pins: data.pins.length,
    };
    if (flags.json) printJson(io, summary);
    else io.out(`wrote ${flags.output} (${formatBytes(summary.bytes)}): ${plural(summary.versions, "version")}, ${plural(summary.runs, "cleanup run")}\n`);
  });
}
