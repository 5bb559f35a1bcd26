/**
 * The safety gate as a step of its own: before a run plans anything (dry run included) and again
 * on every re-plan's new latest version, the format says whether this table may be maintained at
 * all (TableFormat.admit); a refusal stops the run with nothing written or deleted.
 */
import type { TableFormat, VersionFile } from "../formats/table-format.ts";
import type { ObjectStore } from "../store/object-store.ts";

export async function admitOrRefuse(store: ObjectStore, format: TableFormat, base: VersionFile): Promise<void> {
  const admission = await format.admit(store, base);
  if (!admission.admitted) throw admission.refusal;
}
