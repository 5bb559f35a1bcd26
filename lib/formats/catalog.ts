/**
 * A table whose commit pointer a data catalog owns (an Iceberg table in AWS Glue): the catalog's
 * entry, read just before a run, says which format it is and where its current commit is. The
 * registry asks every format that reads catalog entries; this layer only checks that the pointer
 * lies under the table root, as `--metadata-location` does.
 */
import type { ObjectStore } from "../store/object-store.ts";
import { resolveTablePath } from "../model/table-path.ts";
import { CatalogTableError } from "./errors.ts";
import { TABLE_FORMATS } from "./index.ts";
import type { TableCatalog } from "./catalog-commit.ts";
import type { CatalogTable, TableFormat } from "./table-format.ts";

export type { CatalogTable } from "./table-format.ts";

export interface CatalogFormat {
  /** The table's format reading the table at the catalog's pointer (TableFormat.at). */
  format: TableFormat;
  /** The pointer as the catalog stores it. */
  pointer: string;
  /** The pointer as a key under the table root. */
  key: string;
}

const URI = /^[a-zA-Z][a-zA-Z0-9+.-]*:/;

/**
 * The format at the pointer `table` names, for the table at `store`. Throws CatalogTableError
 * (one line, nothing read from the table) when no format reads the entry, or its pointer is not
 * a file under the table root. `commitThrough`: the catalog `table` was loaded from, when the run
 * may commit through it (the format then removes versions by a commit guarded by `table`).
 */
export function formatAtCatalogPointer(store: ObjectStore, table: CatalogTable, options: { commitThrough?: TableCatalog } = {}): CatalogFormat {
  const readers = TABLE_FORMATS.filter((format) => format.catalogPointer !== undefined && format.at !== undefined);
  const readings = readers.map((format) => ({ format, reading: format.catalogPointer!(table) }));
  const matched = readings.flatMap(({ format, reading }) => ("pointer" in reading ? [{ format, ...reading }] : []));
  if (matched.length !== 1) {
    const why =
      matched.length === 0
        ? `is not a table lakewarden reads through a catalog (${readings.map(({ format, reading }) => `${format.name}: ${"mismatch" in reading ? reading.mismatch : "matched"}`).join("; ")})`
        : `reads as ${matched.map((m) => m.format.name).join(" and ")} at once`;
    throw new CatalogTableError(table.label, `${why}; nothing read, written or deleted at ${store.uri}`);
  }
  const { format, pointer, parameter } = matched[0]!;
  const where = `${parameter} ${JSON.stringify(pointer)}`;
  if (!URI.test(pointer)) throw new CatalogTableError(table.label, `${where} is not a URI; nothing read, written or deleted at ${store.uri}`);
  const resolved = resolveTablePath(pointer, { roots: [store.uri], absolute: true });
  if (resolved.kind !== "key") {
    throw new CatalogTableError(
      table.label,
      `${where} is not under the table root, ${store.uri}: the catalog and the deployment's settings disagree about where this table is; nothing read, written or deleted`,
    );
  }
  const at = options.commitThrough ? format.at!(resolved.key, { catalog: { catalog: options.commitThrough, entry: table } }) : format.at!(resolved.key);
  return { format: at, pointer, key: resolved.key };
}
