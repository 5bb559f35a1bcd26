/**
 * The format's own writes a cleanup makes before its deletes, called from here only (so the
 * pipeline asks the format in one place): finishing a commit an earlier run was stopped in
 * (Iceberg's version hint), and the metadata commit that removes versions for a format that
 * removes them that way (Iceberg's snapshot expiry). Each is a step of its own in the run, with
 * the run's stop guard before it.
 */
import type { TableFormat, VersionFile } from "../formats/table-format.ts";
import type { ObjectStore } from "../store/object-store.ts";
import type { ProcessedManifests } from "./process-manifests.ts";
import { removalSteps } from "./removal-steps.ts";

/** True when the format removes versions by a metadata commit (not by deleting their commit files). */
export function removesByCommit(format: TableFormat): boolean {
  return removalSteps(format.removal).metadataCommit !== null;
}

/** True when the format removes by a metadata commit and the plan has versions or other changes for it. */
export function removalCommitDue(format: TableFormat, processed: ProcessedManifests): boolean {
  return removesByCommit(format) && (processed.plan.removed.length > 0 || processed.plan.formatNotes.length > 0);
}

/** Whether the format has an interrupted commit to finish before deleting (a write of its own): asked before the step's guard. */
export function finishesInterruptedCommits(format: TableFormat): boolean {
  return removalSteps(format.removal).metadataCommit !== null;
}

/** Finishes a commit an earlier run wrote but was stopped before it finished, so no reader follows a pointer to a version whose files go next. */
export async function finishInterruptedCommit(store: ObjectStore, format: TableFormat): Promise<void> {
  await removalSteps(format.removal).metadataCommit?.finishInterrupted(store);
}

/**
 * The metadata commit the plan calls for (removalCommitDue), before any delete; also when it
 * only makes the other changes the format's rules name (expired refs). Its key, or null when
 * none is due.
 */
export async function writeRemovalCommit(store: ObjectStore, format: TableFormat, processed: ProcessedManifests, now: Date): Promise<string | null> {
  const { metadataCommit } = removalSteps(format.removal);
  if (!metadataCommit || !removalCommitDue(format, processed)) return null;
  // The version file the plan read, not the latest now: a commit that landed since makes the
  // removal commit fail instead of applying the plan to a table it did not read.
  const base = processed.scan.get(processed.latestAtStart)?.file ?? (await format.latestVersionFile(store));
  if (!base) return null;
  return (await metadataCommit.commit(store, { remove: processed.plan.removed, base: base as VersionFile, now })).key;
}
