/**
 * Puts lakewarden's own files (`_lakewarden/`: checkpoint, head) into a synthetic table for
 * one history scenario, and takes them out again. The table's Lance files are untouched.
 */
import { isDeepStrictEqual } from "node:util";
import type { ObjectStore } from "../../lib/store/object-store.ts";
import { lanceFormat } from "../../lib/formats/lance/lance-format.ts";
import type { VersionRecord } from "../../lib/model/version-record.ts";
import { numberedVersionIdentity } from "../../lib/model/version-record.ts";
import { encodeCheckpoint } from "../../lib/checkpoint/codec.ts";
import { checkpointKey } from "../../lib/model/layout.ts";
import { writeTableHead, type WriteTableHeadResult } from "../../lib/head/write-table-head.ts";
import { commitTime, transactionUuid } from "./manifest-generator.ts";

export const LAKEWARDEN_PREFIX = "_lakewarden/";

/** Deletes everything under `_lakewarden/`. */
export async function clearLakewardenState(store: ObjectStore): Promise<void> {
  const keys: string[] = [];
  for await (const object of store.list(LAKEWARDEN_PREFIX)) keys.push(object.key);
  if (keys.length === 0) return;
  const result = await store.deleteMany(keys);
  if (result.failed.length) throw new Error(`cannot clear ${store.uriOf(LAKEWARDEN_PREFIX)}: ${result.failed[0]!.message}`);
}

/**
 * The records of versions 1..`versions` of a synthetic table. Manifests of one table differ
 * only in version, timestamp and transaction, so one manifest read by lakewarden's own reader
 * gives the rest; the newest is read too and must match what is derived, which checks the
 * derivation on every cell.
 */
export async function syntheticRecords(store: ObjectStore, fragments: number, versions: number): Promise<VersionRecord[]> {
  const readRecord = async (version: number) => (await lanceFormat.readSnapshot(store, await lanceFormat.findVersionFile(store, version))).record;
  const model = await readRecord(1);
  const derive = (version: number): VersionRecord => ({
    ...model,
    version,
    timestamp_millis: commitTime(version),
    transaction_uuid: transactionUuid(fragments, version),
    read_version: version - 1,
    ...numberedVersionIdentity(version, version > 1 ? version - 1 : null),
  });
  const records = Array.from({ length: versions }, (_, i) => derive(i + 1));
  const newest = await readRecord(versions);
  if (!isDeepStrictEqual(newest, records.at(-1))) {
    throw new Error(`${store.uri}: version ${versions} as read (${JSON.stringify(newest)}) differs from the derived record (${JSON.stringify(records.at(-1))})`);
  }
  return records;
}

/** Writes the checkpoint covering `records` (ascending, version 1 first), as cleanup's archive step would. */
export async function writeCheckpoint(store: ObjectStore, records: VersionRecord[]): Promise<string> {
  const newest = records.at(-1);
  if (!newest) throw new Error("a checkpoint needs at least one version");
  const key = checkpointKey(newest.version);
  const bytes = encodeCheckpoint({
    version: newest.version,
    records,
    archiveSegments: [],
    createdAtMillis: Date.now(),
    datasetCreatedAtMillis: records[0]!.timestamp_millis,
    datasetCreatedFromVersion: records[0]!.version,
    tableFormat: lanceFormat.name,
  });
  await store.put(key, bytes, { ifNoneMatch: "*" });
  return key;
}

/**
 * Writes the head for `version` as the commit hook would (lib/head writeTableHead): it reads
 * the checkpoint boundary from the checkpoint names and the manifests since then.
 */
export async function writeHead(store: ObjectStore, version: number): Promise<WriteTableHeadResult> {
  const result = await writeTableHead(store, { version });
  if (result.action !== "created" && result.action !== "replaced") {
    throw new Error(`${store.uri}: head for version ${version} was not written (${result.action})`);
  }
  return result;
}
