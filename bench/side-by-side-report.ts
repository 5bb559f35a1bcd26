/** The markdown of the side-by-side benchmark (bench/side-by-side.ts): one table, a row per tool per cell. */
import { formatBytes, formatMs } from "./harness/measure.ts";
import type { Format, Storage } from "./side-by-side-tables.ts";
import { TOOL_LABEL, type Tool, type ToolRun } from "./side-by-side-tools.ts";

export interface CellRun {
  tool: Tool;
  run: ToolRun;
  filesBefore: number;
  /** Deleted files that the master holds (the same names in every copy), sorted. */
  deletedMaster: string[];
  /** Deleted files the master does not hold (none, while every copy is the master's with nothing written onto it). */
  deletedOther: number;
}

export interface Cell {
  format: Format;
  storage: Storage;
  files: number;
  masterKeys: number;
  /** Runs per tool behind the medians. */
  count: number;
  runs: CellRun[];
}

export interface SideBySideRun {
  command: string;
  commit: string;
  machine: string;
  startedAt: Date;
  finishedAt: Date;
  loadBefore: number[];
  loadAfter: number[];
  latencyMs: number;
  versions: number;
  runs: number;
  largeRuns: number;
  cells: Cell[];
}

/** The targets: at 10,000 files and above, at least 1× the fastest peer on local disk and 5× on emulated S3. */
export function targetOf(cell: Pick<Cell, "files" | "storage">): number | null {
  if (cell.files < 10_000) return null;
  return cell.storage === "local" ? 1 : 5;
}

const ratio = (peer: number, ours: number): string => (peer > 0 && ours > 0 ? `${(peer / ours).toFixed(peer / ours >= 10 ? 1 : 2)}×` : "–");

/** Whether the peer deleted the same set; a difference names its first files. */
export function sameSet(cell: Cell): string {
  const [ours, theirs] = [cell.runs.find((r) => r.tool === "lakewarden"), cell.runs.find((r) => r.tool !== "lakewarden")];
  if (!ours || !theirs) return "–";
  const a = new Set(ours.deletedMaster);
  const b = new Set(theirs.deletedMaster);
  const onlyOurs = ours.deletedMaster.filter((k) => !b.has(k));
  const onlyTheirs = theirs.deletedMaster.filter((k) => !a.has(k));
  if (onlyOurs.length === 0 && onlyTheirs.length === 0 && ours.deletedOther === theirs.deletedOther) return `yes (${a.size + ours.deletedOther})`;
  const sample = [...onlyOurs.slice(0, 2).map((k) => `lakewarden only: ${k}`), ...onlyTheirs.slice(0, 2).map((k) => `peer only: ${k}`)].join("; ");
  return `no: ${onlyOurs.length} only lakewarden, ${onlyTheirs.length} only peer, files not in the master ${ours.deletedOther} vs ${theirs.deletedOther} (${sample})`;
}

function rows(cell: Cell): string[][] {
  const storage = cell.storage === "local" ? "local disk" : "emulated S3";
  const ours = cell.runs.find((r) => r.tool === "lakewarden")!;
  const peers = cell.runs.filter((r) => r.tool !== "lakewarden");
  const fastest = Math.min(...peers.map((p) => p.run.spanMs));
  const fastestProcess = Math.min(...peers.map((p) => p.run.processMs));
  const fastestCpu = Math.min(...peers.map((p) => p.run.spanCpuMs));
  const target = targetOf(cell);
  const met = target === null ? "" : fastest / ours.run.spanMs >= target ? ` (target ${target}×: met)` : ` (target ${target}×: **not met**)`;
  const out: string[][] = [];
  for (const r of cell.runs) {
    const mine = r.tool === "lakewarden";
    out.push([
      String(cell.files),
      cell.format,
      storage,
      TOOL_LABEL[r.tool],
      formatMs(r.run.spanMs),
      formatMs(r.run.spanCpuMs),
      formatMs(r.run.processMs),
      formatMs(r.run.processCpuMs),
      formatBytes(r.run.peakRssBytes),
      mine ? `${ratio(fastest, r.run.spanMs)}${met}` : "1×",
      mine ? ratio(fastestCpu, r.run.spanCpuMs) : "1×",
      mine ? ratio(fastestProcess, r.run.processMs) : "1×",
      `${r.deletedMaster.length + r.deletedOther} of ${r.filesBefore}`,
      mine ? sameSet(cell) : "",
      String(cell.count),
    ]);
    if (r.tool === "iceberg-core") {
      const start = r.run.processMs - r.run.spanMs;
      out.push([
        "",
        "",
        "",
        "iceberg-core: JVM start and class loading (outside the span)",
        formatMs(start),
        formatMs(r.run.processCpuMs - r.run.spanCpuMs),
        "",
        "",
        "",
        "",
        "",
        "",
        "",
      ]);
    }
  }
  return out;
}

interface StageMark {
  stage: string;
  atMs: number;
  cpuMs: number;
}

/**
 * Where lakewarden's span went in one cell (the last run's stage marks: when each stage began, and the
 * CPU used by then), one line per stage: its wall and CPU time and their share of the span. The
 * profile the issue asks for beside every target that is missed, made by the run that missed it.
 */
function stageProfile(cell: Cell): string[] {
  const ours = cell.runs.find((r) => r.tool === "lakewarden");
  const marks = (ours?.run.said.stages as StageMark[] | undefined) ?? [];
  if (!ours || marks.length === 0) return [];
  const target = targetOf(cell);
  const peers = cell.runs.filter((r) => r.tool !== "lakewarden");
  const fastest = Math.min(...peers.map((p) => p.run.spanMs));
  const verdict = target === null ? "" : fastest / ours.run.spanMs >= target ? `, target ${target}× met` : `, target ${target}× **not met**`;
  const storage = cell.storage === "local" ? "local disk" : "emulated S3";
  const end = { stage: "(end)", atMs: ours.run.spanMs, cpuMs: ours.run.spanCpuMs };
  const lines = [
    `#### ${cell.format}, ${storage}, ${cell.files} files: lakewarden ${formatMs(ours.run.spanMs)}, the peer ${formatMs(fastest)}${verdict}`,
    "",
    "| stage | wall | CPU | share of the span |",
    "| --- | ---: | ---: | ---: |",
  ];
  const first = { stage: "start: lease, format, table state", atMs: 0, cpuMs: 0 };
  const all = [first, ...marks, end];
  for (let i = 0; i + 1 < all.length; i++) {
    const [a, b] = [all[i]!, all[i + 1]!];
    const wall = Math.max(0, b.atMs - a.atMs);
    lines.push(`| ${a.stage} | ${formatMs(wall)} | ${formatMs(Math.max(0, b.cpuMs - a.cpuMs))} | ${((100 * wall) / ours.run.spanMs).toFixed(0)} % |`);
  }
  const requests = Object.entries((ours.run.said.requests as Record<string, number> | undefined) ?? {})
    .filter(([, n]) => n > 0)
    .map(([kind, n]) => `${n} ${kind}`)
    .join(", ");
  if (requests) lines.push("", `Requests: ${requests}.`);
  return [...lines, ""];
}

export function renderSideBySide(run: SideBySideRun): string {
  const load = (l: number[]) => l.map((x) => x.toFixed(2)).join(", ");
  const columns = [
    "files",
    "format",
    "storage",
    "tool",
    "wall",
    "CPU",
    "process wall",
    "process-tree CPU",
    "peak RSS",
    "fastest peer ÷ lakewarden (wall)",
    "(CPU)",
    "(process wall)",
    "deleted",
    "same set as the peer",
    "runs",
  ];
  const table = [
    `| ${columns.join(" | ")} |`,
    `| ${columns.map((_, i) => (i >= 4 && i !== 13 ? "---:" : "---")).join(" | ")} |`,
    ...run.cells.flatMap(rows).map((row) => `| ${row.join(" | ")} |`),
  ];
  return [
    "```",
    run.command,
    "```",
    "",
    `Commit ${run.commit}; ${run.startedAt.toISOString()} to ${run.finishedAt.toISOString()}; ${run.machine}.`,
    `Load average (1, 5, 15 min) before: ${load(run.loadBefore)}; after: ${load(run.loadAfter)}. Emulated S3: fauxqs (memory backend) behind +${run.latencyMs} ms per request.`,
    `Each table: ${run.versions} commits, each a full overwrite; the cutoff between commit ${Math.floor(run.versions / 2)} and the next, so about half the versions expire. ` +
      `Median of ${run.runs} runs per tool per cell below 10,000 files and of ${run.largeRuns} from 10,000 on (the *runs* column), each on a fresh copy in a fresh process (no warm-up: a scheduled cleanup starts cold).`,
    "",
    ...table,
    ...profiles(run.cells),
  ].join("\n");
}

/** The stage profiles of lakewarden's runs at 10,000 files and above (where the issue sets targets). */
function profiles(cells: Cell[]): string[] {
  const large = cells.filter((c) => targetOf(c) !== null).flatMap(stageProfile);
  if (large.length === 0) return [];
  return [
    "",
    "### Where lakewarden's span went, at 10,000 files and above",
    "",
    "From the last run of each cell: each stage's wall and CPU time (CPU of every thread, so it can exceed the wall), from the stage marks the cleanup reports as it goes.",
    "",
    ...large,
  ];
}
