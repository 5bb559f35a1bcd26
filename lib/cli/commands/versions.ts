import { InvalidArgumentError, type Command } from "commander";
import type { ProgramContext } from "../program.ts";
import { catalogFormatOption, runOnTable, withCatalogOptions, withOutputOptions, type OutputOptions, TABLE_ARGUMENT_HELP } from "../table-command.ts";
import { readHistory as readTableHistory } from "../../head/timeline-source.ts";
import { noVersionFilesError } from "../../formats/errors.ts";
import { TABLE_FORMATS } from "../../formats/index.ts";
import type { ObjectStore } from "../../store/object-store.ts";
import { textTable } from "../text-table.ts";
import type { CliIO } from "../io.ts";
import { withReadProgress } from "../read-progress.ts";
import { formatBytes } from "../../text/human-units.ts";
import type { VersionRecord } from "../../model/version-record.ts";
import { VERSION_RECORD_FIELDS } from "../../model/version-record.ts";
import { snakeCaseKeys } from "../../maintenance/cleanup-report.ts";
import type { StoredProtection } from "../../checkpoint/codec.ts";
import type { HistoryProblem } from "../../checkpoint/damaged.ts";
import { reportHistoryProblems } from "../history-problems.ts";

export function registerVersionsCommand(program: Command, { io }: ProgramContext): void {
  withOutputOptions(
    withCatalogOptions(
      program
        .command("versions")
        .description("list every version of a table with its summary, removed ones too")
        .argument("<table>", TABLE_ARGUMENT_HELP)
        .option("--since <version>", "only versions at or after this one", parseVersionOption)
        .option("--limit <n>", "only the newest n of the versions listed", parseCountOption),
    ),
  ).action(async (table: string, options: VersionsOptions) => {
    const history = await runOnTable(table, options, io, (store) => readHistory(store, options, io));
    const records = options.limit === undefined ? history.records : history.records.slice(Math.max(0, history.records.length - options.limit));
    if (options.json) io.out(history.problems.length === 0 ? versionsJson(records) : damagedVersionsJson(records, history.problems));
    else io.out(formatTable(records, history.tags) + protectionNote(history.protection));
    reportHistoryProblems(io, history.table, history.problems);
  });
}

const RECORD_FIELDS: ReadonlySet<string> = new Set(VERSION_RECORD_FIELDS);

/**
 * A record as `printJson` would print it (snakeCaseKeys), converting only what can change: a
 * VersionRecord's own fields are snake_case and `transaction_properties` is the user's, so only
 * the format-named `metrics` keys are converted. snakeCaseKeys over 512 records rebuilt every
 * object: ~0.5 ms of a ~3 ms `versions --json`. Anything else goes through snakeCaseKeys whole.
 */
function printedRecord(record: VersionRecord): unknown {
  for (const key in record) if (!RECORD_FIELDS.has(key)) return snakeCaseKeys(record);
  return { ...record, metrics: snakeCaseKeys(record.metrics) };
}

/** What `versions --json` prints for these records. */
export function versionsJson(records: readonly VersionRecord[]): string {
  return `${JSON.stringify(records.map(printedRecord), null, 2)}\n`;
}

/**
 * What `versions --json` prints when part of the history could not be read: an object, not the
 * array, so a script that expects the array stops instead of taking a partial history for whole.
 */
function damagedVersionsJson(records: readonly VersionRecord[], problems: readonly HistoryProblem[]): string {
  return `${JSON.stringify({ versions: records.map(printedRecord), history_problems: problems }, null, 2)}\n`;
}

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

/**
 * The whole history: archive segments + newest checkpoint + head + only the version files
 * neither covers; with the tags' names, so the text can say which tag a version carries.
 */
async function readHistory(
  store: ObjectStore,
  options: VersionsOptions,
  io: CliIO,
): Promise<{ table: string; records: VersionRecord[]; tags: Map<number, string[]>; protection: StoredProtection | null; problems: HistoryProblem[] }> {
  // On a terminal, a long read of version files no checkpoint or head covers shows its progress.
  const chosen = await catalogFormatOption(options, store);
  const progress = withReadProgress(store, io, { prefix: TABLE_FORMATS.map((f) => f.versionsPrefix), total: 0, label: "lakewarden: reading version files" });
  // Read-only: the checkpoint a current head names is read without listing the checkpoints.
  const timeline = await readTableHistory(progress.store, {
    ...chosen,
    ...(options.since === undefined ? {} : { since: options.since }),
    checkpointFromHead: true,
  }).finally(() => progress.done());
  if (options.since === undefined && timeline.records.length === 0) throw noVersionFilesError(store.uri, timeline.format);
  return {
    table: store.uri,
    records: timeline.records,
    tags: tagNames(timeline.refs.tags),
    protection: timeline.checkpoint?.protection ?? null,
    problems: timeline.historyProblems,
  };
}

/** A cleanup that could not remove the history below a protected boundary whole says so here too. */
function protectionNote(protection: StoredProtection | null): string {
  if (protection?.result !== "partial") return "";
  return `history protection before version ${protection.boundary}: partial: ${protection.reason}\n`;
}

function tagNames(tags: readonly { name: string; version: number; branch: string | null }[]): Map<number, string[]> {
  const names = new Map<number, string[]>();
  for (const tag of tags) if (tag.branch === null) names.set(tag.version, [...(names.get(tag.version) ?? []), tag.name]);
  return names;
}

function formatTable(records: readonly VersionRecord[], tags: ReadonlyMap<number, string[]>): string {
  const header = ["version", "timestamp", "operation", "fragments", "rows", "size", "flags"];
  const rows = records.map((r) => [
    String(r.version),
    new Date(r.timestamp_millis).toISOString(),
    r.operation_type ?? "-",
    r.total_fragments === null ? "-" : String(r.total_fragments),
    r.total_rows === null ? "-" : String(r.total_rows),
    r.total_files_size === null ? "-" : formatBytes(r.total_files_size),
    [r.is_tagged ? `tagged ${(tags.get(r.version) ?? []).join(", ") || "(tag gone since)"}` : "", r.is_cleaned_up ? "cleaned-up" : ""].filter(Boolean).join("; ") || "-",
  ]);
  return textTable(header, rows);
}
