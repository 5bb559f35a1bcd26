/**
 * The post-delete check: from what the run already holds (the listing it planned on and the
 * keys it deleted), does every file a kept version references still exist? No extra request.
 * Only versions read before the listing are checked: a version committed later may name files
 * written after the listing, which the listing cannot show (and which were never candidates).
 */
import type { ObjectInfo } from "../store/object-store.ts";
import type { Reference, ReferenceSet } from "./references.ts";
import { describeVersions } from "./references.ts";

export interface MissingReference {
  path: string;
  versions: string;
}

export interface ReferenceCheck {
  /** References of kept versions under the listed folders that were checked. */
  checked: number;
  /** Referenced but already absent from the listing: damage that predates this run. */
  missingBeforeRun: MissingReference[];
  /** Referenced and deleted by this run: must never happen. */
  deletedByRun: MissingReference[];
  ok: boolean;
}

export function checkKeptReferences(
  kept: ReferenceSet,
  listing: readonly ObjectInfo[],
  deleted: ReadonlySet<string>,
  managedPrefixes: readonly string[],
): ReferenceCheck {
  const listed = new Set<string>();
  const listedFolders = new Set<string>();
  const survivingFolders = new Set<string>();
  for (const { key } of listing) {
    listed.add(key);
    for (let slash = key.indexOf("/"); slash !== -1; slash = key.indexOf("/", slash + 1)) {
      const folder = key.slice(0, slash + 1);
      listedFolders.add(folder);
      if (!deleted.has(key)) survivingFolders.add(folder);
    }
  }
  const missingBeforeRun: MissingReference[] = [];
  const deletedByRun: MissingReference[] = [];
  let checked = 0;
  const describe = (reference: Reference): MissingReference => ({ path: reference.path, versions: describeVersions(reference) });
  for (const reference of kept.all()) {
    if (!managedPrefixes.some((prefix) => reference.path.startsWith(prefix))) continue;
    checked++;
    const isFolder = reference.path.endsWith("/");
    const existed = isFolder ? listedFolders.has(reference.path) : listed.has(reference.path);
    const survives = isFolder ? survivingFolders.has(reference.path) : !deleted.has(reference.path);
    if (!existed) missingBeforeRun.push(describe(reference));
    else if (!survives) deletedByRun.push(describe(reference));
  }
  return { checked, missingBeforeRun, deletedByRun, ok: deletedByRun.length === 0 };
}
