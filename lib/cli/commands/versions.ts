import { InvalidArgumentError, type Command } from "commander";
import type { ProgramContext } from "../program.ts";
import { formatOption, printJson, runOnTable, withOutputOptions, type OutputOptions, TABLE_ARGUMENT_HELP } from "../table-command.ts";
import { readHistory as readTableHistory } from "../../head/timeline-source.ts";
import { noVersionFilesError } from "../../formats/errors.ts";
import type { ObjectStore } from "../../store/object-store.ts";
import { textTable } from "../text-table.ts";
import type { VersionRecord } from "../../model/version-record.ts";

export function registerVersionsCommand(program: Command, { io }: ProgramContext): void {
  withOutputOptions(
    program
      .command("versions")
      .description("list every version of a table with its summary (removed versions too, from checkpoints)")
      .argument("<table>", TABLE_ARGUMENT_HELP)
      .option("--since <version>", "only versions at or after this one (older archive segments are not read)", parseVersionOption)
      .option("--limit <n>", "only the newest n of the versions listed", parseCountOption),
  ).action(async (table: string, options: VersionsOptions) => {
    const all = await runOnTable(table, options, io, (store) => readHistory(store, options));
    const records = options.limit === undefined ? all : all.slice(Math.max(0, all.length - options.limit));
    if (options.json) printJson(io, records);
    else io.out(formatTable(records));
  });
}

/** The whole history: newest checkpoint + head + only the manifests neither covers. */
interface VersionsOptions extends OutputOptions {
  since?: number;
  limit?: number;
}

function parseVersionOption(text: string): number {
  const n = /^\d+$/.test(text.trim()) ? Number(text) : NaN;
  if (!Number.isSafeInteger(n)) throw new InvalidArgumentError(`not a version number: ${JSON.stringify(text)}`);
  return n;
}

function parseCountOption(text: string): number {
  const n = /^\d+$/.test(text.trim()) ? Number(text) : NaN;
  if (!Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError(`not a count of at least 1: ${JSON.stringify(text)}`);
  return n;
}

async function readHistory(store: ObjectStore, options: VersionsOptions): Promise<VersionRecord[]> {
  const timeline = await readTableHistory(store, { ...formatOption(options), ...(options.since === undefined ? {} : { since: options.since }) });
  const format = timeline.format;
  if (options.since !== undefined) return timeline.records;
  if (timeline.records.length === 0) {
    throw noVersionFilesError(store.uri, format);
  }
  return timeline.records;
}

function formatTable(records: readonly VersionRecord[]): string {
  const header = ["version", "timestamp", "operation", "fragments", "rows", "bytes", "flags"];
  const rows = records.map((r) => [
    String(r.version),
    new Date(r.timestamp_millis).toISOString(),
    r.operation_type ?? "-",
    r.total_fragments === null ? "-" : String(r.total_fragments),
    r.total_rows === null ? "-" : String(r.total_rows),
    r.total_files_size === null ? "-" : String(r.total_files_size),
    [r.is_tagged ? "tagged" : "", r.is_cleaned_up ? "cleaned-up" : ""].filter(Boolean).join(",") || "-",
  ]);
  return textTable(header, rows);
}
