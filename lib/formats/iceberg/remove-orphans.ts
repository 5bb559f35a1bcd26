/**
 * Runs orphan-file removal on a table: read the current metadata, collect what it reaches,
 * list the table root, plan (orphan-files.ts), check that no commit landed meanwhile, delete.
 */
import type { ObjectInfo, ObjectStore } from "../../store/object-store.ts";
import { PreconditionFailedError } from "../../store/errors.ts";
import { latestMetadataFile, refuseCatalogTable } from "./metadata-files.ts";
import { planOrphanFiles, type OrphanPlan } from "./orphan-files.ts";
import { reachableFiles } from "./reachable.ts";
import { ICEBERG_DEFAULTS, tableRetention } from "./retention.ts";
import { IcebergFileReader } from "./snapshot-files.ts";
import { openIcebergTable, type OpenOptions } from "./table-state.ts";

export interface RemoveOrphansOptions extends OpenOptions {
  now?: Date;
  /** Only files older than this are removed (default 3 days, iceberg-java's). */
  olderThanMs?: number;
  dryRun?: boolean;
}

export interface RemoveOrphansReport {
  metadataKey: string;
  plan: OrphanPlan;
  deleted: string[];
  failed: { key: string; message: string }[];
}

export async function removeOrphanFiles(store: ObjectStore, options: RemoveOrphansOptions = {}): Promise<RemoveOrphansReport> {
  const now = options.now ?? new Date();
  const table = await openIcebergTable(store, options);
  if (options.metadataKey === undefined) refuseCatalogTable(store, table.metadataKey);
  const { metadata } = table.read;
  const reachable = await reachableFiles(new IcebergFileReader(store), metadata, table.metadataKey, table.resolve, table.versionHint !== null);
  const listing: ObjectInfo[] = [];
  for await (const object of store.list("")) listing.push(object);
  const plan = planOrphanFiles({
    listing,
    reachable: reachable.keys,
    unresolved: reachable.unresolved,
    // A current file with no number in its name: every numbered one is kept, as its order is unknown.
    currentMetadataSequence: table.read.file.name.sequence ?? Number.NEGATIVE_INFINITY,
    olderThan: new Date(now.getTime() - (options.olderThanMs ?? ICEBERG_DEFAULTS.orphanOlderThanMs)),
    gcEnabled: tableRetention(metadata.properties, store.uriOf(table.metadataKey)).gcEnabled,
    tableUri: store.uri,
  });
  const report: RemoveOrphansReport = { metadataKey: table.metadataKey, plan, deleted: [], failed: [] };
  if (options.dryRun || plan.orphans.length === 0) return report;
  if (options.metadataKey === undefined) {
    const latest = await latestMetadataFile(store);
    if (latest?.key !== table.metadataKey) {
      throw new PreconditionFailedError(`${store.uri}: metadata moved from ${table.metadataKey} to ${latest?.key ?? "nothing"} while planning: nothing deleted`, {
        uri: store.uriOf(table.metadataKey),
      });
    }
  }
  const result = await store.deleteMany(plan.orphans.map((o) => o.key));
  report.deleted = result.deleted;
  report.failed = result.failed;
  return report;
}
