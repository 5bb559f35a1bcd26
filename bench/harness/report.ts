/**
 * Writes a benchmark's results: one markdown file (tables) and its SVG charts, each headed
 * with the exact command, the machine and the date, so a number is never quoted without
 * the conditions it was measured under.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { MachineInfo } from "./machine.ts";
import { machineLine, machineShort } from "./machine.ts";

export interface RunContext {
  command: string;
  machine: MachineInfo;
  /** ISO date-time the run started. */
  startedAt: string;
  runs: number;
  quick: boolean;
  s3LatencyMs: number;
}

export interface MarkdownTable {
  title: string;
  /** Paragraph printed under the title: what was measured, how to read it. */
  note?: string;
  columns: string[];
  /** Columns whose cells are right-aligned (numbers). Default: all but the first. */
  alignRight?: boolean[];
  rows: string[][];
}

export interface ChartFile {
  /** File name inside the results directory, e.g. `history.svg`. */
  file: string;
  svg: string;
  alt: string;
}

export interface BenchReport {
  /** File stem: `history` → history.md. */
  name: string;
  title: string;
  /** Markdown paragraphs: what the benchmark does, datasets, what was cut and why. */
  intro: string[];
  tables: MarkdownTable[];
  charts: ChartFile[];
  /** One-line findings for the summary (e.g. "512 versions × 100K fragments, S3: 850× faster"). */
  headlines: string[];
  /**
   * How each cell was timed, when not `sample`'s way (one untimed warm-up, then the timed runs):
   * the report's "Method" line says this instead.
   */
  timing?: string;
}

/** The caption every chart carries: command, machine, date. */
export function chartCaption(context: RunContext): string {
  return [
    `${context.command}${context.quick ? " (quick: smoke check)" : ""}`,
    machineShort(context.machine),
    `${context.startedAt} · S3 = fauxqs + ${context.s3LatencyMs} ms/request`,
  ].join("\n");
}

/** `sample`'s timing (harness/measure.ts), which most benchmarks use. */
export function defaultTiming(runs: number): string {
  return `median of ${runs} timed run${runs === 1 ? "" : "s"} per cell after one untimed warm-up`;
}

/** `timing`: the report's own (BenchReport.timing); the run index, which spans benchmarks, says each file has its own. */
export function contextLines(context: RunContext, timing?: string): string[] {
  return [
    `- Command: \`${context.command}\``,
    `- Machine: ${machineLine(context.machine)}`,
    `- Date: ${context.startedAt}`,
    `- Method: ${timing ?? defaultTiming(context.runs)}` +
      `${context.quick ? " (**quick mode: smoke check, not for publication**)" : ""}; ` +
      `"S3" = fauxqs S3 emulator behind a ${context.s3LatencyMs} ms per-request delay, for both tools.`,
  ];
}

export function renderTable(table: MarkdownTable): string {
  const align = table.alignRight ?? table.columns.map((_, i) => i > 0);
  const escapeCell = (cell: string) => cell.replaceAll("|", "\\|");
  const lines = [
    `### ${table.title}`,
    "",
    ...(table.note ? [table.note, ""] : []),
    `| ${table.columns.map(escapeCell).join(" | ")} |`,
    `|${align.map((right) => (right ? "---:" : ":---")).join("|")}|`,
    ...table.rows.map((row) => `| ${row.map(escapeCell).join(" | ")} |`),
    "",
  ];
  return lines.join("\n");
}

export function renderReport(report: BenchReport, context: RunContext): string {
  return [
    `# ${report.title}`,
    "",
    ...contextLines(context, report.timing),
    "",
    ...report.intro.flatMap((p) => [p, ""]),
    ...(report.headlines.length ? ["**Headlines**", "", ...report.headlines.map((h) => `- ${h}`), ""] : []),
    ...report.charts.flatMap((c) => [`![${c.alt}](${c.file})`, ""]),
    ...report.tables.map(renderTable),
  ].join("\n");
}

/** Writes `<name>.md` and the charts; returns the paths written. */
export async function writeReport(outDir: string, report: BenchReport, context: RunContext): Promise<string[]> {
  await mkdir(outDir, { recursive: true });
  const written: string[] = [];
  const mdPath = join(outDir, `${report.name}.md`);
  await writeFile(mdPath, renderReport(report, context));
  written.push(mdPath);
  for (const chart of report.charts) {
    const path = join(outDir, chart.file);
    await writeFile(path, chart.svg);
    written.push(path);
  }
  return written;
}

/** The index of one run: every benchmark's headlines and a link to its file. */
export function renderSummary(reports: readonly BenchReport[], context: RunContext): string {
  return [
    "# lakewarden benchmarks",
    "",
    ...contextLines(context, summaryTiming(reports, context)),
    "",
    ...reports.flatMap((r) => [`## [${r.title}](${r.name}.md)`, "", ...r.headlines.map((h) => `- ${h}`), ""]),
  ].join("\n");
}

/** The index's method line: the common timing, and which files time otherwise (each says how). */
function summaryTiming(reports: readonly BenchReport[], context: RunContext): string {
  const own = reports.filter((r) => r.timing !== undefined).map((r) => `${r.name}.md`);
  return own.length === 0 ? defaultTiming(context.runs) : `${defaultTiming(context.runs)}, except ${own.join(", ")} (each says how it was timed)`;
}
