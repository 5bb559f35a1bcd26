/**
 * Stage `delete_unreferenced`, its planning half: list the format's candidate folders in full and
 * decide each listed file with its reason (file-plan.ts). Pure apart from the listing, so a dry
 * run and a real run plan the same way.
 */
import type { TableFormat } from "../formats/table-format.ts";
import type { ObjectInfo, ObjectStore } from "../store/object-store.ts";
import type { FilePlan } from "./file-plan.ts";
import { planRemovalByFormat } from "./format-removal.ts";
import { removalSteps } from "./removal-steps.ts";
import { emptyFilePlan, planFiles } from "./file-plan.ts";
import type { ListedObjects, ListingCursor } from "./listing.ts";
import type { CompactListing } from "./listing.ts";
import { listManagedFilesFrom } from "./listing.ts";
import type { ProcessedManifests } from "./process-manifests.ts";
import type { CleanupProgress } from "./progress.ts";
import type { SpillArea } from "./spill.ts";

export interface DeletePlan {
  /** The version decisions the file plan follows. */
  processed: ProcessedManifests;
  /** The candidate listing the plan was made on. */
  listing: ListedObjects;
  files: FilePlan;
  /** Where the listing got to; not `done` when the budget stopped it (then `files` must not be acted on). */
  cursor?: ListingCursor;
  /** What this run listed itself (the rest of `listing` came from saved progress). */
  listedNow?: ListedObjects;
}

export interface PlanDeletesOptions {
  now: Date;
  /** Keys an interrupted run's intent proves were committed, with the reason to give. */
  proven?: ReadonlyMap<string, string>;
  progress?: CleanupProgress;
  /** A budget-stopped run's listing: what it listed (minus what was deleted since) and where it stopped. */
  resume?: { listed: CompactListing; cursor: ListingCursor };
  /** Stops the listing between objects (the run's budget). */
  shouldStop?: () => boolean;
  /** Where the listing's and the plan's full pages go (null: kept encoded in memory). */
  spill?: SpillArea | null;
}

export async function planDeletes(store: ObjectStore, format: TableFormat, processed: ProcessedManifests, options: PlanDeletesOptions): Promise<DeletePlan> {
  const part = await listManagedFilesFrom(store, format, {
    ...(options.progress ? { progress: options.progress } : {}),
    ...(options.resume ? { from: options.resume.cursor } : {}),
    ...(options.shouldStop ? { shouldStop: options.shouldStop } : {}),
    spill: options.spill ?? null,
  });
  // A resumed listing goes on from the saved one: what this run lists is added to it, not both copied.
  const listing = options.resume ? appendListing(options.resume.listed, part.objects) : part.objects;
  // A partial listing is no plan: nothing is decided on it.
  if (!part.cursor.done) return { processed, listing, files: emptyFilePlan(options.spill ?? null), cursor: part.cursor, listedNow: part.objects };
  const planned = await planListing(store, { listing }, format, processed, options);
  return { ...planned, cursor: part.cursor, listedNow: part.objects };
}

/** Plans a listing: by the format's own plan when its removal strategy has one, else by the generic rules. */
export async function planListing(
  store: ObjectStore,
  plan: Pick<DeletePlan, "listing">,
  format: TableFormat,
  processed: ProcessedManifests,
  options: PlanDeletesOptions,
): Promise<DeletePlan> {
  // The format's check that what its refs keep exists: a plan of files that disagree with the metadata is no plan.
  const steps = removalSteps(format.removal);
  const newest = [...processed.scan.values()].at(-1)?.file;
  if (newest) await steps.checkListing(store, newest, plan.listing);
  if (steps.planRemoval) return planRemovalByFormat(store, format, steps.planRemoval, processed, plan.listing, options);
  return replanFiles(plan, format, processed, options);
}

/** The same listing, planned again for new version decisions (after a re-plan). */
export function replanFiles(plan: Pick<DeletePlan, "listing">, format: TableFormat, processed: ProcessedManifests, options: PlanDeletesOptions): DeletePlan {
  const base = processed.scan.get(processed.latestAtStart)?.file;
  const files = planFiles({
    listing: plan.listing,
    format,
    ...(base ? { base } : {}),
    decisions: processed.decisions,
    kept: processed.kept,
    removed: processed.removed,
    safetyWindowMs: processed.policy.safetyWindowMs,
    deleteUnverified: processed.policy.deleteUnverified,
    nowMillis: options.now.getTime(),
    ...(options.proven ? { proven: options.proven } : {}),
    spill: options.spill ?? null,
  });
  return { processed, listing: plan.listing, files };
}

function appendListing(listing: CompactListing, more: Iterable<ObjectInfo>): CompactListing {
  for (const object of more) listing.push(object);
  return listing;
}
