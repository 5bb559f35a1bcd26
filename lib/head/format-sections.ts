/**
 * A format's own state for the head (Delta: adds with partition values and stats; Iceberg: one
 * row per data and delete file with bounds), carried as the format gives it: each section a head
 * table named `format.<name>`, each column typed by its values. The loader gives them back as
 * `snapshot.sections`; nothing in lakewarden reads inside them.
 */
import type { FormatSection } from "../formats/table-format.ts";
import type { HeadColumn, HeadModel, HeadTable } from "./model.ts";

export const FORMAT_SECTION_PREFIX = "format.";

type Value = string | number | boolean | null;

function columnOf(name: string, values: readonly Value[]): HeadColumn {
  const present = values.filter((v): v is Exclude<Value, null> => v !== null);
  if (present.length > 0 && present.every((v) => typeof v === "boolean")) return { name, type: "bool", values: values as (boolean | null)[] };
  if (present.length > 0 && present.every((v) => typeof v === "number")) {
    const integers = present.every((v) => Number.isSafeInteger(v));
    return { name, type: integers ? "int64" : "float64", values: values as (number | null)[] };
  }
  // Strings, empty columns, or mixed values: text, with numbers and booleans written as JSON.
  return { name, type: "utf8", values: values.map((v) => (v === null || typeof v === "string" ? v : JSON.stringify(v))) };
}

export function formatSectionTables(sections: readonly FormatSection[] | undefined): HeadTable[] {
  return (sections ?? []).map((section) => ({
    name: `${FORMAT_SECTION_PREFIX}${section.name}`,
    columns: Object.entries(section.columns).map(([name, values]) => columnOf(name, values)),
  }));
}

export function formatSectionsOf(tables: readonly HeadTable[]): FormatSection[] {
  return tables
    .filter((table) => table.name.startsWith(FORMAT_SECTION_PREFIX))
    .map((table) => ({
      name: table.name.slice(FORMAT_SECTION_PREFIX.length),
      columns: Object.fromEntries(table.columns.map((column) => [column.name, column.values as Value[]])),
    }));
}

/** The format sections of a decoded model (a version 1 head). */
export function formatSectionsOfModel(model: HeadModel): FormatSection[] {
  return formatSectionsOf(model.tables);
}
