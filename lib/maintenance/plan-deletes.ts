/**
 * Stage `delete_unreferenced`, its planning half: list the format's candidate folders in full and
 * decide each listed file with its reason (file-plan.ts). Pure apart from the listing, so a dry
 * run and a real run plan the same way.
 */
import type { TableFormat } from "../formats/table-format.ts";
import type { ObjectInfo, ObjectStore } from "../store/object-store.ts";
import type { FilePlan } from "./file-plan.ts";
import { planFiles } from "./file-plan.ts";
import { listManagedFiles } from "./listing.ts";
import type { ProcessedManifests } from "./process-manifests.ts";
import type { CleanupProgress } from "./progress.ts";

export interface DeletePlan {
  /** The version decisions the file plan follows. */
  processed: ProcessedManifests;
  /** The candidate listing the plan was made on. */
  listing: readonly ObjectInfo[];
  files: FilePlan;
}

export interface PlanDeletesOptions {
  now: Date;
  /** Keys an interrupted run's intent proves were committed, with the reason to give. */
  proven?: ReadonlyMap<string, string>;
  progress?: CleanupProgress;
}

export async function planDeletes(store: ObjectStore, format: TableFormat, processed: ProcessedManifests, options: PlanDeletesOptions): Promise<DeletePlan> {
  const listing = await listManagedFiles(store, format, options.progress);
  return replanFiles({ listing }, format, processed, options);
}

/** The same listing, planned again for new version decisions (after a re-plan). */
export function replanFiles(plan: Pick<DeletePlan, "listing">, format: TableFormat, processed: ProcessedManifests, options: PlanDeletesOptions): DeletePlan {
  const files = planFiles({
    listing: plan.listing,
    format,
    decisions: processed.decisions,
    kept: processed.kept,
    removed: processed.removed,
    safetyWindowMs: processed.policy.safetyWindowMs,
    deleteUnverified: processed.policy.deleteUnverified,
    nowMillis: options.now.getTime(),
    ...(options.proven ? { proven: options.proven } : {}),
  });
  return { processed, listing: plan.listing, files };
}
