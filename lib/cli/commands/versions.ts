import type { Command } from "commander";
import type { ProgramContext } from "../program.ts";
import { printJson, runOnTable, withOutputOptions, type OutputOptions } from "../table-command.ts";
import { lanceFormat } from "../../formats/lance/lance-format.ts";
import { readVersionRecords } from "../../versions/read-version-records.ts";
import type { VersionRecord } from "../../versions/version-record.ts";

export function registerVersionsCommand(program: Command, { io }: ProgramContext): void {
  withOutputOptions(
    program
      .command("versions")
      .description("list every version of a table with its summary (removed versions too, from checkpoints)")
      .argument("<table>", "table location: a local path, file:// URI or s3://bucket/prefix/table"),
  ).action(async (table: string, options: OutputOptions) => {
    const records = await runOnTable(table, options, io, (store) => readVersionRecords(store, lanceFormat));
    if (options.json) printJson(io, records);
    else io.out(formatTable(records));
  });
}

function formatTable(records: readonly VersionRecord[]): string {
  const header = ["version", "timestamp", "operation", "fragments", "rows", "bytes", "flags"];
  const rows = records.map((r) => [
    String(r.version),
    new Date(r.timestamp_millis).toISOString(),
    r.operation_type ?? "-",
    String(r.total_fragments),
    String(r.total_rows),
    String(r.total_files_size),
    [r.is_tagged ? "tagged" : "", r.is_cleaned_up ? "cleaned-up" : ""].filter(Boolean).join(",") || "-",
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd();
  return [line(header), ...rows.map(line)].join("\n") + "\n";
}
