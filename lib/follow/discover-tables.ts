/**
 * Finds the tables under a location: a folder is a table when it holds the format's version
 * folder (Lance: `_versions/`). Walks folders with delimiter listings only (S3 CommonPrefixes),
 * never listing a table's files, and stops descending at a table or at `maxDepth`.
 *
 * Folders whose name starts with "_" or "." are internal to some tool and are not walked:
 * LanceDB keeps its own catalog table `__manifest` next to the user's tables, Spark writes
 * `_temporary/`, lakewarden `_lakewarden/`. A table named explicitly is looked after anyway.
 */
import type { TableFormat } from "../formats/table-format.ts";
import type { ObjectStore } from "../store/object-store.ts";
import { mapConcurrent } from "../store/map-concurrent.ts";

export interface DiscoverOptions {
  /** Folder levels below the store root to look at (0 = only the root itself). Default 4. */
  maxDepth?: number;
  /** Folders listed at once. Default 8. */
  concurrency?: number;
}

/** Table roots relative to the store ("" when the store root is itself a table), sorted. */
export async function discoverTables(store: ObjectStore, formats: readonly Pick<TableFormat, "versionsPrefix">[], options: DiscoverOptions = {}): Promise<string[]> {
  const maxDepth = options.maxDepth ?? 4;
  const concurrency = options.concurrency ?? 8;
  const tables: string[] = [];
  let level = [""];
  for (let depth = 0; depth <= maxDepth && level.length > 0; depth++) {
    const listed = await mapConcurrent(level, concurrency, async (folder) => ({ folder, children: await store.listPrefixes(folder) }));
    const next: string[] = [];
    for (const { folder, children } of listed) {
      if (formats.some((format) => children.includes(folder + format.versionsPrefix))) {
        tables.push(folder.replace(/\/$/, ""));
      } else {
        next.push(...children.filter((child) => !isHiddenFolder(child)));
      }
    }
    level = next;
  }
  return tables.sort();
}

/** True when the last segment of a table root or folder starts with "_" or "." (internal to a tool). */
export function isHiddenFolder(path: string): boolean {
  const name = path.replace(/\/$/, "").split("/").pop() ?? "";
  return name.startsWith("_") || name.startsWith(".");
}
