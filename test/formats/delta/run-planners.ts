/**
 * The Delta planners driven alone on a fixture copy, deleting in their order (log first: commits,
 * then .crc and compaction files, checkpoints, sidecars; then VACUUM's candidates), so the
 * table-driven tests can show each rule by itself (`vacuum: false`, `logs: false`). Not what
 * `cleanup` runs: that is planRemoval through the pipeline (pipeline-cleanup.test.ts).
 */
import { TableFormatError } from "../../../lib/formats/errors.ts";
import { planDeltaLogCleanup, planDeltaVacuum } from "../../../lib/formats/delta/cleanup.ts";
import type { DeltaCleanupOptions } from "../../../lib/formats/delta/cleanup.ts";
import type { LogCleanupPlan } from "../../../lib/formats/delta/log-cleanup.ts";
import { assertCleanable } from "../../../lib/formats/delta/protocol.ts";
import { loadSnapshot } from "../../../lib/formats/delta/snapshot.ts";
import type { DeltaSnapshot } from "../../../lib/formats/delta/snapshot.ts";
import { cleanupProperties } from "../../../lib/formats/delta/table-properties.ts";
import type { CleanupProperties } from "../../../lib/formats/delta/table-properties.ts";
import type { VacuumPlan } from "../../../lib/formats/delta/vacuum.ts";
import type { ObjectInfo, ObjectStore } from "../../../lib/store/object-store.ts";

export interface RunPlannersOptions extends DeltaCleanupOptions {
  dryRun?: boolean;
  /** Default true. */
  vacuum?: boolean;
  /** Default true. */
  logs?: boolean;
}

export interface RunPlannersResult {
  snapshot: DeltaSnapshot;
  properties: CleanupProperties;
  vacuum: VacuumPlan | null;
  log: LogCleanupPlan | null;
  deleted: string[];
  failed: { key: string; message: string }[];
}

export async function runDeltaCleanup(store: ObjectStore, options: RunPlannersOptions): Promise<RunPlannersResult> {
  const snapshot = await loadSnapshot(store);
  assertCleanable(snapshot.protocol, store.uri);
  const properties = cleanupProperties(snapshot.protocol, snapshot.metadata, store.uri);
  const files: ObjectInfo[] = [];
  for await (const info of store.list("")) files.push(info);
  const vacuum = options.vacuum === false ? null : planDeltaVacuum(store, snapshot, properties, files, options);
  if (vacuum?.blocked) throw new TableFormatError(store.uri, `VACUUM stopped before any delete: ${vacuum.blocked}`);
  const log = options.logs === false ? null : await planDeltaLogCleanup(store, snapshot, properties, options);
  const result: RunPlannersResult = { snapshot, properties, vacuum, log, deleted: [], failed: [] };
  if (options.dryRun) return result;

  const groups: string[][] = [];
  if (log) {
    for (const kinds of [["commit"], ["crc", "compaction"], ["checkpoint"], ["sidecar"]]) {
      const keys = log.deletions.filter((d) => kinds.includes(d.kind)).map((d) => d.key);
      if (keys.length > 0) groups.push(keys);
    }
  }
  if (vacuum && vacuum.candidates.length > 0) groups.push(vacuum.candidates.map((c) => c.key));
  for (const keys of groups) {
    const outcome = await store.deleteMany(keys);
    result.deleted.push(...outcome.deleted);
    result.failed.push(...outcome.failed);
    if (outcome.failed.length > 0) break;
  }
  return result;
}
