/**
 * Right before deleting, the pipeline reads tags, branches and the latest version again, and
 * plans again while they moved (a bounded number of times): a ref created or a commit landed
 * while the run planned keeps what it needs. The re-scan reads only version files not read yet.
 */
import type { Refs, TableFormat, VersionFile } from "../formats/table-format.ts";
import { admitOrRefuse } from "./admission.ts";
import { refsFingerprint } from "../model/refs.ts";
import type { ObjectStore } from "../store/object-store.ts";
import { TableChangedError } from "./errors.ts";
import type { DeletePlan, PlanDeletesOptions } from "./plan-deletes.ts";
import { planListing } from "./plan-deletes.ts";
import type { ProcessedManifests } from "./process-manifests.ts";
import { processManifests } from "./process-manifests.ts";

export const DEFAULT_MAX_REPLANS = 5;

export interface ReplanOptions extends PlanDeletesOptions {
  maxReplans?: number;
  manifestConcurrency?: number;
}

export interface SettledPlan {
  plan: DeletePlan;
  /** Why each re-plan happened, in order. */
  replans: string[];
}

export async function replanUntilSettled(store: ObjectStore, format: TableFormat, initial: DeletePlan, options: ReplanOptions): Promise<SettledPlan> {
  let plan = initial;
  const replans: string[] = [];
  const maxReplans = options.maxReplans ?? DEFAULT_MAX_REPLANS;
  for (let round = 0; round < maxReplans; round++) {
    const change = await whatChanged(store, format, plan.processed);
    if (change === null) break;
    replans.push(change.reason);
    await admitOrRefuse(store, format, change.latest);
    const processed = await processManifests(store, format, {
      policy: plan.processed.policy,
      refs: change.refs,
      pins: plan.processed.pins,
      removedEarlier: plan.processed.removedEarlier,
      latestAtStart: plan.processed.latestAtStart,
      now: options.now,
      previous: plan.processed.scan,
      ...(options.manifestConcurrency !== undefined ? { concurrency: options.manifestConcurrency } : {}),
    });
    plan = await planListing(store, plan, format, processed, options);
  }
  return { plan, replans };
}

interface Change {
  reason: string;
  refs: Refs;
  latest: VersionFile;
}

/** Reads tags, branches and the latest version again; null when nothing moved. */
async function whatChanged(store: ObjectStore, format: TableFormat, processed: ProcessedManifests): Promise<Change | null> {
  const [refs, latest] = await Promise.all([format.readRefs(store), format.latestVersionFile(store)]);
  let newestRead = -1;
  for (const version of processed.scan.keys()) newestRead = Math.max(newestRead, version);
  if (latest === null || latest.version < processed.latestAtStart) {
    throw new TableChangedError(store.uri, `the latest version went from ${processed.latestAtStart} to ${latest?.version ?? "none"} while cleanup planned; nothing was deleted`);
  }
  const reasons: string[] = [];
  if (refsFingerprint(refs) !== refsFingerprint(processed.refs)) reasons.push("tags or branches changed");
  if (latest.version > newestRead) reasons.push(`version ${latest.version} was committed`);
  return reasons.length === 0 ? null : { reason: `${reasons.join(" and ")} while planning: planned again`, refs, latest };
}
