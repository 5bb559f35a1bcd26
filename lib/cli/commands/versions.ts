import type { Command } from "commander";
import type { ProgramContext } from "../program.ts";
import { printJson, runOnTable, withOutputOptions, type OutputOptions, TABLE_ARGUMENT_HELP } from "../table-command.ts";
import { lanceFormat } from "../../formats/lance/lance-format.ts";
import { readTimeline } from "../../versions/timeline.ts";
import { noVersionFilesError } from "../../formats/errors.ts";
import type { ObjectStore } from "../../store/object-store.ts";
import { textTable } from "../text-table.ts";
import type { CliIO } from "../io.ts";
import { withReadProgress } from "../read-progress.ts";
import { formatBytes } from "../human-units.ts";
import type { VersionRecord } from "../../versions/version-record.ts";

export function registerVersionsCommand(program: Command, { io }: ProgramContext): void {
  withOutputOptions(
    program
      .command("versions")
      .description("list every version of a table with its summary (removed versions too, from checkpoints)")
      .argument("<table>", TABLE_ARGUMENT_HELP),
  ).action(async (table: string, options: OutputOptions) => {
    const { records, tags } = await runOnTable(table, options, io, (store) => readHistory(store, io));
    if (options.json) printJson(io, records);
    else io.out(formatTable(records, tags));
  });
}

/**
 * The whole history: newest checkpoint + head + only the manifests neither covers. The refs are
 * read here and handed to the timeline (which reads them anyway), so the text can name tags.
 */
async function readHistory(store: ObjectStore, io: CliIO): Promise<{ records: VersionRecord[]; tags: Map<number, string[]> }> {
  const [refs, versionFiles] = await Promise.all([lanceFormat.readRefs(store), lanceFormat.listVersionFiles(store)]);
  // On a terminal, a long read of version files no checkpoint or head covers shows its progress.
  const progress = withReadProgress(store, io, { prefix: lanceFormat.versionsPrefix, total: versionFiles.length, label: "lakewarden: reading version files" });
  const timeline = await readTimeline(progress.store, lanceFormat, { refs, versionFiles }).finally(() => progress.done());
  if (timeline.records.length === 0) {
    throw noVersionFilesError(store.uri, lanceFormat);
  }
  const tags = new Map<number, string[]>();
  for (const tag of refs.tags) if (tag.branch === null) tags.set(tag.version, [...(tags.get(tag.version) ?? []), tag.name]);
  return { records: timeline.records, tags };
}

function formatTable(records: readonly VersionRecord[], tags: ReadonlyMap<number, string[]>): string {
  const header = ["version", "timestamp", "operation", "fragments", "rows", "size", "flags"];
  const rows = records.map((r) => [
    String(r.version),
    new Date(r.timestamp_millis).toISOString(),
    r.operation_type ?? "-",
    String(r.total_fragments),
    String(r.total_rows),
    formatBytes(r.total_files_size),
    [r.is_tagged ? `tagged ${(tags.get(r.version) ?? []).join(", ") || "(tag gone since)"}` : "", r.is_cleaned_up ? "cleaned-up" : ""].filter(Boolean).join("; ") || "-",
  ]);
  return textTable(header, rows);
}
