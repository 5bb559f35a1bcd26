/**
 * Snapshot expiry on a table a catalog owns. A metastore catalog (AWS Glue, as iceberg-java's
 * GlueTableOperations commits): the next metadata document is written create-only as
 * `<N+1>-<uuid>.metadata.json` beside the current one, then the catalog's entry is moved to it
 * (`metadata_location` = the new file, `previous_metadata_location` = the base) if and only if the
 * entry is still the one the plan was made on. Then a fresh load must show the new file (or a
 * commit made on top of it) before the caller deletes anything. A REST catalog (commitChanges)
 * is sent the commit's requirements and updates and writes the metadata itself; the same fresh
 * load follows.
 *
 * The file written stays when the swap is refused (the entry moved) or not answered: a refused one
 * is an orphan that orphan removal takes once it is past the safety window; an unanswered one may
 * be the catalog's pointer now, which the next run reads back before deciding.
 */
import { randomUUID } from "node:crypto";
import { gzipSync } from "node:zlib";
import type { ObjectStore } from "../../store/object-store.ts";
import type { CatalogCommitAnswer } from "../catalog-commit.ts";
import type { CatalogBinding, CatalogTable } from "../table-format.ts";
import { CatalogCommitError, UnsupportedFeatureError, MaintenanceOptOutError } from "../errors.ts";
import { METADATA_LOCATION_PARAMETER, icebergCatalogPointer } from "./catalog-table.ts";
import { buildExpiredMetadata, metadataPathOf, type ExpiryPlan } from "./expire-snapshots.ts";
import { stringifyJsonLossless, type JsonValue } from "./lossless-json.ts";
import { nextCatalogMetadataKey } from "./metadata-names.ts";
import { readMetadataFile } from "./metadata-files.ts";
import type { TableRetention } from "./retention.ts";
import type { IcebergTable } from "./table-state.ts";

export const PREVIOUS_METADATA_LOCATION_PARAMETER = "previous_metadata_location";

/** The key (under the table root) of the metadata file an entry names, or null when it names none there. */
function pointerKey(table: IcebergTable, entry: CatalogTable): string | null {
  const reading = icebergCatalogPointer(entry);
  if (!("pointer" in reading)) return null;
  const resolved = table.resolve(reading.pointer);
  return resolved.kind === "key" ? resolved.key : null;
}

/**
 * Commits `plan` on `table` (read at `binding.entry`'s pointer) through the catalog; returns the
 * key of the metadata file the catalog now names. Throws CatalogCommitError (nothing deleted) when
 * the catalog refused, did not answer, or a fresh load does not show the commit.
 */
export async function commitExpiryThroughCatalog(
  table: IcebergTable,
  plan: Pick<ExpiryPlan, "expire" | "dropRefs">,
  now: Date,
  retention: TableRetention,
  binding: CatalogBinding,
): Promise<{ key: string }> {
  const { store } = table;
  const { catalog, entry } = binding;
  const uri = store.uriOf(table.metadataKey);
  if (!retention.gcEnabled) throw new MaintenanceOptOutError(uri, "gc.enabled is false: expiring snapshots would orphan files the table forbids deleting; nothing written");
  if (pointerKey(table, entry) !== table.metadataKey) {
    throw new CatalogCommitError(
      catalog.label,
      "conflict",
      `the entry the run loaded does not name ${table.metadataKey}, the metadata the plan read: re-plan; nothing written or deleted`,
    );
  }
  if (catalog.commitChanges) return commitChanges(table, plan, binding);
  const name = table.read.file.name;
  if (name.naming === "other" || !catalog.updateParameters) {
    throw new UnsupportedFeatureError(uri, `${catalog.label}: lakewarden cannot name the next metadata file or commit it through this catalog; nothing written`);
  }
  const nextKey = nextCatalogMetadataKey(name, randomUUID());
  const next = buildExpiredMetadata(table.read.metadata, table.metadataKey, plan, now.getTime(), retention.previousVersionsMax, uri);
  const nextPointer = metadataPathOf(table.read.metadata, nextKey.slice(nextKey.lastIndexOf("/") + 1));
  const bytes = new TextEncoder().encode(stringifyJsonLossless(next, 2));
  await store.put(nextKey, name.gzip ? gzipSync(bytes) : bytes, { ifNoneMatch: "*", contentType: "application/json" });

  const basePointer = entry.parameters[METADATA_LOCATION_PARAMETER]!;
  const answer = await catalog.updateParameters(entry, { [METADATA_LOCATION_PARAMETER]: nextPointer, [PREVIOUS_METADATA_LOCATION_PARAMETER]: basePointer });
  // Refused or unanswered, the file stays: orphan removal takes an unreferenced one past the safety window.
  refuseUnanswered(binding, answer, `to ${nextPointer}`);
  await assertShown(store, table, binding, nextKey, nextPointer);
  return { key: nextKey };
}

function refuseUnanswered(binding: CatalogBinding, answer: CatalogCommitAnswer, what: string): void {
  if (answer.outcome === "conflict") {
    throw new CatalogCommitError(
      binding.catalog.label,
      "conflict",
      `the expiry commit was refused (${answer.reason}): another commit moved the table; re-plan on the new metadata; nothing deleted`,
    );
  }
  if (answer.outcome === "unknown") {
    throw new CatalogCommitError(
      binding.catalog.label,
      "unknown",
      `the expiry commit ${what} got no answer (${answer.reason}): it may or may not have applied; stopped with nothing deleted, and the next run reads the table back before deciding`,
    );
  }
}

/**
 * The Iceberg REST protocol's table commit: requirements that the table is the one the plan read
 * (its uuid, and every ref at the snapshot the plan saw, the refs it keeps and those it drops),
 * then the updates (the expired refs removed, the expired snapshots removed). The catalog writes
 * the new metadata file; its answer names it.
 */
async function commitChanges(table: IcebergTable, plan: Pick<ExpiryPlan, "expire" | "dropRefs">, binding: CatalogBinding): Promise<{ key: string }> {
  const { metadata } = table.read;
  const requirements: JsonValue[] = [];
  if (metadata.tableUuid !== null) requirements.push({ type: "assert-table-uuid", uuid: metadata.tableUuid });
  for (const ref of metadata.refs) requirements.push({ type: "assert-ref-snapshot-id", ref: ref.name, "snapshot-id": BigInt(ref.snapshotId) });
  const updates: JsonValue[] = plan.dropRefs.map((name) => ({ action: "remove-snapshot-ref", "ref-name": name }));
  if (plan.expire.length > 0) updates.push({ action: "remove-snapshots", "snapshot-ids": plan.expire.map((id) => BigInt(id)) });
  const answer = await binding.catalog.commitChanges!(binding.entry, stringifyJsonLossless({ requirements, updates }));
  refuseUnanswered(binding, answer, `through ${binding.catalog.label}`);
  const pointer = answer.outcome === "accepted" ? answer.pointer : undefined;
  const resolved = pointer === undefined ? null : table.resolve(pointer);
  if (resolved === null || resolved.kind !== "key") {
    throw new CatalogCommitError(
      binding.catalog.label,
      "unconfirmed",
      `the catalog accepted the expiry commit but named ${pointer ?? "no metadata file"}, not a file under the table root; nothing deleted`,
    );
  }
  await assertShown(table.store, table, binding, resolved.key, pointer!);
  return { key: resolved.key };
}

/**
 * A fresh load names `nextKey`, or a metadata file whose metadata-log names it (a writer committed
 * on top of it a moment later). Anything else: the commit is not what the catalog serves, so
 * deleting what it expired could break the table readers are given.
 */
async function assertShown(store: ObjectStore, table: IcebergTable, binding: CatalogBinding, nextKey: string, nextPointer: string): Promise<void> {
  const fresh = await binding.catalog.load();
  const key = pointerKey(table, fresh);
  if (key === nextKey) return;
  if (key !== null) {
    const read = await readMetadataFile(store, key);
    if (
      read.metadata.metadataLog.some((logged) => {
        const r = table.resolve(logged.file);
        return r.kind === "key" && r.key === nextKey;
      })
    )
      return;
  }
  throw new CatalogCommitError(
    binding.catalog.label,
    "unconfirmed",
    `the catalog accepted the expiry commit to ${nextPointer}, but a fresh load names ${fresh.parameters[METADATA_LOCATION_PARAMETER] ?? "no metadata"}, which is not it nor written on top of it; nothing deleted`,
  );
}
