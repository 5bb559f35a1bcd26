/**
 * An Iceberg data file's live rows (TableFormat.readRows), by the spec's reading rules:
 *   - columns by field id (spec "Column Projection"): a renamed column is found under its old
 *     name, a column added after the file was written is null unless an identity partition
 *     gives its value; a file without field ids is read by name;
 *   - position deletes (file_path, pos) that name the file leave those rows out;
 *   - equality deletes leave out rows equal on every equality column (null equal to null).
 * Which delete files apply was settled by the planner (scan-files.ts deletesApplying).
 * Deletion vectors in Puffin files (v3) are refused, not skipped.
 */
import type { ObjectStore } from "../../store/object-store.ts";
import { CorruptFileError, UnsupportedFeatureError } from "../errors.ts";
import { openParquet, toScanValue } from "../parquet-rows.ts";
import type { OpenParquet } from "../parquet-rows.ts";
import type { FileToRead, RowBatch, ScanColumn, ScanDeleteFile, ScanValue } from "../scan-files.ts";
import type { TableSnapshot } from "../table-format.ts";
import { readParquetFooter } from "./data-file-footer.ts";
import { FILES_SECTION } from "./live-files.ts";
import { namesFile, scanSchema, sourceValue, specsOf } from "./scan-files.ts";
import type { Field, SpecField } from "./scan-files.ts";

/** Reserved field ids of a position delete file's columns (spec "Position Delete Files"). */
const FILE_PATH_ID = 2147483546;
const POS_ID = 2147483545;

interface IcebergReadView {
  fields: Map<string, Field>;
  byId: Map<number, Field>;
  specs: Map<number, SpecField[]>;
  /** Each file's row in the section, by key (a number per file: a cold query reads a few of 10,000). */
  rows: Map<string, number>;
  /** The section's columns: a file's spec, partition (the head's JSON) and path as written, by row. */
  columns: Record<string, unknown[]>;
  /** Delete files read once per snapshot: every data file they apply to shares them. */
  positionDeletes: Map<string, Promise<Map<string, number[]>>>;
  equalityDeletes: Map<string, Promise<Set<string>>>;
}

const views = new WeakMap<TableSnapshot, IcebergReadView>();

function viewOf(snapshot: TableSnapshot): IcebergReadView {
  let view = views.get(snapshot);
  if (view) return view;
  const { json, fields } = scanSchema(snapshot);
  const columns = (snapshot.sections?.find((s) => s.name === FILES_SECTION)?.columns ?? {}) as Record<string, unknown[]>;
  const rows = new Map<string, number>();
  for (let i = 0; i < (columns.path?.length ?? 0); i++) rows.set(String(columns.path![i]), i);
  view = {
    fields: new Map(fields.map((f) => [f.name, f])),
    byId: new Map(fields.map((f) => [f.id, f])),
    specs: specsOf(json),
    rows,
    columns,
    positionDeletes: new Map(),
    equalityDeletes: new Map(),
  };
  views.set(snapshot, view);
  return view;
}

async function open(store: ObjectStore, path: string, footer: FileToRead["footer"]): Promise<OpenParquet> {
  if (!path.toLowerCase().endsWith(".parquet")) throw new UnsupportedFeatureError(store.uriOf(path), "only Parquet data and delete files are read");
  return openParquet(store, footer ?? (await readParquetFooter(store, path)));
}

/** The file's column for a table field: by field id, or by name in a file that has no ids. */
function fileColumnOf(parquet: OpenParquet, field: Field): OpenParquet["columns"][number] | undefined {
  const hasIds = parquet.columns.some((c) => c.fieldId !== null);
  return hasIds ? parquet.columns.find((c) => c.fieldId === field.id) : parquet.columns.find((c) => c.name === field.name);
}

/** Values of `fields` in `parquet`, each `parquet.rows` long: from the file, an identity partition, or nulls. */
async function readFields(parquet: OpenParquet, fields: readonly Field[], partitionOf: (field: Field) => ScanValue | null): Promise<Map<number, (ScanValue | null)[]>> {
  const located = fields.map((field) => ({ field, column: fileColumnOf(parquet, field) }));
  const raw = await parquet.read(located.flatMap((l) => (l.column ? [l.column.name] : [])));
  const out = new Map<number, (ScanValue | null)[]>();
  for (const { field, column } of located) {
    if (!column) {
      out.set(field.id, new Array(parquet.rows).fill(partitionOf(field)));
      continue;
    }
    out.set(
      field.id,
      raw.get(column.name)!.map((v) => toScanValue(field.column, v, column.scale, parquet.uri)),
    );
  }
  return out;
}

function positionsOf(store: ObjectStore, view: IcebergReadView, d: ScanDeleteFile): Promise<Map<string, number[]>> {
  let read = view.positionDeletes.get(d.path!);
  if (!read) {
    read = (async () => {
      const parquet = await open(store, d.path!, null);
      const path = parquet.columns.find((c) => c.fieldId === FILE_PATH_ID || c.name === "file_path");
      const pos = parquet.columns.find((c) => c.fieldId === POS_ID || c.name === "pos");
      if (!path || !pos) throw new CorruptFileError(parquet.uri, "position delete file has no file_path and pos columns");
      const raw = await parquet.read([path.name, pos.name]);
      const byFile = new Map<string, number[]>();
      const paths = raw.get(path.name)!;
      const positions = raw.get(pos.name)!;
      for (let i = 0; i < paths.length; i++) {
        const file = typeof paths[i] === "string" ? (paths[i] as string) : new TextDecoder().decode(paths[i] as Uint8Array);
        let list = byFile.get(file);
        if (!list) byFile.set(file, (list = []));
        list.push(Number(positions[i]));
      }
      return byFile;
    })();
    view.positionDeletes.set(d.path!, read);
  }
  return read;
}

const valueKey = (v: ScanValue | null): string =>
  v === null
    ? "n"
    : typeof v === "bigint"
      ? `i${v}`
      : typeof v === "number"
        ? `f${v}`
        : v instanceof Uint8Array
          ? `b${Buffer.from(v).toString("hex")}`
          : `${typeof v}${JSON.stringify(v)}`;

function equalityFields(view: IcebergReadView, d: ScanDeleteFile, where: string): Field[] {
  return (d.equalityColumns ?? []).map((name) => {
    const field = view.fields.get(name);
    if (!field) throw new UnsupportedFeatureError(where, `equality delete file compares column "${name}", which is not in the table schema`);
    if (field.column.type === "other" || field.column.type === "float")
      throw new UnsupportedFeatureError(where, `equality deletes on ${field.column.formatType} column "${name}" are not read`);
    return field;
  });
}

function equalityKeysOf(store: ObjectStore, view: IcebergReadView, d: ScanDeleteFile): Promise<Set<string>> {
  let read = view.equalityDeletes.get(d.path!);
  if (!read) {
    read = (async () => {
      const parquet = await open(store, d.path!, null);
      const fields = equalityFields(view, d, parquet.uri);
      const values = await readFields(parquet, fields, () => null);
      const keys = new Set<string>();
      for (let i = 0; i < parquet.rows; i++) keys.add(fields.map((f) => valueKey(values.get(f.id)![i]!)).join("|"));
      return keys;
    })();
    view.equalityDeletes.set(d.path!, read);
  }
  return read;
}

/** The value an identity partition gives a field the file does not hold; null when none does. */
function identityValue(view: IcebergReadView, key: string, field: Field): ScanValue | null {
  const row = view.rows.get(key);
  const spec = row === undefined ? [] : (view.specs.get(Number(view.columns.partition_spec_id?.[row] ?? 0)) ?? []);
  const identity = spec.find((f) => f.sourceId === field.id && f.transform === "identity");
  if (row === undefined || !identity) return null;
  let values: { field_id?: number; value?: unknown }[] = [];
  try {
    values = JSON.parse(String(view.columns.partition?.[row] ?? "[]")) as typeof values;
  } catch {
    return null;
  }
  const value = values.find((v) => v.field_id === identity.fieldId)?.value;
  return value === null || value === undefined ? null : (sourceValue(field.column as ScanColumn, value) ?? null);
}

export async function readIcebergRows(store: ObjectStore, snapshot: TableSnapshot, file: FileToRead, names: readonly string[]): Promise<RowBatch> {
  const view = viewOf(snapshot);
  const key = file.paths[0]!;
  const uri = store.uriOf(key);
  const wanted = names.map(
    (name) =>
      view.fields.get(name) ??
      (() => {
        throw new CorruptFileError(uri, `no column "${name}" in the table schema`);
      })(),
  );
  const puffin = file.deletes.find((d) => d.kind === "deletion-vector");
  if (puffin) throw new UnsupportedFeatureError(uri, `deletion vector ${puffin.path} (Iceberg v3) is not read yet; no rows are returned rather than deleted ones`);
  const equality = file.deletes.filter((d) => d.kind === "equality-deletes");
  const [parquet, positionFiles, equalityKeys] = await Promise.all([
    open(store, key, file.footer),
    Promise.all(file.deletes.filter((d) => d.kind === "position-deletes").map((d) => positionsOf(store, view, d))),
    Promise.all(equality.map((d) => equalityKeysOf(store, view, d))),
  ]);
  const equalityFieldSets = equality.map((d) => equalityFields(view, d, uri));
  const needed = [...new Map([...wanted, ...equalityFieldSets.flat()].map((f) => [f.id, f])).values()];
  const values = await readFields(parquet, needed, (field) => identityValue(view, key, field));

  const deleted = new Set<number>();
  const row = view.rows.get(key);
  const rawPath = row === undefined ? key : String(view.columns.file_path?.[row] ?? view.columns.path![row]);
  for (const byFile of positionFiles) {
    for (const [reference, positions] of byFile) if (namesFile(reference, key, rawPath)) for (const p of positions) deleted.add(p);
  }
  equalityFieldSets.forEach((fields, n) => {
    const keys = equalityKeys[n]!;
    for (let i = 0; i < parquet.rows; i++) if (keys.has(fields.map((f) => valueKey(values.get(f.id)![i]!)).join("|"))) deleted.add(i);
  });
  const keep = deleted.size > 0 ? Array.from({ length: parquet.rows }, (_, i) => i).filter((i) => !deleted.has(i)) : null;
  const columns = new Map<string, (ScanValue | null)[]>();
  for (const field of wanted) {
    const all = values.get(field.id)!;
    columns.set(field.name, keep ? keep.map((i) => all[i]!) : all);
  }
  return { rows: keep ? keep.length : parquet.rows, columns };
}
