/**
 * Iceberg snapshots as the model's versions.
 *
 * A version is a snapshot. Its id (`version_id`) is the snapshot id as exact text. Its
 * ordering sequence (`version`) is the snapshot's `sequence-number`, which format v2+ writers
 * assign table-wide, strictly increasing, and never reuse, so it stays the same number for the
 * snapshot's whole life (checkpoints store it). Tables whose snapshots carry no sequence
 * numbers (format v1; BigQuery writes 0) are ordered by `timestamp-ms` instead, for every
 * snapshot of the table. A table that mixes the two (a v1 table upgraded to v2 still holding
 * its v1 snapshots) or whose ordering values collide has no stable order here: refused.
 */
import type { VersionRecord } from "../../model/version-record.ts";
import { UnsupportedFeatureError } from "../errors.ts";
import type { IcebergSnapshot, IcebergTableMetadata } from "./table-metadata.ts";

export type SnapshotOrdering = "sequence-number" | "timestamp-ms";

export interface OrderedSnapshots {
  ordering: SnapshotOrdering;
  /** Snapshot id → version. */
  versionOf: Map<string, number>;
  /** Snapshots ascending by version. */
  snapshots: IcebergSnapshot[];
}

export function orderSnapshots(metadata: IcebergTableMetadata, uri: string): OrderedSnapshots {
  const withSequence = metadata.snapshots.filter((s) => s.sequenceNumber > 0).length;
  if (withSequence !== 0 && withSequence !== metadata.snapshots.length) {
    throw new UnsupportedFeatureError(
      uri,
      `${metadata.snapshots.length - withSequence} of ${metadata.snapshots.length} snapshots have no sequence number (an upgraded v1 table): no stable version order`,
    );
  }
  const ordering: SnapshotOrdering = withSequence > 0 ? "sequence-number" : "timestamp-ms";
  const versionOf = new Map<string, number>();
  const taken = new Map<number, string>();
  for (const snapshot of metadata.snapshots) {
    const version = ordering === "sequence-number" ? snapshot.sequenceNumber : snapshot.timestampMs;
    if (!Number.isSafeInteger(version) || version < 0) throw new UnsupportedFeatureError(uri, `snapshot ${snapshot.id} has ${ordering} ${version}, not a usable version`);
    const other = taken.get(version);
    if (other !== undefined) throw new UnsupportedFeatureError(uri, `snapshots ${other} and ${snapshot.id} share ${ordering} ${version}: no stable version order`);
    taken.set(version, snapshot.id);
    versionOf.set(snapshot.id, version);
  }
  const snapshots = [...metadata.snapshots].sort((a, b) => versionOf.get(a.id)! - versionOf.get(b.id)!);
  return { ordering, versionOf, snapshots };
}

/** Ids of `headId` and its ancestors present in the metadata, newest first. */
export function ancestry(metadata: IcebergTableMetadata, headId: string): string[] {
  const byId = new Map(metadata.snapshots.map((s) => [s.id, s]));
  const out: string[] = [];
  const seen = new Set<string>();
  let current = byId.get(headId);
  while (current && !seen.has(current.id)) {
    out.push(current.id);
    seen.add(current.id);
    current = current.parentId === null ? undefined : byId.get(current.parentId);
  }
  return out;
}

/** The branch each snapshot belongs to: null (main) when main's ancestry holds it, else the first other branch (by name) whose does. */
export function branchOfSnapshots(metadata: IcebergTableMetadata): Map<string, string | null> {
  const out = new Map<string, string | null>();
  const main = metadata.refs.find((r) => r.name === "main");
  if (main) for (const id of ancestry(metadata, main.snapshotId)) out.set(id, null);
  const branches = metadata.refs.filter((r) => r.type === "branch" && r.name !== "main").sort((a, b) => (a.name < b.name ? -1 : 1));
  for (const branch of branches) {
    for (const id of ancestry(metadata, branch.snapshotId)) if (!out.has(id)) out.set(id, branch.name);
  }
  return out;
}

function summaryNumber(summary: Record<string, string>, key: string): number | null {
  const text = summary[key];
  if (text === undefined || !/^-?\d+$/.test(text.trim())) return null;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : null;
}

/** One VersionRecord per snapshot; `is_tagged` and `is_cleaned_up` false (refs and history decide those). */
export function snapshotRecord(snapshot: IcebergSnapshot, ordered: OrderedSnapshots, branch: string | null): VersionRecord {
  const s = snapshot.summary;
  const metrics: Record<string, number> = {};
  for (const key of Object.keys(s)) {
    const n = summaryNumber(s, key);
    if (n !== null) metrics[key] = n;
  }
  const dataFiles = summaryNumber(s, "total-data-files");
  const positionDeletes = summaryNumber(s, "total-position-deletes");
  const equalityDeletes = summaryNumber(s, "total-equality-deletes");
  const records = summaryNumber(s, "total-records");
  const deletedRows = positionDeletes !== null && equalityDeletes !== null ? positionDeletes + equalityDeletes : null;
  return {
    version: ordered.versionOf.get(snapshot.id)!,
    timestamp_millis: snapshot.timestampMs,
    // An Iceberg table's live unit is a data file.
    total_fragments: dataFiles,
    total_data_files: dataFiles,
    total_files_size: summaryNumber(s, "total-files-size"),
    total_deletion_files: summaryNumber(s, "total-delete-files"),
    total_data_file_rows: records,
    total_deletion_file_rows: deletedRows,
    // Rows left after deletes are known only when there are none (equality deletes can match any number of rows).
    total_rows: records !== null && deletedRows === 0 ? records : null,
    is_tagged: false,
    is_cleaned_up: false,
    transaction_uuid: null,
    read_version: snapshot.parentId === null ? null : (ordered.versionOf.get(snapshot.parentId) ?? null),
    operation_type: s.operation ?? null,
    transaction_properties: { ...s },
    version_id: snapshot.id,
    parent_ids: snapshot.parentId === null ? [] : [snapshot.parentId],
    branch,
    metrics,
  };
}

/** Every snapshot of the metadata as a VersionRecord, ascending by version. */
export function snapshotRecords(metadata: IcebergTableMetadata, uri: string): VersionRecord[] {
  const ordered = orderSnapshots(metadata, uri);
  const branches = branchOfSnapshots(metadata);
  return ordered.snapshots.map((s) => snapshotRecord(s, ordered, branches.get(s.id) ?? null));
}
