/**
 * An Iceberg table registered in a metastore catalog (AWS Glue, Hive): iceberg-java's
 * GlueCatalog and HiveCatalog, Athena and Glue jobs keep the table's current metadata file in the
 * entry's `metadata_location` parameter and mark the entry `table_type=ICEBERG` (any case:
 * iceberg-java compares ignoring case); `previous_metadata_location` is history, never the pointer.
 */
import { CatalogTableError } from "../errors.ts";
import type { CatalogPointer, CatalogTable } from "../table-format.ts";

export const TABLE_TYPE_PARAMETER = "table_type";
export const METADATA_LOCATION_PARAMETER = "metadata_location";

export function icebergCatalogPointer(table: CatalogTable): CatalogPointer {
  const type = table.parameters[TABLE_TYPE_PARAMETER];
  if (type === undefined || type.toLowerCase() !== "iceberg") {
    const what = type === undefined ? "has no table_type parameter" : `has table_type ${JSON.stringify(type)}`;
    return { mismatch: `${what}, not ICEBERG${table.tableType ? ` (table type ${table.tableType})` : ""}` };
  }
  const pointer = table.parameters[METADATA_LOCATION_PARAMETER];
  if (pointer === undefined || pointer.trim() === "") {
    throw new CatalogTableError(
      table.label,
      `is an Iceberg table without a ${METADATA_LOCATION_PARAMETER} parameter: the catalog names no current metadata file; nothing read, written or deleted`,
    );
  }
  return { pointer, parameter: METADATA_LOCATION_PARAMETER };
}
