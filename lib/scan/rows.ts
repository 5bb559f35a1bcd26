/**
 * Rows of a loaded table state matching a filter: the planner's files (lib/scan/plan.ts), each
 * read by its format (TableFormat.readRows: deletes applied, partition values and missing columns
 * filled in), then the filter decided on every row (the plan only prunes files), the columns
 * asked for kept, and `limit` rows at most. One batch per data file, in plan order.
 */
import type { ScanColumn, ScanValue } from "../formats/scan-files.ts";
import type { ObjectStore } from "../store/object-store.ts";
import { checkRowFilter, evaluate } from "./evaluate.ts";
import type { BoundFilter } from "./bind.ts";
import { planFiles } from "./plan.ts";
import type { PlanOptions, PlanSource } from "./plan.ts";

export interface ScanOptions extends PlanOptions {
  /** At most this many rows (default: all). */
  limit?: number | null;
}

export interface ValueBatch {
  columns: ScanColumn[];
  rows: number;
  /** Values by column name, each `rows` long. */
  values: Map<string, (ScanValue | null)[]>;
}

function filterColumns(filter: BoundFilter | null, out: Set<string>): Set<string> {
  if (!filter) return out;
  if (filter.kind === "and" || filter.kind === "or") {
    filterColumns(filter.left, out);
    filterColumns(filter.right, out);
  } else if (filter.kind !== "never") {
    out.add(filter.column.name);
  }
  return out;
}

export async function* scanValues(source: PlanSource & { store: ObjectStore }, options: ScanOptions = {}): AsyncGenerator<ValueBatch> {
  const limit = options.limit ?? Number.POSITIVE_INFINITY;
  if (!(limit >= 0)) throw new RangeError(`limit must be a number >= 0, got ${options.limit}`);
  const plan = planFiles(source, options);
  if (plan.filter) checkRowFilter(plan.filter);
  const names = [...new Set([...plan.columns.map((c) => c.name), ...filterColumns(plan.filter, new Set())])];
  let left = limit;
  for (const file of plan.files) {
    if (left <= 0) return;
    const batch = await source.format.readRows(source.store, source.snapshot, file, names);
    let keep: number[] | null = null;
    if (plan.filter) {
      const filter = plan.filter;
      keep = [];
      for (let i = 0; i < batch.rows; i++) if (evaluate(filter, (name) => batch.columns.get(name)![i]!) === true) keep.push(i);
    }
    let rows = keep ? keep.length : batch.rows;
    if (rows > left) {
      keep = (keep ?? Array.from({ length: batch.rows }, (_, i) => i)).slice(0, left);
      rows = left;
    }
    if (rows === 0) continue;
    left -= rows;
    const values = new Map<string, (ScanValue | null)[]>();
    for (const column of plan.columns) {
      const all = batch.columns.get(column.name)!;
      values.set(column.name, keep ? keep.map((i) => all[i]!) : all);
    }
    yield { columns: plan.columns, rows, values };
  }
}
