/**
 * `cleanup --summary`: the plan (or the run) as totals instead of one line per file and per
 * version. Files are grouped by action, kind and reason, versions by action and reason, where a
 * reason is the plan's own text with what differs from one file to the next taken out (times,
 * version numbers), so "version 3 removed: committed 2026-11-02T…" and "version 4 removed:
 * committed 2026-11-03T…" are one line with their count.
 */
import type { PlannedFile } from "../../maintenance/file-plan.ts";
import type { CleanupReport, VersionLine } from "../../maintenance/cleanup-report.ts";
import { formatBytes, plural } from "../../text/human-units.ts";
import { textTable } from "../text-table.ts";

const ISO_TIME = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z/g;
const VERSION_LIST = /\bversions? \d+(?:-\d+)?(?:(?:, | and )\d+(?:-\d+)?(?! more))*(?: and \d+ more)?/g;

/** A reason with its per-file details (times, version numbers) replaced by placeholders. */
export function reasonGroup(reason: string): string {
  return reason.replace(ISO_TIME, "<time>").replace(VERSION_LIST, "versions <n>");
}

interface FileGroup {
  action: PlannedFile["action"];
  kind: string;
  reason: string;
  files: number;
  bytes: number;
}

export function fileGroups(files: readonly PlannedFile[]): FileGroup[] {
  const groups = new Map<string, FileGroup>();
  for (const file of files) {
    const reason = reasonGroup(file.reason);
    const id = `${file.action}\u0000${file.kind}\u0000${reason}`;
    const group = groups.get(id) ?? { action: file.action, kind: file.kind, reason, files: 0, bytes: 0 };
    group.files++;
    group.bytes += file.size;
    groups.set(id, group);
  }
  // Deletes first, then by bytes: what matters most reads first.
  return [...groups.values()].sort((a, b) => (a.action === b.action ? b.bytes - a.bytes || b.files - a.files : a.action === "delete" ? -1 : 1));
}

export function versionGroups(versions: readonly VersionLine[]): { action: string; reason: string; versions: number }[] {
  const groups = new Map<string, { action: string; reason: string; versions: number }>();
  for (const version of versions) {
    const action = version.keep ? "keep" : "remove";
    const reason = reasonGroup(version.reason);
    const id = `${action}\u0000${reason}`;
    const group = groups.get(id) ?? { action, reason, versions: 0 };
    group.versions++;
    groups.set(id, group);
  }
  return [...groups.values()].sort((a, b) => (a.action === b.action ? b.versions - a.versions : a.action === "remove" ? -1 : 1));
}

/** The totals tables `--summary` prints after the run's summary lines. */
export function describeTotals(report: CleanupReport): string {
  let text = "";
  if (report.versions.length > 0) {
    text += `\nversions by reason (${report.versions.length}):\n`;
    text += indent(
      textTable(
        ["action", "versions", "reason"],
        versionGroups(report.versions).map((g) => [g.action, String(g.versions), g.reason]),
      ),
    );
  }
  if (report.files.length > 0) {
    const partial = report.files.length < report.files_planned ? `; the first ${report.files.length} grouped, the counts above cover all` : "";
    text += `\nfiles by reason (${plural(report.files_planned, "file")}${partial}):\n`;
    text += indent(
      textTable(
        ["action", "kind", "files", "size", "reason"],
        fileGroups(report.files).map((g) => [g.action, g.kind, String(g.files), formatBytes(g.bytes), g.reason]),
      ),
    );
  }
  return text;
}

export function indent(text: string): string {
  return text
    .split("\n")
    .map((line) => (line ? `  ${line}` : line))
    .join("\n");
}
