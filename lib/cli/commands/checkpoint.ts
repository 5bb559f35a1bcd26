/**
 * `lakewarden checkpoint <table>`: archive every version's summary into a new version
 * checkpoint without deleting anything (lib/maintenance/run-checkpoint.ts).
 */
import { plural } from "../../text/human-units.ts";
import type { ArchiveStatus } from "../../checkpoint/archive.ts";
import type { Command } from "commander";
import type { ProgramContext } from "../program.ts";
import { catalogFormatOption, printJson, runOnTable, withCatalogOptions, withOutputOptions, TABLE_ARGUMENT_HELP } from "../table-command.ts";
import type { OutputOptions } from "../table-command.ts";
import { runCheckpoint } from "../../maintenance/run-checkpoint.ts";
import type { CheckpointReport } from "../../maintenance/run-checkpoint.ts";
import { reportHistoryProblems } from "../history-problems.ts";

export function registerCheckpointCommand(program: Command, { io }: ProgramContext): void {
  withOutputOptions(
    withCatalogOptions(program.command("checkpoint").description("archive every version's summary into a checkpoint; deletes no data").argument("<table>", TABLE_ARGUMENT_HELP)),
  ).action(async (table: string, options: OutputOptions) => {
    const report = await runOnTable(table, options, io, async (store) => runCheckpoint(store, await catalogFormatOption(options, store)));
    for (const warning of report.warnings) io.err(`lakewarden: warning: ${warning}\n`);
    if (options.json) printJson(io, report);
    else io.out(describe(report));
    // The checkpoint is written, with every row still readable; what could not be read is named, and the exit status says it.
    reportHistoryProblems(io, report.table, report.history_problems);
  });
}

/** A checkpoint's archive status in words, for `checkpoint` and `cleanup` alike. */
export const CHECKPOINT_STATUS_WORDS: Record<ArchiveStatus, string> = {
  written: "written",
  replaced: "updated (same version, more known)",
  unchanged: "already up to date",
  empty: "not written: no history",
};

function describe(report: CheckpointReport): string {
  const { checkpoint } = report;
  let text = `checkpoint of ${report.table} (${report.format}): ${CHECKPOINT_STATUS_WORDS[checkpoint.status]}\n`;
  if (checkpoint.key) text += `${checkpoint.key}: versions up to ${checkpoint.version}, ${plural(checkpoint.rows, "row")}, ${checkpoint.cleanedUpRows} cleaned up\n`;
  text += `version files read: ${report.manifests_read}\n`;
  text += `checkpoints pruned: ${report.checkpoints_pruned.length === 0 ? "none" : report.checkpoints_pruned.join(", ")}\n`;
  for (const note of checkpoint.setAside ?? []) text += `set aside: ${note.file} (unreadable) → ${note.set_aside}\n`;
  return text;
}
