/**
 * A Delta data file's live rows (TableFormat.readRows): Parquet columns by physical name under
 * column mapping, partition columns from the add's partitionValues (PROTOCOL.md "Partition Value
 * Serialization"; they are not in the file), columns added after the file was written as nulls,
 * and the rows its deletion vector deletes left out.
 */
import type { ObjectStore } from "../../store/object-store.ts";
import { CorruptFileError } from "../errors.ts";
import { openParquet, toScanValue } from "../parquet-rows.ts";
import type { FileToRead, RowBatch, ScanColumn, ScanValue } from "../scan-files.ts";
import { timestampMicros } from "../scan-values.ts";
import type { TableSnapshot } from "../table-format.ts";
import { readParquetFooter } from "./data-file-footer.ts";
import { readDeletionVector } from "./deletion-vector-rows.ts";
import { columnsOf, parseJson, partitionValue, sectionColumns } from "./scan-files.ts";
import type { DeltaColumn } from "./scan-files.ts";

interface DeltaReadView {
  columns: Map<string, DeltaColumn>;
  partitionColumns: Set<string>;
  /** partitionValues of each add, by its key. */
  partitions: Map<string, Record<string, string | null>>;
}

const views = new WeakMap<TableSnapshot, DeltaReadView>();

function viewOf(snapshot: TableSnapshot): DeltaReadView {
  let view = views.get(snapshot);
  if (view) return view;
  const metadata = sectionColumns(snapshot, "delta_metadata");
  const adds = sectionColumns(snapshot, "delta_adds");
  const partitions = new Map<string, Record<string, string | null>>();
  for (let i = 0; i < (adds.path?.length ?? 0); i++) {
    const key = typeof adds.key?.[i] === "string" ? (adds.key[i] as string) : String(adds.path?.[i]);
    partitions.set(key, (parseJson(adds.partition_values?.[i]) ?? {}) as Record<string, string | null>);
  }
  view = {
    columns: new Map(columnsOf(snapshot).map((c) => [c.column.name, c])),
    partitionColumns: new Set((parseJson(metadata.partition_columns?.[0]) ?? []) as string[]),
    partitions,
  };
  views.set(snapshot, view);
  return view;
}

/** A partition value in the column's value form: "" and null are NULL (Spark writes no empty partition value). */
function partitionCell(column: ScanColumn, text: string | null | undefined, uri: string): ScanValue | null {
  if (text === null || text === undefined || text === "") return null;
  if (column.type === "timestamptz") {
    // Written in UTC without a zone by delta-rs and Spark alike (PROTOCOL.md: timestamps in UTC).
    const t = timestampMicros(text);
    if (t) return t.micros;
  }
  const value = partitionValue(column, text);
  if (value === undefined) throw new CorruptFileError(uri, `partition value "${text}" of column "${column.name}" is not a ${column.formatType}`);
  return value;
}

export async function readDeltaRows(store: ObjectStore, snapshot: TableSnapshot, file: FileToRead, names: readonly string[]): Promise<RowBatch> {
  const view = viewOf(snapshot);
  const path = file.paths[0]!;
  const uri = store.uriOf(path);
  const footer = file.footer ?? (await readParquetFooter(store, path));
  const dv = file.deletes.find((d) => d.kind === "deletion-vector");
  const [parquet, deleted] = await Promise.all([openParquet(store, footer), dv ? readDeletionVector(store, dv, path) : null]);
  const inFile = new Map(parquet.columns.map((c) => [c.name, c]));
  const wanted = names.map((name) => {
    const column = view.columns.get(name);
    if (!column) throw new CorruptFileError(uri, `no column "${name}" in the table schema`);
    return column;
  });
  const fromFile = wanted.filter((c) => !view.partitionColumns.has(c.column.name) && inFile.has(c.key)).map((c) => c.key);
  const raw = await parquet.read(fromFile);
  const keep = deleted && deleted.size > 0 ? Array.from({ length: parquet.rows }, (_, i) => i).filter((i) => !deleted.has(i)) : null;
  const rows = keep ? keep.length : parquet.rows;
  const partition = view.partitions.get(path) ?? {};
  const columns = new Map<string, (ScanValue | null)[]>();
  for (const { column, key } of wanted) {
    if (view.partitionColumns.has(column.name)) {
      const value = partitionCell(column, partition[key] ?? partition[column.name], uri);
      columns.set(column.name, new Array(rows).fill(value));
      continue;
    }
    const values = raw.get(key);
    if (!values) {
      columns.set(column.name, new Array(rows).fill(null));
      continue;
    }
    const scale = inFile.get(key)!.scale;
    const picked = keep ? keep.map((i) => values[i]) : values;
    columns.set(
      column.name,
      picked.map((v) => toScanValue(column, v, scale, uri)),
    );
  }
  return { rows, columns };
}
