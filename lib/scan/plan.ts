/**
 * The scan planner on a loaded table state (a head, or the manifest it fell back to): the data
 * files that may hold rows matching a filter, each with the delete files that apply to it and its
 * inline footer when the head has one. It asks the format for its files (TableFormat.scanFiles)
 * and prunes with the facts it gives; it never reads a data file, and makes no request at all.
 */
import type { DataFileFooter } from "../formats/data-file-footer.ts";
import type { ScanColumn, ScanDeleteFile, ScanFiles } from "../formats/scan-files.ts";
import type { TableFormat, TableSnapshot } from "../formats/table-format.ts";
import { bindFilter } from "./bind.ts";
import type { BoundFilter } from "./bind.ts";
import { FilterSyntaxError, parseFilter } from "./expression.ts";
import type { Expr } from "./expression.ts";
import { mayMatch } from "./prune.ts";

export interface PlanOptions {
  /** A filter in the --where language (lib/scan/expression.ts), or one parsed already; none: every file. */
  filter?: string | Expr | null;
  /** Columns the reader wants (default: all); checked against the schema. */
  columns?: readonly string[] | null;
}

export interface PlannedFile {
  /** Data file keys relative to the table root (a Lance fragment may have several). */
  paths: string[];
  fileFormat: string;
  size: number;
  rows: number | null;
  partition: string;
  deletes: ScanDeleteFile[];
  /** The head's inline footer of the (first) data file, if it has one. */
  footer: DataFileFooter | null;
}

export interface ScanPlan {
  version: number;
  format: string;
  columns: ScanColumn[];
  filter: BoundFilter | null;
  files: PlannedFile[];
  /** Live data files before pruning. */
  totalFiles: number;
  totalSize: number;
}

/** What the planner needs of a loaded state (lib/head/loader.ts TableState has it all). */
export interface PlanSource {
  format: TableFormat;
  version: number;
  snapshot: TableSnapshot;
  footers: readonly DataFileFooter[];
}

/** Parses (when text) and binds a filter; FilterSyntaxError naming the position on bad input. */
export function prepareFilter(filter: string | Expr | null | undefined, columns: readonly ScanColumn[]): BoundFilter | null {
  if (filter === null || filter === undefined) return null;
  const expr = typeof filter === "string" ? (filter.trim() === "" ? null : parseFilter(filter)) : filter;
  return expr ? bindFilter(expr, columns) : null;
}

export function checkColumns(requested: readonly string[] | null | undefined, columns: readonly ScanColumn[]): ScanColumn[] {
  if (!requested) return [...columns];
  return requested.map((name) => {
    const found = columns.find((c) => c.name === name) ?? columns.find((c) => c.name.toLowerCase() === name.toLowerCase());
    if (!found) throw new FilterSyntaxError(`unknown column "${name}" in the column list (columns: ${columns.map((c) => c.name).join(", ")})`, 0);
    return found;
  });
}

/** The format's scan view of a snapshot, made once per snapshot (a handle plans many queries on one state). */
const scanViews = new WeakMap<TableSnapshot, ScanFiles>();
function scanFilesOf(source: PlanSource): ScanFiles {
  let scan = scanViews.get(source.snapshot);
  if (!scan) scanViews.set(source.snapshot, (scan = source.format.scanFiles(source.snapshot)));
  return scan;
}

export function planFiles(source: PlanSource, options: PlanOptions = {}): ScanPlan {
  const scan = scanFilesOf(source);
  const filter = prepareFilter(options.filter, scan.columns);
  const columns = checkColumns(options.columns, scan.columns);
  const footers = new Map(source.footers.map((f) => [f.path, f]));
  const files: PlannedFile[] = [];
  let totalSize = 0;
  for (const file of scan.dataFiles) {
    totalSize += file.size;
    if (filter && !mayMatch(filter, file.facts)) continue;
    files.push({
      paths: file.paths,
      fileFormat: file.fileFormat,
      size: file.size,
      rows: file.rows,
      partition: file.partition,
      deletes: file.deletes.map((i) => scan.deleteFiles[i]!),
      footer: footers.get(file.paths[0]!) ?? null,
    });
  }
  return { version: source.version, format: source.format.name, columns, filter, files, totalFiles: scan.dataFiles.length, totalSize };
}
