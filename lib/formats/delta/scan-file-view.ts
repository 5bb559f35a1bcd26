/**
 * A Delta version's live files as the planner reads them (TableFormat.scanFiles), straight from the
 * head's `delta_adds` columns and decoded only as far as a query asks: an add is its row number in
 * the section, its partition values parsed once per distinct text (shared by every add with it)
 * when the filter names a partition column, its stats JSON parsed only when the filter names
 * another column, and its partition words and row count only for the files planned. What each
 * fact says is in scan-files.ts, unchanged; a cold query at 10,000 adds used to parse every add's
 * stats and partition values before pruning one.
 */
import type { ColumnFacts, FileFacts, ScanDataFile, ScanDeleteFile, ScanFiles } from "../scan-files.ts";
import type { TableSnapshot } from "../table-format.ts";
import { columnsOf, numberOf, parseJson, partitionValue, sectionColumns, statBound } from "./scan-files.ts";
import type { Cell, DeltaColumn, Stats } from "./scan-files.ts";

type PartitionValues = Record<string, string | null>;

/** The adds' columns and what every add shares: the columns, the partition columns, parsed partition values. */
class AddsView {
  readonly columns: DeltaColumn[];
  readonly byName: Map<string, DeltaColumn>;
  readonly partitionColumns: Set<string>;
  readonly adds: Record<string, Cell[]>;
  private readonly partitions = new Map<string, PartitionValues>();
  /** Facts of one partition column for one partition-values text: "null" needs the add's row count. */
  private readonly partitionFacts = new Map<string, ColumnFacts | "null" | null>();

  constructor(snapshot: TableSnapshot) {
    this.columns = columnsOf(snapshot);
    this.byName = new Map(this.columns.map((c) => [c.column.name, c]));
    const metadata = sectionColumns(snapshot, "delta_metadata");
    this.partitionColumns = new Set((parseJson(metadata.partition_columns?.[0]) ?? []) as string[]);
    this.adds = sectionColumns(snapshot, "delta_adds");
  }

  get count(): number {
    return this.adds.path?.length ?? 0;
  }

  partitionValues(row: number): PartitionValues {
    const text = this.adds.partition_values?.[row];
    const memo = typeof text === "string" ? text : "";
    let values = this.partitions.get(memo);
    if (!values) this.partitions.set(memo, (values = (parseJson(text) ?? {}) as PartitionValues));
    return values;
  }

  /** What the add's partition value says of `column` in every row: shared by the adds with the same partition values. */
  partitionFact(row: number, { column, key }: DeltaColumn): ColumnFacts | "null" | null {
    const text = this.adds.partition_values?.[row];
    const memo = `${column.name}\u0000${typeof text === "string" ? text : ""}`;
    if (this.partitionFacts.has(memo)) return this.partitionFacts.get(memo)!;
    const values = this.partitionValues(row);
    const value = values[key] ?? values[column.name];
    let fact: ColumnFacts | "null" | null = null;
    if (value === null) fact = "null";
    else if (value !== undefined) {
      const v = partitionValue(column, value);
      if (v !== undefined) fact = { column: column.name, lower: v, upper: v, nullCount: 0, ...(column.type === "float" ? { nanCount: 0 } : {}) };
    }
    this.partitionFacts.set(memo, fact);
    return fact;
  }
}

/** The stats of one add: the JSON form, else the struct form a checkpoint may keep alone. */
function statsOf(adds: Record<string, Cell[]>, row: number): { stats: Stats; structForm: boolean } {
  const fromJson = parseJson(adds.stats?.[row]) as Stats | null;
  if (fromJson !== null) return { stats: fromJson, structForm: false };
  return { stats: (parseJson(adds.stats_parsed?.[row]) as Stats | null) ?? {}, structForm: true };
}

/** What an add's stats say of one (non-partition) column. */
function statsFact({ column, key }: DeltaColumn, stats: Stats, structForm: boolean, rows: number | null): ColumnFacts | null {
  const fact: ColumnFacts = { column: column.name };
  const nulls = stats.nullCount?.[key];
  if (typeof nulls === "number" && Number.isSafeInteger(nulls)) fact.nullCount = nulls;
  if (rows !== null && fact.nullCount !== undefined) fact.valueCount = rows;
  const lower = statBound(column, stats.minValues?.[key], "lower", structForm);
  const upper = statBound(column, stats.maxValues?.[key], "upper", structForm);
  if (lower !== undefined) fact.lower = lower;
  if (upper !== undefined) fact.upper = upper;
  return Object.keys(fact).length > 1 ? fact : null;
}

const rowsOf = (stats: Stats): number | null => (typeof stats.numRecords === "number" && Number.isSafeInteger(stats.numRecords) ? stats.numRecords : null);

/** One add: its row of the section, every field read from there when asked. */
class AddRow implements ScanDataFile, FileFacts {
  readonly fileFormat = "parquet";
  readonly deletes: number[];
  private readonly view: AddsView;
  private readonly row: number;
  private parsed: { stats: Stats; structForm: boolean } | null = null;

  constructor(view: AddsView, row: number, deletes: number[]) {
    this.view = view;
    this.row = row;
    this.deletes = deletes;
  }

  get paths(): string[] {
    const key = this.view.adds.key?.[this.row];
    return [typeof key === "string" ? key : String(this.view.adds.path?.[this.row])];
  }
  get size(): number {
    return numberOf(this.view.adds.size?.[this.row]) ?? 0;
  }
  get rows(): number | null {
    return rowsOf(this.stats().stats);
  }
  get facts(): FileFacts {
    return this;
  }
  get partition(): string {
    const values = this.view.partitionValues(this.row);
    const words: string[] = [];
    for (const { column, key } of this.view.columns) {
      if (this.view.partitionColumns.has(column.name)) words.push(`${column.name}=${values[key] ?? values[column.name] ?? "null"}`);
    }
    return words.join(", ");
  }

  of(name: string): ColumnFacts[] {
    const column = this.view.byName.get(name);
    if (!column) return [];
    if (this.view.partitionColumns.has(name)) {
      const fact = this.view.partitionFact(this.row, column);
      if (fact !== "null") return fact ? [fact] : [];
      const rows = this.rows;
      return rows === null ? [] : [{ column: name, valueCount: rows, nullCount: rows }];
    }
    if (column.column.type === "other") return [];
    const { stats, structForm } = this.stats();
    const fact = statsFact(column, stats, structForm, rowsOf(stats));
    return fact ? [fact] : [];
  }

  private stats(): { stats: Stats; structForm: boolean } {
    return (this.parsed ??= statsOf(this.view.adds, this.row));
  }
}

function deletionVectorOf(adds: Record<string, Cell[]>, row: number, storage: string): ScanDeleteFile {
  return {
    path: typeof adds.dv_key?.[row] === "string" ? (adds.dv_key[row] as string) : null,
    kind: "deletion-vector",
    rows: numberOf(adds.dv_cardinality?.[row]),
    size: numberOf(adds.dv_size_in_bytes?.[row]),
    offset: numberOf(adds.dv_offset?.[row]),
    length: numberOf(adds.dv_size_in_bytes?.[row]),
    inline: storage === "i" ? String(adds.dv_path_or_inline?.[row] ?? "") : null,
    storage,
  };
}

export function deltaScanFiles(snapshot: TableSnapshot): ScanFiles {
  const view = new AddsView(snapshot);
  const dataFiles: ScanDataFile[] = [];
  const deleteFiles: ScanDeleteFile[] = [];
  const storages = view.adds.dv_storage_type ?? [];
  for (let row = 0; row < view.count; row++) {
    const storage = storages[row];
    if (typeof storage !== "string") {
      dataFiles.push(new AddRow(view, row, []));
      continue;
    }
    dataFiles.push(new AddRow(view, row, [deleteFiles.length]));
    deleteFiles.push(deletionVectorOf(view.adds, row, storage));
  }
  return { columns: view.columns.map((c) => c.column), dataFiles, deleteFiles };
}
