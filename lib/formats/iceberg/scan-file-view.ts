/**
 * An Iceberg snapshot's live files as the planner reads them (TableFormat.scanFiles), straight from
 * the head's `iceberg_files` columns and decoded only as far as a query asks: a data file is its
 * row number in the section, and its facts about a column are decoded when the filter names that
 * column, partition values first (parsed once per distinct partition, shared by every file in it)
 * and the file's metrics only when the partition did not already rule the file out. A cold query
 * on a 10,000-file table used to decode every bound of every column of every file before pruning
 * one (bench/results/cold-query.md); what each fact says is in scan-files.ts, unchanged.
 */
import type { ColumnFacts, FileFacts, ScanDataFile, ScanDeleteFile, ScanFiles } from "../scan-files.ts";
import type { TableSnapshot } from "../table-format.ts";
import { FILES_SECTION } from "./live-files.ts";
import { metricFacts, namesFile, partitionFacts, scanSchema, specsOf } from "./scan-files.ts";
import type { Field, MetricEntries, SpecField } from "./scan-files.ts";

type Cell = string | number | boolean | bigint | null;
type Column = readonly unknown[];

const EMPTY: Column = [];

function intOf(value: unknown): number | null {
  if (typeof value === "number") return value;
  if (typeof value === "bigint") return Number(value);
  if (typeof value === "string" && /^-?\d+$/.test(value)) return Number(value);
  return null;
}

function seqOf(value: unknown): bigint {
  if (typeof value === "bigint") return value;
  if (typeof value === "number") return BigInt(value);
  if (typeof value === "string" && /^-?\d+$/.test(value)) return BigInt(value);
  return 0n;
}

/** A metric map exactly as live-files.ts mapJson writes it: JSON.stringify of field id → a count or hex text (no spaces, no escapes). */
const WRITTEN_MAP = /^\{(?:"\d+":(?:"[0-9a-f]*"|-?\d+)(?:,(?!\})|\}$))*$|^\{\}$/;

/**
 * The entry for field `id` in a metric map: found in the text in the form the head writes (a file's
 * five maps parsed whole for one column cost most of a cold query's plan); any other text is
 * parsed as JSON, and text that is not a JSON object has no entries.
 */
export function mapEntry(text: unknown, id: number): unknown {
  if (typeof text !== "string") return undefined;
  if (!WRITTEN_MAP.test(text)) return parsedEntry(text, id);
  const key = `"${id}":`;
  // From the end, as JSON.parse keeps the last of a repeated key. A key follows "{" or ","; "11": holds
  // "1": only past its own first quote, never right after one of those.
  let at = text.lastIndexOf(key);
  while (at > 0 && text[at - 1] !== "{" && text[at - 1] !== ",") at = text.lastIndexOf(key, at - 1);
  if (at <= 0) return undefined;
  const start = at + key.length;
  if (text[start] === '"') return text.slice(start + 1, text.indexOf('"', start + 1));
  let end = start;
  while (text[end] !== "," && text[end] !== "}") end++;
  return Number(text.slice(start, end));
}

function parsedEntry(text: string, id: number): unknown {
  try {
    const parsed = JSON.parse(text) as unknown;
    return parsed && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as Record<string, unknown>)[String(id)] : undefined;
  } catch {
    return undefined;
  }
}

/** What one partition (a spec id and the head's partition JSON) says, shared by every file in it. */
interface Partition {
  words: string;
  /** Facts by source column; "null" where the value is null (the fact needs the file's row count). */
  facts: Map<string, (ColumnFacts | "null")[]>;
}

/** A delete file's row, with what deciding whom it applies to needs. */
interface DeleteRow {
  row: number;
  content: number;
  specId: number;
  partition: string;
  seq: bigint;
  referenced: Cell;
}

/** The section's columns and the schema, specs and parsed partitions every file of it shares. */
class SectionView {
  readonly fields: Field[];
  readonly byName: Map<string, Field>;
  readonly byId: Map<number, Field>;
  readonly deleteRows: DeleteRow[] = [];
  private readonly specs: Map<number, SpecField[]>;
  /** Columns some spec partitions by: only these have partition facts. */
  private readonly partitionSources = new Set<string>();
  private readonly partitions = new Map<string, Partition>();
  private readonly columns: Record<string, Column>;

  constructor(snapshot: TableSnapshot) {
    const { json, fields } = scanSchema(snapshot);
    this.fields = fields;
    this.byName = new Map(fields.map((f) => [f.name, f]));
    this.byId = new Map(fields.map((f) => [f.id, f]));
    this.specs = specsOf(json);
    for (const spec of this.specs.values()) for (const f of spec) if (this.byId.has(f.sourceId)) this.partitionSources.add(this.byId.get(f.sourceId)!.name);
    this.columns = (snapshot.sections?.find((s) => s.name === FILES_SECTION)?.columns ?? {}) as Record<string, Column>;
  }

  column(name: string): Column {
    return this.columns[name] ?? EMPTY;
  }

  cell(name: string, row: number): Cell {
    return (this.column(name)[row] ?? null) as Cell;
  }

  get rowCount(): number {
    return this.column("path").length;
  }

  key(row: number): string {
    return String(this.cell("path", row));
  }
  content(row: number): number {
    return intOf(this.cell("content", row)) ?? 0;
  }
  specId(row: number): number {
    return intOf(this.cell("partition_spec_id", row)) ?? 0;
  }
  partitionText(row: number): string {
    return String(this.cell("partition", row) ?? "[]");
  }
  rows(row: number): number | null {
    return intOf(this.cell("record_count", row));
  }
  seq(row: number): bigint {
    return seqOf(this.cell("sequence_number", row));
  }
  fileFormat(row: number): string {
    return String(this.cell("file_format", row) ?? "").toLowerCase();
  }
  size(row: number): number | null {
    return intOf(this.cell("file_size_in_bytes", row));
  }

  metricEntries(row: number, id: number): MetricEntries {
    return {
      values: mapEntry(this.cell("value_counts", row), id),
      nulls: mapEntry(this.cell("null_value_counts", row), id),
      nans: mapEntry(this.cell("nan_value_counts", row), id),
      lower: mapEntry(this.cell("lower_bounds", row), id),
      upper: mapEntry(this.cell("upper_bounds", row), id),
    };
  }

  isPartitionSource(column: string): boolean {
    return this.partitionSources.has(column);
  }

  unpartitioned(specId: number): boolean {
    return (this.specs.get(specId) ?? []).every((f) => f.transform === "void");
  }

  /** The partition of a file's row, parsed on first use and shared by every file in it. */
  partition(row: number): Partition {
    const specId = this.specId(row);
    const text = this.partitionText(row);
    const memo = `${specId}\u0000${text}`;
    let partition = this.partitions.get(memo);
    if (!partition) this.partitions.set(memo, (partition = this.parsePartition(this.specs.get(specId) ?? [], text)));
    return partition;
  }

  private parsePartition(spec: readonly SpecField[], text: string): Partition {
    let values: { field_id?: number; name?: string; value?: unknown }[] = [];
    try {
      values = JSON.parse(text) as typeof values;
    } catch {
      values = [];
    }
    const words: string[] = [];
    const facts = new Map<string, (ColumnFacts | "null")[]>();
    for (const value of values) {
      const field = spec.find((f) => f.fieldId === value.field_id);
      const source = field ? this.byId.get(field.sourceId) : undefined;
      words.push(`${value.name ?? "?"}=${value.value === null || value.value === undefined ? "null" : String(value.value)}`);
      if (!field || !source || source.column.type === "other") continue;
      // Every transform but void maps null to null and nothing else to null: the fact is the file's row count of nulls.
      const isNull = field.transform !== "void" && (value.value === null || value.value === undefined);
      const fact = isNull ? "null" : partitionFacts(field, source.column, value.value, null);
      if (!fact) continue;
      const list = facts.get(source.name);
      if (list) list.push(fact);
      else facts.set(source.name, [fact]);
    }
    return { words: words.join(", "), facts };
  }

  deleteFileOf(d: DeleteRow): ScanDeleteFile {
    const format = this.fileFormat(d.row);
    const ids = this.cell("equality_ids", d.row);
    const equalityIds = typeof ids === "string" ? (JSON.parse(ids) as number[]) : [];
    return {
      path: this.key(d.row),
      kind: d.content === 2 ? "equality-deletes" : format === "puffin" ? "deletion-vector" : "position-deletes",
      rows: this.rows(d.row),
      size: this.size(d.row),
      ...(d.content === 2 ? { equalityColumns: equalityIds.map((id) => this.byId.get(id)?.name ?? `#${id}`) } : {}),
      offset: intOf(this.cell("content_offset", d.row)),
      length: intOf(this.cell("content_size_in_bytes", d.row)),
      storage: format,
    };
  }

  /** Indexes of the delete files that apply to the data file of `row` (spec "Scan Planning"). */
  deletesApplying(row: number): number[] {
    const applying: number[] = [];
    if (this.deleteRows.length === 0) return applying;
    const key = this.key(row);
    const seq = this.seq(row);
    const specId = this.specId(row);
    const partition = this.partitionText(row);
    this.deleteRows.forEach((d, i) => {
      if (d.content === 1) {
        if (typeof d.referenced === "string") {
          if (namesFile(d.referenced, key, key)) applying.push(i);
        } else if (d.seq >= seq && d.specId === specId && d.partition === partition) {
          applying.push(i);
        }
      } else if (d.content === 2) {
        if (d.seq > seq && (this.unpartitioned(d.specId) || (d.specId === specId && d.partition === partition))) applying.push(i);
      }
    });
    return applying;
  }
}

/** One live data file: its row of the section, every field read from there when asked. */
class DataFileRow implements ScanDataFile, FileFacts {
  private readonly view: SectionView;
  private readonly row: number;
  /** The last column's metric facts: a range (`v >= a AND v < b`) asks the same column twice in a row. */
  private metricsColumn: string | null = null;
  private metrics: ColumnFacts | null = null;

  constructor(view: SectionView, row: number) {
    this.view = view;
    this.row = row;
  }

  get paths(): string[] {
    return [this.view.key(this.row)];
  }
  get fileFormat(): string {
    return this.view.fileFormat(this.row);
  }
  get size(): number {
    return this.view.size(this.row) ?? 0;
  }
  get rows(): number | null {
    return this.view.rows(this.row);
  }
  get facts(): FileFacts {
    return this;
  }
  get deletes(): number[] {
    return this.view.deletesApplying(this.row);
  }
  get partition(): string {
    return this.view.partition(this.row).words;
  }

  /** The partition's facts about `column` first (shared, already parsed), then the file's metrics, decoded only if asked for. */
  *of(column: string): Generator<ColumnFacts> {
    const view = this.view;
    if (view.isPartitionSource(column)) {
      for (const fact of view.partition(this.row).facts.get(column) ?? []) {
        if (fact !== "null") yield fact;
        else {
          const rows = this.rows;
          if (rows !== null) yield { column, valueCount: rows, nullCount: rows };
        }
      }
    }
    const field = view.byName.get(column);
    if (!field || field.column.type === "other") return;
    if (this.metricsColumn !== column) {
      this.metrics = metricFacts(field, view.metricEntries(this.row, field.id));
      this.metricsColumn = column;
    }
    if (this.metrics) yield this.metrics;
  }
}

export function icebergScanFiles(snapshot: TableSnapshot): ScanFiles {
  const view = new SectionView(snapshot);
  const dataFiles: ScanDataFile[] = [];
  const contents = view.column("content");
  for (let row = 0; row < view.rowCount; row++) {
    const content = intOf(contents[row] ?? null) ?? 0;
    if (content === 0) {
      dataFiles.push(new DataFileRow(view, row));
      continue;
    }
    view.deleteRows.push({
      row,
      content,
      specId: view.specId(row),
      partition: view.partitionText(row),
      seq: view.seq(row),
      referenced: view.cell("referenced_data_file", row),
    });
  }
  return { columns: view.fields.map((f) => f.column), dataFiles, deleteFiles: view.deleteRows.map((d) => view.deleteFileOf(d)) };
}
