/**
 * The head object's model, independent of any codec: string properties plus named tables.
 * A table is columnar (every column holds one value per row) with a small closed set of
 * column types, so each codec can map them one to one and a decoded head is checked
 * column by column before anyone trusts it.
 */

import type { ColumnType, ColumnValueOf } from "../model/column-type.ts";

export type { ColumnType, ColumnValueOf } from "../model/column-type.ts";

export type HeadColumn = {
  [T in ColumnType]: { name: string; type: T; values: (ColumnValueOf[T] | null)[] };
}[ColumnType];

export interface HeadTable {
  name: string;
  columns: HeadColumn[];
}

export interface HeadModel {
  properties: Record<string, string>;
  /** In write order; names are unique. */
  tables: HeadTable[];
}

export const COLUMN_TYPES: readonly ColumnType[] = ["utf8", "int64", "float64", "bool", "binary", "utf8_list"];

/** Table and column names: printable, short, and not starting with "@" (codecs may use that for their own framing). */
const NAME_PATTERN = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;

function isValidName(name: string): boolean {
  return NAME_PATTERN.test(name);
}

export function rowCount(table: HeadTable): number {
  return table.columns[0]?.values.length ?? 0;
}

export function findTable(model: HeadModel, name: string): HeadTable | undefined {
  return model.tables.find((table) => table.name === name);
}

/**
 * Checks the structural rules every codec relies on and every decoder re-checks: unique valid
 * names, equal column lengths, values of the declared type. Returns the first problem, or null.
 */
export function modelProblem(model: HeadModel, options: { values?: boolean } = {}): string | null {
  for (const [key, value] of Object.entries(model.properties)) {
    if (typeof value !== "string") return `property ${key} is not a string`;
  }
  const seen = new Set<string>();
  for (const table of model.tables) {
    if (!isValidName(table.name)) return `invalid table name ${JSON.stringify(table.name)}`;
    if (seen.has(table.name)) return `duplicate table ${table.name}`;
    seen.add(table.name);
    const rows = rowCount(table);
    const columnNames = new Set<string>();
    for (const column of table.columns) {
      if (!isValidName(column.name)) return `table ${table.name}: invalid column name ${JSON.stringify(column.name)}`;
      if (columnNames.has(column.name)) return `table ${table.name}: duplicate column ${column.name}`;
      columnNames.add(column.name);
      if (!COLUMN_TYPES.includes(column.type)) return `table ${table.name}: column ${column.name} has unknown type ${String(column.type)}`;
      if (column.values.length !== rows) {
        return `table ${table.name}: column ${column.name} has ${column.values.length} values, expected ${rows}`;
      }
      // A decoder that built the values from typed buffers may skip this per-value pass.
      if (options.values === false) continue;
      const bad = column.values.findIndex((value) => value !== null && !isValueOfType(column.type, value));
      if (bad >= 0) return `table ${table.name}: column ${column.name} row ${bad} is not a valid ${column.type}`;
    }
  }
  return null;
}

function isValueOfType(type: ColumnType, value: unknown): boolean {
  switch (type) {
    case "utf8":
      return typeof value === "string";
    case "int64":
      return typeof value === "number" && Number.isSafeInteger(value);
    case "float64":
      return typeof value === "number";
    case "bool":
      return typeof value === "boolean";
    case "binary":
      return value instanceof Uint8Array;
    case "utf8_list":
      return Array.isArray(value) && value.every((item) => typeof item === "string");
  }
}
