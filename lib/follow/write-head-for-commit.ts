/**
 * The on-commit step for one table, shared by the on-commit Lambda and `lakewarden serve`:
 * write the head for the newest version a burst of commit notices named. The head writer's
 * rules make a late or duplicated notice harmless (it never moves the head back); this adds
 * the one case those rules do not cover: the named version file is already gone (cleanup
 * removed it before a late notice arrived), in which case the latest version gets the head.
 * A table only its catalog can read (CatalogPointerRequiredError: Iceberg metadata files all
 * catalog-named, no catalog given) gets no head: the Lambda acknowledges it with one line, serve
 * sets it aside, since asking again is refused the same way.
 */
import { NotFoundError } from "../store/errors.ts";
import type { ObjectStore } from "../store/object-store.ts";
import { writeTableHead, type WriteTableHeadOptions, type WriteTableHeadResult } from "../head/write-table-head.ts";

export interface HeadForCommitResult extends WriteTableHeadResult {
  /** True when the notified version was gone and the head was written for the latest instead. */
  notifiedVersionGone: boolean;
}

export async function writeHeadForCommit(store: ObjectStore, notifiedVersion: number | null, options: Omit<WriteTableHeadOptions, "version"> = {}): Promise<HeadForCommitResult> {
  if (notifiedVersion === null) return { ...(await writeTableHead(store, options)), notifiedVersionGone: false };
  try {
    return { ...(await writeTableHead(store, { ...options, version: notifiedVersion })), notifiedVersionGone: false };
  } catch (error) {
    if (!(error instanceof NotFoundError)) throw error;
    return { ...(await writeTableHead(store, options)), notifiedVersionGone: true };
  }
}

/** True when the write changed the stored head (as opposed to finding it current already). */
export function headWasWritten(result: WriteTableHeadResult): boolean {
  return result.action === "created" || result.action === "replaced";
}
