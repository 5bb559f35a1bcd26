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
  ].join("\n");
}
