/**
 * Metadata files never change once written: a version file's table is read once per store root
 * and key (readSnapshot is called once per snapshot, all on the same metadata file), and a table
 * opened to find the latest version is kept for the read that follows (a head write or a
 * loader's fallback reads the same file next). A caller holding a version file gives its ETag: a
 * table read from another object at that key (replaced in place) is read again.
 */
import type { ObjectStore } from "../../store/object-store.ts";
import { openIcebergTable, type IcebergTable } from "./table-state.ts";

const tables = new Map<string, Promise<IcebergTable>>();
const LIMIT = 4;

function cacheKey(store: ObjectStore, key: string): string {
  return `${store.uri}\u0000${key}`;
}

function remembered(store: ObjectStore, key: string, table: Promise<IcebergTable>): Promise<IcebergTable> {
  const at = cacheKey(store, key);
  tables.delete(at);
  if (tables.size >= LIMIT) tables.delete(tables.keys().next().value!);
  table.catch(() => tables.get(at) === table && tables.delete(at));
  tables.set(at, table);
  return table;
}

/** The table whose current metadata file is `key`; `etag`: the one its caller's version file records. */
export async function tableAt(store: ObjectStore, key: string, etag?: string): Promise<IcebergTable> {
  const cached = tables.get(cacheKey(store, key));
  if (cached) {
    const table = await cached.catch(() => null);
    if (table && (etag === undefined || table.read.file.etag === etag)) return table;
  }
  return remembered(store, key, openIcebergTable(store, { metadataKey: key }));
}

/** Keeps a table just opened (by listing) for the reads of its metadata file that follow. */
export function rememberTable(table: IcebergTable): IcebergTable {
  remembered(table.store, table.metadataKey, Promise.resolve(table));
  return table;
}
