/**
 * Iceberg's maintenance actions run on their own, outside lakewarden's pipeline (no lease, no
 * intent, no checkpoint, no proof): snapshot expiry and orphan-file removal with iceberg-java's
 * semantics. Tests only: they compare the pipeline's results with these rules, and make tables
 * in the states those actions leave. lakewarden's cleanup uses the same plan and commit through
 * the format's removal strategy (lib/formats/iceberg/iceberg-format.ts).
 *
 * Snapshot expiry: plan (planExpiry), write the commit (writeExpiryCommit), then delete what the
 * old metadata reached and the new one does not.
 *
 * Orphan-file removal: read the current metadata, collect what it reaches, list the table root,
 * plan, check that no commit landed meanwhile, delete. The plan, pure over a listing and the reachable set:
 *   - a file is an orphan when nothing reachable from the current metadata names it;
 *   - only files last modified before `olderThan` (default now - 3 days) are removed, so a
 *     commit in progress keeps its files;
 *   - paths with a segment starting with "_" or "." below the table root are hidden and never
 *     candidates (Hadoop `.crc` files, `_SUCCESS`, lakewarden's own `_lakewarden/`), except
 *     partition folders (`_col=value`);
 *   - a reference that cannot be resolved (prefix mismatch included) is an error: nothing is removed;
 *   - `gc.enabled=false` removes nothing;
 *   - metadata files at or above the current one's sequence are never candidates (a commit
 *     that landed after the metadata was read).
 */
import type { ObjectInfo, ObjectStore } from "../../../lib/store/object-store.ts";
import { PreconditionFailedError } from "../../../lib/store/errors.ts";
import { UnresolvableReferenceError } from "../../../lib/formats/errors.ts";
import type { UnresolvedReference } from "../../../lib/formats/table-format.ts";
import { blockOn, planExpiry, writeExpiryCommit, type ExpiryOverrides, type ExpiryPlan } from "../../../lib/formats/iceberg/expire-snapshots.ts";
import { isHiddenKey } from "../../../lib/formats/iceberg/hidden-keys.ts";
import { latestMetadataFile, refuseCatalogTable } from "../../../lib/formats/iceberg/metadata-files.ts";
import { parseMetadataKey } from "../../../lib/formats/iceberg/metadata-names.ts";
import { reachableFiles } from "../../../lib/formats/iceberg/reachable.ts";
import { ICEBERG_DEFAULTS, tableRetention, type TableRetention } from "../../../lib/formats/iceberg/retention.ts";
import { IcebergFileReader } from "../../../lib/formats/iceberg/snapshot-files.ts";
import { openIcebergTable, type IcebergTable, type OpenOptions } from "../../../lib/formats/iceberg/table-state.ts";

export interface ExpireOptions extends ExpiryOverrides {
  now?: Date;
  dryRun?: boolean;
  /** Called after the commit, before any delete (tests observe the order of writes). */
  afterCommit?: (committedKey: string) => Promise<void> | void;
}

export interface ExpireReport {
  baseKey: string;
  /** The metadata file written; null on a dry run or when nothing expires. */
  committedKey: string | null;
  expired: string[];
  droppedRefs: string[];
  /** Keys planned for deletion (reachable from the old metadata only). */
  toDelete: string[];
  deleted: string[];
  failed: { key: string; message: string }[];
}

/** Plans, commits and cleans up snapshot expiry on a catalog-less table. */
export async function expireSnapshots(store: ObjectStore, options: ExpireOptions = {}): Promise<ExpireReport> {
  const now = options.now ?? new Date();
  const table = await openIcebergTable(store);
  const { metadata } = table.read;
  const retention = tableRetention(metadata.properties, store.uriOf(table.metadataKey));
  const plan = planExpiry(metadata, now.getTime(), retention, options);
  const report: ExpireReport = { baseKey: table.metadataKey, committedKey: null, expired: plan.expire, droppedRefs: plan.dropRefs, toDelete: [], deleted: [], failed: [] };
  if (plan.expire.length === 0 && plan.dropRefs.length === 0) {
    // Nothing to expire; still read what the table reaches, so a broken table is reported, not passed as clean.
    const reachable = await reachableFiles(new IcebergFileReader(store), metadata, table.metadataKey, table.resolve, table.versionHint !== null);
    blockOn(reachable, store.uri, "on the current metadata");
    return report;
  }
  return commitExpiry(table, plan, now, retention, options, report);
}

/** Writes the expiry commit for `plan` on `table`, then deletes the files only the expired snapshots reached. */
export async function commitExpiry(
  table: IcebergTable,
  plan: Pick<ExpiryPlan, "expire" | "dropRefs">,
  now: Date,
  retention: TableRetention,
  options: Pick<ExpireOptions, "dryRun" | "afterCommit">,
  report: ExpireReport,
): Promise<ExpireReport> {
  const written = await writeExpiryCommit(table, plan, now, retention, { dryRun: options.dryRun ?? false });
  report.toDelete = written.toDelete;
  if (written.key === null) return report;
  report.committedKey = written.key;
  await options.afterCommit?.(written.key);
  const result = await table.store.deleteMany(report.toDelete);
  report.deleted = result.deleted;
  report.failed = result.failed;
  return report;
}

export interface OrphanPlanInput {
  /** Every object under the table root (or the scanned part of it). */
  listing: readonly ObjectInfo[];
  reachable: ReadonlySet<string> | ReadonlyMap<string, unknown>;
  unresolved: readonly UnresolvedReference[];
  /** Sequence of the current metadata file. */
  currentMetadataSequence: number;
  olderThan: Date;
  gcEnabled: boolean;
  /** Names the table in errors. */
  tableUri: string;
}

export interface OrphanPlan {
  orphans: ObjectInfo[];
  /** Unreferenced, but modified at or after `olderThan`: kept. */
  tooYoung: ObjectInfo[];
  hidden: ObjectInfo[];
  /** Set when nothing may be removed at all (gc.enabled=false). */
  refusal: string | null;
}

export function planOrphanFiles(input: OrphanPlanInput): OrphanPlan {
  const blocking = input.unresolved.find((u) => u.kind === "unresolvable");
  if (blocking) {
    throw new UnresolvableReferenceError(input.tableUri, `orphan removal refused: ${blocking.path} cannot be resolved (${blocking.reason}); nothing deleted`);
  }
  const plan: OrphanPlan = { orphans: [], tooYoung: [], hidden: [], refusal: null };
  if (!input.gcEnabled) {
    plan.refusal = "gc.enabled is false: the table forbids maintenance from deleting its files";
    return plan;
  }
  for (const object of input.listing) {
    if (isHiddenKey(object.key)) {
      plan.hidden.push(object);
      continue;
    }
    if (input.reachable.has(object.key)) continue;
    const name = parseMetadataKey(object.key);
    if (name && name.sequence >= input.currentMetadataSequence) continue;
    if (object.lastModified.getTime() < input.olderThan.getTime()) plan.orphans.push(object);
    else plan.tooYoung.push(object);
  }
  return plan;
}

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
