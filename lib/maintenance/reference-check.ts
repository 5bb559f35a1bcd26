/**
 * The post-delete check: from what the run already holds (the listing it planned on and the
 * deleted keys kept references cover), does every file a kept version references still exist?
 * No extra request.
 * Only versions read before the listing are checked: a version committed later may name files
 * written after the listing, which the listing cannot show (and which were never candidates).
 */
import type { ObjectInfo } from "../store/object-store.ts";
import type { ReferenceSet } from "./references.ts";
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

/**
 * `deleted`: the keys the run (and the earlier runs of its chain) deleted that a kept reference
 * covers; deleting no others can break a kept version, so the caller keeps only these.
 */
export function checkKeptReferences(kept: ReferenceSet, listing: Iterable<ObjectInfo>, deleted: ReadonlySet<string>, managedPrefixes: readonly string[]): ReferenceCheck {
  // Only the kept references are asked about, a few next to a listing that can hold millions of
  // keys: the listing is walked once against them, not indexed.
  const checkedFiles = new Set<string>();
  const folders = new Map<string, { existed: boolean; survives: boolean }>();
  const isChecked = (path: string): boolean => managedPrefixes.some((prefix) => path.startsWith(prefix));
  // Paths, not References: a Reference is made only for a path found missing (a few, if any).
  for (const path of kept.paths()) {
    if (!isChecked(path)) continue;
    if (path.endsWith("/")) folders.set(path, { existed: false, survives: false });
    else checkedFiles.add(path);
  }
  const listedFiles = new Set<string>();
  // Keys deleted earlier in the chain are no longer listed: they existed all the same.
  const keys = function* (): Iterable<string> {
    for (const { key } of listing) yield key;
    for (const key of deleted) yield key;
  };
  for (const key of keys()) {
    if (checkedFiles.has(key)) listedFiles.add(key);
    if (folders.size === 0) continue;
    for (let slash = key.indexOf("/"); slash !== -1; slash = key.indexOf("/", slash + 1)) {
      const folder = folders.get(key.slice(0, slash + 1));
      if (!folder) continue;
      folder.existed = true;
      if (!deleted.has(key)) folder.survives = true;
    }
  }
  const missing = new Map<string, "before" | "deleted">();
  let checked = 0;
  for (const path of kept.paths()) {
    if (!isChecked(path)) continue;
    checked++;
    const folder = folders.get(path);
    const existed = folder ? folder.existed : listedFiles.has(path);
    const survives = folder ? folder.survives : !deleted.has(path);
    if (!existed) missing.set(path, "before");
    else if (!survives) missing.set(path, "deleted");
  }
  const missingBeforeRun: MissingReference[] = [];
  const deletedByRun: MissingReference[] = [];
  if (missing.size > 0) {
    for (const reference of kept.all()) {
      const which = missing.get(reference.path);
      if (which === undefined) continue;
      (which === "before" ? missingBeforeRun : deletedByRun).push({ path: reference.path, versions: describeVersions(reference) });
    }
  }
  return { checked, missingBeforeRun, deletedByRun, ok: deletedByRun.length === 0 };
}
