/**
 * `lakewarden version-at <table> <time>`: which version was current at a time, from the
 * timeline (removed versions included). The rule for out-of-order timestamps is in
 * lib/versions/version-at.ts: a version is current from the latest timestamp among it and its
 * predecessors until the next version's.
 */
import type { Command } from "commander";
import type { ProgramContext } from "../program.ts";
import { UsageError } from "../errors.ts";
import { catalogFormatOption, printJson, runOnTable, withCatalogOptions, withOutputOptions, TABLE_ARGUMENT_HELP } from "../table-command.ts";
import type { OutputOptions } from "../table-command.ts";
import { NotATableError } from "../../formats/errors.ts";
import { readHistory } from "../../head/timeline-source.ts";
import { reportHistoryProblems } from "../history-problems.ts";
import { NoVersionAtTimeError, parseTimePoint, versionAt } from "../../versions/version-at.ts";
import type { VersionAt } from "../../versions/version-at.ts";

export function registerVersionAtCommand(program: Command, { io }: ProgramContext): void {
  withOutputOptions(
    withCatalogOptions(
      program
        .command("version-at")
        .description("which version was current at a given time")
        .argument("<table>", TABLE_ARGUMENT_HELP)
        .argument("<time>", "now, ISO 8601 (e.g. 2026-11-29T14:55:00Z) or Unix milliseconds"),
    ),
  ).action(async (table: string, time: string, options: OutputOptions) => {
    const nowMillis = Date.now();
    const atMillis = time.trim().toLowerCase() === "now" ? nowMillis : parseTimePoint(time);
    if (atMillis === null) throw new UsageError(`not a time: ${JSON.stringify(time)} (use now, ISO 8601 like 2026-11-29T14:55:00Z, or Unix milliseconds)`);
    const future = atMillis > nowMillis;
    const found = await runOnTable(table, options, io, async (store) => {
      const timeline = await readHistory(store, await catalogFormatOption(options, store));
      const format = timeline.format;
      if (timeline.records.length === 0) throw new NotATableError(store.uri, `not a ${format.name} table: no version files and no checkpoint`);
      const answer = versionAt(timeline.records, atMillis);
      if (!answer) {
        const first = timeline.records[0]!;
        throw new NoVersionAtTimeError(
          store.uri,
          `no version was current at ${new Date(atMillis).toISOString()}: the earliest known, version ${first.version}, is from ${new Date(first.timestamp_millis).toISOString()}`,
        );
      }
      return { ...answer, problems: timeline.historyProblems, table: store.uri };
    });
    if (options.json) printJson(io, { ...toJson(found, atMillis), is_future: future, ...(found.problems.length > 0 ? { history_problems: found.problems } : {}) });
    else {
      if (future)
        io.out(
          `${new Date(atMillis).toISOString()} is in the future (now is ${new Date(nowMillis).toISOString()}): this is the answer as of now, and later commits may change it\n`,
        );
      io.out(describe(found, atMillis));
    }
    // An answer from a history with a damaged checkpoint or segment may be wrong: said, exit 4.
    reportHistoryProblems(io, found.table, found.problems);
  });
}

function toJson(found: VersionAt, atMillis: number) {
  return {
    time_millis: atMillis,
    version: found.version,
    current_from_millis: found.current_from_millis,
    current_until_millis: found.current_until_millis,
    is_cleaned_up: found.record.is_cleaned_up,
    is_tagged: found.record.is_tagged,
    record: found.record,
  };
}

function describe(found: VersionAt, atMillis: number): string {
  const until = found.current_until_millis === null ? "still the latest" : `until ${new Date(found.current_until_millis).toISOString()}`;
  let text = `version ${found.version} was current at ${new Date(atMillis).toISOString()} (from ${new Date(found.current_from_millis).toISOString()}, ${until})\n`;
  if (found.current_from_millis !== found.record.timestamp_millis) {
    text += `its own commit timestamp, ${new Date(found.record.timestamp_millis).toISOString()}, is earlier than a predecessor's: it counts from that one\n`;
  }
  if (found.record.is_cleaned_up) text += "it has been cleaned up: its summary is archived, its data is gone\n";
  return text;
}
