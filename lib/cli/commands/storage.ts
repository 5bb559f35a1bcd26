/**
 * `lakewarden storage <table> [--older-than d] [--by-version]`: where the table's bytes go, from
 * one listing of the table and the same plan cleanup makes (lib/measure).
 */
import type { Command } from "commander";
import type { ProgramContext } from "../program.ts";
import { parseSettingFlag } from "../flags.ts";
import { formatBytes, plural, versionRanges } from "../../text/human-units.ts";
import { catalogFormatOption, printJson, runOnTable, withCatalogOptions, withOutputOptions, TABLE_ARGUMENT_HELP } from "../table-command.ts";
import type { OutputOptions } from "../table-command.ts";
import { textTable } from "../text-table.ts";
import type { CleanupSettings } from "../../maintenance/policy.ts";
import { LAKEWARDEN_PREFIX } from "../../model/layout.ts";
import { HISTORY_REASONS, measureStorage } from "../../measure/measure-storage.ts";
import type { StorageReport, Totals } from "../../measure/measure-storage.ts";

interface StorageFlags extends OutputOptions {
  olderThan?: string;
  retainVersions?: string;
  byVersion?: boolean;
}

export function registerStorageCommand(program: Command, { io }: ProgramContext): void {
  withOutputOptions(
    withCatalogOptions(
      program
        .command("storage")
        .description("where the table's bytes go: live, history, reclaimable, unknown")
        .argument("<table>", TABLE_ARGUMENT_HELP)
        .option("--older-than <duration>", "plan as cleanup --older-than would (nothing is deleted)")
        .option("--retain-versions <n>", "plan as cleanup --retain-versions would")
        .option("--by-version", "also list each kept version's own and referenced bytes"),
    ),
  ).action(async (table: string, flags: StorageFlags) => {
    const settings: CleanupSettings = {};
    if (flags.olderThan !== undefined) settings.olderThanMs = parseSettingFlag("olderThanMs", flags.olderThan, "--older-than");
    if (flags.retainVersions !== undefined) settings.retainVersions = parseSettingFlag("retainVersions", flags.retainVersions, "--retain-versions");
    const report = await runOnTable(table, flags, io, async (store) =>
      measureStorage(store, { ...(await catalogFormatOption(flags, store)), settings, byVersion: Boolean(flags.byVersion) }),
    );
    for (const warning of report.warnings) io.err(`lakewarden: warning: ${warning}\n`);
    if (flags.json) printJson(io, report);
    else io.out(describeStorage(report));
  });
}

const cells = (t: Totals) => [formatBytes(t.bytes), plural(t.files, "file")];

export function describeStorage(report: StorageReport): string {
  const { parts } = report;
  const rows: string[][] = [
    ["live", ...cells(parts.live), `version ${report.latest_version}'s files`],
    ["history", ...cells(parts.history), `kept for ${plural(report.versions_kept - 1, "older version")}`],
    ...HISTORY_REASONS.filter((r) => parts.history.by_reason[r].files > 0).map((r) => [`  ${r}`, ...cells(parts.history.by_reason[r]), ""]),
    [
      "reclaimable",
      ...cells(parts.reclaimable),
      report.versions_reclaimable.length > 0
        ? `cleanup would remove ${plural(report.versions_reclaimable.length, "version")} (${versionRanges(report.versions_reclaimable)})`
        : "what cleanup would delete now",
    ],
    ["unknown", ...cells(parts.unknown), "in the format's folders, not known to it: kept"],
    ["lakewarden", ...cells(parts.lakewarden), `${LAKEWARDEN_PREFIX}: head, checkpoints, receipts, pins`],
    ["other", ...cells(parts.other), ""],
    ...(Object.entries(parts.other.by_reason) as [string, Totals][]).filter(([, t]) => t.files > 0).map(([r, t]) => [`  ${r.replaceAll("_", " ")}`, ...cells(t), ""]),
    ["total listed", ...cells(report.listed), ""],
  ];
  const policy = report.policy;
  let text = `${report.table} (${report.format}); as cleanup would plan now: older than ${policy.older_than!.value} (${policy.older_than!.source}), retain ${policy.retain_versions!.value} (${policy.retain_versions!.source})\n`;
  text += textTable(["part", "bytes", "files", "what"], rows);
  if (report.by_version) {
    text += "\n";
    text += textTable(
      ["version", "committed", "alone", "referenced", "kept because"],
      report.by_version.map((v) => [v.version_id, new Date(v.timestamp_millis).toISOString(), formatBytes(v.alone.bytes), formatBytes(v.referenced.bytes), v.reason]),
    );
  }
  return text;
}
