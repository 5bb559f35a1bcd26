/**
 * lakewarden works on a table from its root. A branch's folder (Lance: `{root}/tree/{branch}/`)
 * looks like a table but belongs to the format: cleaning it would be blind to the tags and child
 * branches recorded at the root, and writing a head there would write inside the format's folders.
 */
import type { ObjectStore } from "../store/object-store.ts";
import { BranchLocationError } from "./errors.ts";
import type { TableFormat } from "./table-format.ts";

export async function assertTableRoot(store: ObjectStore, format: TableFormat, whatFor: string): Promise<void> {
  const branch = await format.branchAt(store);
  if (branch !== null) {
    throw new BranchLocationError(store.uri, `this is branch "${branch}" of a table, not a table's root; ${whatFor}`);
  }
}
