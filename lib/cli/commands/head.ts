/**
 * `lakewarden head write <table>` and `lakewarden head show <table>`: write a table's head
 * object for its latest version, and show the table's current state the way a client loads
 * it (from the head when current, else from the manifest, saying why).
 */
import type { Command } from "commander";
import type { ProgramContext } from "../program.ts";
import { checkHeadCodecFlag } from "../flags.ts";
import { catalogFormatOption, printJson, runOnTable, withCatalogOptions, withOutputOptions, TABLE_ARGUMENT_HELP } from "../table-command.ts";
import type { OutputOptions } from "../table-command.ts";
import { headCodecs } from "../../head/registry.ts";
import { loadTableState } from "../../head/loader.ts";
import type { TableState } from "../../head/loader.ts";
import { HEAD_KEY } from "../../head/stored-head.ts";
import { writeTableHead } from "../../head/write-table-head.ts";
import type { WriteTableHeadResult } from "../../head/write-table-head.ts";
import type { ScanDeleteFile } from "../../formats/scan-files.ts";
import { textTable } from "../text-table.ts";
import { formatBytes, plural } from "../../text/human-units.ts";

interface WriteOptions extends OutputOptions {
  codec?: string;
}

export function registerHeadCommand(program: Command, { io }: ProgramContext): void {
  const head = program.command("head").description(`the head object (${HEAD_KEY}): the table's state in one GET`);

  withOutputOptions(
    withCatalogOptions(
      head
        .command("write")
        .description("write the head object for the table's latest version")
        .argument("<table>", TABLE_ARGUMENT_HELP)
        .option("--codec <codec>", `body codec: ${headCodecs.names().join(" | ")} (default: the table's setting, else arrow)`),
    ),
  ).action(async (table: string, options: WriteOptions) => {
    checkHeadCodecFlag(options.codec);
    const result = await runOnTable(table, options, io, async (store) =>
      writeTableHead(store, { ...(options.codec === undefined ? {} : { codec: options.codec }), ...(await catalogFormatOption(options, store)) }),
    );
    if (options.json) printJson(io, writeJson(result));
    else io.out(describeWrite(result));
  });

  withOutputOptions(withCatalogOptions(head.command("show").description("show the table's current state as a reader loads it").argument("<table>", TABLE_ARGUMENT_HELP))).action(
    async (table: string, options: OutputOptions) => {
      const state = await runOnTable(table, options, io, async (store) => loadTableState(store, await catalogFormatOption(options, store)));
      if (state.warning) io.err(`lakewarden: warning: ${state.warning.message}\n`);
      if (options.json) printJson(io, showJson(state));
      else io.out(describeState(state));
    },
  );
}

/** What `head write` did, in words (the JSON keeps the action's name). */
const WRITE_ACTION_WORDS: Record<WriteTableHeadResult["action"], string> = {
  created: "created",
  replaced: "replaced the older head",
  "skipped-same-version": "already current, nothing written",
  "skipped-newer-present": "a newer head is stored, nothing written",
};

function describeWrite(result: WriteTableHeadResult): string {
  const stored = result.storedVersion === null ? "none" : `version ${result.storedVersion}`;
  const built = result.built;
  const lines = [`head for version ${result.version}: ${WRITE_ACTION_WORDS[result.action]} (stored head before: ${stored})`];
  if (built && result.bytes > 0) {
    lines.push(
      `  ${formatBytes(result.bytes)}, codec ${built.codec} (${built.compression}); ${plural(built.footers, "footer")} inlined, ${built.footersOmitted} left out; ` +
        `${plural(built.recentVersions, "version")} since the checkpoint`,
    );
  }
  if (result.lostRaces > 0) lines.push(`  lost ${plural(result.lostRaces, "conditional write")} to concurrent writers first`);
  if (result.previousHeadProblem) lines.push(`  replaced an unreadable head: ${result.previousHeadProblem}`);
  if (built?.footerProblem) lines.push(`  footers stopped early: ${built.footerProblem}`);
  return `${lines.join("\n")}\n`;
}

/** The `head write --json` document (snake_case, like every lakewarden JSON output). */
function writeJson(result: WriteTableHeadResult) {
  const built = result.built;
  return {
    action: result.action,
    version: result.version,
    stored_version: result.storedVersion,
    etag: result.etag,
    bytes: result.bytes,
    attempts: result.attempts,
    lost_races: result.lostRaces,
    previous_head_problem: result.previousHeadProblem,
    built: built && {
      codec: built.codec,
      compression: built.compression,
      mandatory_bytes: built.mandatoryBytes,
      footer_bytes: built.footerBytes,
      footers: built.footers,
      footers_omitted: built.footersOmitted,
      footers_read: built.footersRead,
      footer_problem: built.footerProblem,
      recent_versions: built.recentVersions,
      manifests_read: built.manifestsRead,
    },
  };
}

/** The `head show --json` document: the published fields first, then the rest of the state. */
function showJson(state: TableState) {
  const { snapshot } = state;
  return {
    version: state.version,
    source: state.source,
    codec: state.codec,
    warning: state.warning,
    files: snapshot.liveFiles.map((f) => ({
      fragment_id: f.fragmentId,
      paths: f.paths,
      size: f.size,
      physical_rows: f.physicalRows,
      deletion_file: f.deletionFile,
      deleted_rows: f.deletedRows,
    })),
    delete_files: deleteFilesOf(state).map((d) => ({
      path: d.path,
      role: d.kind,
      rows: d.rows,
      size: d.size,
      storage: d.storage,
      ...(d.equalityColumns ? { equality_columns: d.equalityColumns } : {}),
      applies_to: d.appliesTo,
    })),
    summary: snapshot.record,
    schema: snapshot.schema.map((f) => ({ id: f.id, parent_id: f.parentId, name: f.name, logical_type: f.logicalType, nullable: f.nullable })),
    config: snapshot.config,
    version_file: { key: snapshot.versionFile.key, size: snapshot.versionFile.size, etag: snapshot.versionFile.etag },
    recent_versions: state.recentVersions,
    footers: state.footers.map(({ path, fileSize, offset, bytes }) => ({ path, file_size: fileSize, offset, bytes: bytes.length })),
  };
}

function describeState(state: TableState): string {
  const r = state.snapshot.record;
  const lines = [
    `version ${state.version} from the ${state.source}${state.codec ? ` (head codec ${state.codec})` : ""}`,
    `  ${plural(r.total_rows, "row")} in ${plural(r.total_fragments, "fragment")}, ${formatBytes(r.total_files_size)}, ${plural(r.total_deletion_files, "deletion file")}`,
    `  schema: ${state.snapshot.schema.map((f) => `${f.name}:${f.logicalType}`).join(", ")}`,
  ];
  if (state.recentVersions) lines.push(`  ${plural(state.recentVersions.records.length, "version")} since the checkpoint in the head`);
  lines.push(`  ${plural(state.footers.length, "data-file footer")} inlined`);
  const fragments = state.snapshot.liveFiles.map((f) => [
    String(f.fragmentId),
    String(f.physicalRows),
    String(f.deletedRows),
    formatBytes(f.size),
    [...f.paths, ...(f.deletionFile ? [f.deletionFile] : [])].join(" "),
  ]);
  const deletes = deleteFilesOf(state);
  const deleteTable =
    deletes.length === 0
      ? ""
      : `${plural(deletes.length, "delete file")}:\n${textTable(
          ["role", "rows", "size", "applies to", "file"],
          deletes.map((d) => [
            d.kind,
            d.rows === null ? "?" : String(d.rows),
            d.size === null ? "?" : formatBytes(d.size),
            plural(d.appliesTo.length, "data file"),
            d.path ?? `inline (${d.storage})`,
          ]),
        )}`;
  return `${lines.join("\n")}\n${textTable(["fragment", "rows", "deleted", "size", "files"], fragments)}${deleteTable}`;
}

/** Every live delete file (deletion vectors too) with the data files it applies to, as the format's scan view gives them. */
function deleteFilesOf(state: TableState): (ScanDeleteFile & { appliesTo: string[] })[] {
  const scan = state.format.scanFiles(state.snapshot);
  const appliesTo = scan.deleteFiles.map((): string[] => []);
  for (const file of scan.dataFiles) for (const d of file.deletes) appliesTo[d]!.push(...file.paths);
  return scan.deleteFiles.map((d, i) => ({ ...d, appliesTo: appliesTo[i]! }));
}
