/**
 * The head of a table whose commit pointer a catalog owns (LAKEWARDEN_GLUE_TABLES,
 * LAKEWARDEN_CATALOG_TABLES): written for
 * the file the catalog names now, never for the file an event names. iceberg-java writes
 * `NNNNN-uuid.metadata.json` before it swaps the catalog's pointer, so the newest file may be a
 * commit the catalog never took (a writer that failed or lost a race); a head of it would hand
 * readers a table state that never existed.
 *
 * The same order makes a fresh event often arrive before the swap it announces. When an event
 * names a file newer than the catalog's pointer, the catalog is asked again, with growing
 * pauses, until it names that file or the file is `waitMs` old; after that the file counts as a
 * commit the catalog did not take, and the head stays at the catalog's file.
 */
import { formatAtCatalogPointer } from "../../lib/formats/catalog.ts";
import type { TableCatalog } from "../../lib/formats/catalog-commit.ts";
import type { TableFormat } from "../../lib/formats/table-format.ts";
import { removalSteps } from "../../lib/maintenance/removal-steps.ts";
import { writeTableHead, type WriteTableHeadOptions, type WriteTableHeadResult } from "../../lib/head/write-table-head.ts";
import type { ObjectStore } from "../../lib/store/object-store.ts";

/** How long a file newer than the catalog's pointer may take to become it (from its creation). */
export const DEFAULT_CATALOG_WAIT_MS = 20_000;

export interface CatalogHeadInput {
  store: ObjectStore;
  /** The table's catalog: each load asks it now. */
  catalog: Pick<TableCatalog, "load">;
  /** Commit files the events named (keys under the table root), with when each was created. */
  notified: ReadonlyMap<string, Date | undefined>;
  headOptions?: Pick<WriteTableHeadOptions, "codec" | "inlineBudgetBytes">;
  waitMs: number;
  now: () => number;
  sleep: (ms: number) => Promise<void>;
}

export interface NotifiedElsewhere {
  /** The notified file, a key under the table root. */
  key: string;
  /** True when it is a commit after the catalog's file (one the catalog did not take). */
  newer: boolean;
}

export interface CatalogHeadResult {
  result: WriteTableHeadResult;
  /** The pointer as the catalog stores it, and as a key under the table root. */
  pointer: string;
  key: string;
  catalogTable: string;
  /** Catalog loads made (more than one when a newer file was waited for). */
  lookups: number;
  /** Notified files that are not the catalog's current metadata. */
  elsewhere: NotifiedElsewhere[];
}

export async function writeHeadAtCatalogPointer(input: CatalogHeadInput): Promise<CatalogHeadResult> {
  const { store } = input;
  let lookups = 0;
  let pause = 1_000;
  for (;;) {
    lookups++;
    const entry = await input.catalog.load();
    const { format, pointer, key } = formatAtCatalogPointer(store, entry);
    const elsewhere = await notifiedElsewhere(store, format, key, input.notified);
    // The youngest newer file decides: an older one the catalog passed over was not taken.
    const waitUntil = Math.max(...elsewhere.filter((file) => file.newer).map((file) => (input.notified.get(file.key)?.getTime() ?? Number.NEGATIVE_INFINITY) + input.waitMs));
    const left = waitUntil - input.now();
    if (left > 0) {
      await input.sleep(Math.min(pause, left));
      pause *= 2;
      continue;
    }
    const result = await writeTableHead(store, { ...input.headOptions, format });
    return { result, pointer, key, catalogTable: entry.label, lookups, elsewhere };
  }
}

async function notifiedElsewhere(store: ObjectStore, format: TableFormat, key: string, notified: ReadonlyMap<string, Date | undefined>): Promise<NotifiedElsewhere[]> {
  const others = [...notified.keys()].filter((k) => k !== key);
  if (others.length === 0) return [];
  // Which of two commit files is later is the format's to say, from the catalog's version file.
  const { committedAfter } = removalSteps(format.removal);
  const base = await format.latestVersionFile(store);
  return others.map((k) => ({ key: k, newer: base !== null && committedAfter(k, base) }));
}
