/**
 * The tables the engine races write: one per engine, under a root of the caller's: a local temp
 * folder, or an s3:// prefix (moto's server in the tests) with a local folder for what is not in
 * the table (the SQL catalog's SQLite file).
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import type { EngineTable } from "./race.ts";

/** `name` under a local folder or an s3:// prefix. */
function under(root: string, name: string): string {
  return root.includes("://") ? `${root.replace(/\/+$/, "")}/${name}` : join(root, name);
}

export function deltaTable(root: string): EngineTable {
  return { format: "delta", label: "delta-rs", script: "delta_table.py", uri: under(root, "delta"), listsVacuumedVersions: true };
}

export function lanceTable(root: string): EngineTable {
  return { format: "lance", label: "pylance", script: "lance_table.py", uri: under(root, "t.lance") };
}

/** A file-system Iceberg table (v<N>.metadata.json + version hint): lakewarden opens it from the folder and expires its snapshots. */
export function icebergFolderTable(root: string): EngineTable {
  return { format: "iceberg", label: "pyiceberg (catalog-less)", script: "iceberg_table.py", uri: under(root, "iceberg-folder") };
}

/**
 * A table in pyiceberg's SQL catalog on SQLite (in `localDir`; the table under `root`): the
 * catalog row names the current metadata file, read here as pyiceberg's SqlCatalog reads it, and
 * given to lakewarden as --metadata-location.
 */
export function icebergSqlTable(root: string, localDir: string = root): EngineTable {
  const catalog = join(localDir, "catalog.db");
  return {
    format: "iceberg",
    label: "pyiceberg (SQL catalog)",
    script: "iceberg_table.py",
    uri: under(under(root, "lw"), "t"),
    scriptArgs: ["--catalog", catalog],
    metadataLocation: () => sqlCatalogPointer(catalog, "lw", "t"),
  };
}
/** The catalog row's metadata_location; null before the writer made the catalog or the table. */
export function sqlCatalogPointer(catalogFile: string, namespace: string, table: string): string | null {
  if (!existsSync(catalogFile)) return null;
  // The writer's commit holds SQLite's lock for a moment: wait for it rather than read no pointer.
  const db = new DatabaseSync(catalogFile, { readOnly: true, timeout: 5000 });
  try {
    const known = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'iceberg_tables'").get();
    if (!known) return null;
    const row = db.prepare("SELECT metadata_location FROM iceberg_tables WHERE table_namespace = ? AND table_name = ?").get(namespace, table) as
      | { metadata_location: string }
      | undefined;
    return row?.metadata_location ?? null;
  } finally {
    db.close();
  }
}
