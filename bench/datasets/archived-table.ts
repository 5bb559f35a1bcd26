/**
 * A synthetic Lance table whose history is all archived in a checkpoint, optionally with a current
 * head carrying the newest versions: what `versions` reads in the history scenarios
 * (bench/versions-loop.ts, bench/versions-steps.ts).
 */
import { openStore } from "../../lib/store/open-store.ts";
import type { ObjectStore } from "../../lib/store/object-store.ts";
import { loadManifestTemplate } from "./lance-template.ts";
import { SyntheticTable } from "./synthetic-table.ts";
import { clearLakewardenState, syntheticRecords, writeCheckpoint, writeHead } from "./lakewarden-state.ts";

export interface ArchivedTable {
  table: SyntheticTable;
  store: ObjectStore;
}

/** Versions 1..versions of `fragments` fragments; with `head`, the newest 16 are left to the head. The caller removes the table. */
export async function archivedTable(options: { cache: string; name: string; fragments: number; versions: number; head: boolean }): Promise<ArchivedTable> {
  const { fragments, versions } = options;
  const unarchived = options.head ? Math.min(16, versions - 1) : 0;
  const template = await loadManifestTemplate(`${options.cache}/template`);
  const table = new SyntheticTable({ template, cacheDir: options.cache, fragments, storage: "local", name: options.name, maxVersions: versions });
  await table.prepare();
  try {
    await table.growTo(versions);
    const store = openStore(table.location);
    const records = await syntheticRecords(store, fragments, versions);
    await clearLakewardenState(store);
    await writeCheckpoint(store, records.slice(0, versions - unarchived));
    if (options.head) await writeHead(store, versions);
    return { table, store };
  } catch (error) {
    await table.remove();
    throw error;
  }
}
