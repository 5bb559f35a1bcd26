/**
 * The format registry: which TableFormat a table location holds. Lance is the only one
 * today; Delta and Iceberg register here behind the same interface.
 */
import type { ObjectStore } from "../store/object-store.ts";
import type { TableFormat } from "./table-format.ts";
import { NotATableError } from "./errors.ts";
import { lanceFormat } from "./lance/lance-format.ts";

export const TABLE_FORMATS: readonly TableFormat[] = [lanceFormat];

/** The format registered under `name`; throws for an unknown name, listing the known ones. */
export function formatByName(name: string): TableFormat {
  const format = TABLE_FORMATS.find((candidate) => candidate.name === name);
  if (!format) {
    throw new Error(`unknown table format "${name}" (known: ${TABLE_FORMATS.map((f) => f.name).join(", ")})`);
  }
  return format;
}

/**
 * The format of the table at the store's root: the first whose version folder holds a
 * version file. One LIST per format tried. NotATableError when none does.
 */
export async function detectFormat(store: ObjectStore): Promise<TableFormat> {
  for (const format of TABLE_FORMATS) {
    if (await format.latestVersionFile(store)) return format;
  }
  const expected = TABLE_FORMATS.map((f) => `${f.versionsPrefix} (${f.name})`).join(", ");
  throw new NotATableError(store.uri, `not a table: no version files under ${expected}`);
}
