import type { Command } from "commander";
import type { ProgramContext } from "../program.ts";
import { printJson, runOnTable, withOutputOptions, type OutputOptions, TABLE_ARGUMENT_HELP } from "../table-command.ts";
import { lanceFormat } from "../../formats/lance/lance-format.ts";
import { readTimeline } from "../../versions/timeline.ts";
import { noVersionFilesError } from "../../formats/errors.ts";
import type { ObjectStore } from "../../store/object-store.ts";
import { textTable } from "../text-table.ts";
import type { VersionRecord } from "../../versions/version-record.ts";

export function registerVersionsCommand(program: Command, { io }: ProgramContext): void {
  withOutputOptions(
    program
      .command("versions")
      .description("list every version of a table with its summary (removed versions too, from checkpoints)")
      .argument("<table>", TABLE_ARGUMENT_HELP),
  ).action(async (table: string, options: OutputOptions) => {
    const records = await runOnTable(table, options, io, readHistory);
    if (options.json) printJson(io, records);
    else io.out(formatTable(records));
  });
}

/** The whole history: newest checkpoint + head + only the manifests neither covers. */
async function readHistory(store: ObjectStore): Promise<VersionRecord[]> {
  const timeline = await readTimeline(store, lanceFormat);
  if (timeline.records.length === 0) {
    throw noVersionFilesError(store.uri, lanceFormat);
  }
  return timeline.records;
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
  return textTable(header, rows);
}
