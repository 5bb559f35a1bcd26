/**
 * Orphan-file removal with iceberg-java's semantics (DeleteOrphanFilesSparkAction, iceberg.md §4),
 * as a pure plan over a listing and the reachable set:
 *   - a file is an orphan when nothing reachable from the current metadata names it;
 *   - only files last modified before `olderThan` (default now - 3 days) are removed, so a
 *     commit in progress keeps its files;
 *   - paths with a segment starting with "_" or "." below the table root are hidden and never
 *     candidates (Hadoop `.crc` files, `_SUCCESS`, lakewarden's own `_lakewarden/`), except
 *     partition folders (`_col=value`);
 *   - a reference that cannot be resolved (prefix mismatch included) is an error: nothing is removed;
 *   - `gc.enabled=false` removes nothing;
 *   - metadata files at or above the current one's sequence are never candidates (a commit
 *     that landed after the metadata was read).
 */
import type { ObjectInfo } from "../../store/object-store.ts";
import { UnresolvableReferenceError } from "../errors.ts";
import type { UnresolvedReference } from "../table-format.ts";
import { parseMetadataKey } from "./metadata-names.ts";

export interface OrphanPlanInput {
  /** Every object under the table root (or the scanned part of it). */
  listing: readonly ObjectInfo[];
  reachable: ReadonlySet<string> | ReadonlyMap<string, unknown>;
  unresolved: readonly UnresolvedReference[];
  /** Sequence of the current metadata file. */
  currentMetadataSequence: number;
  olderThan: Date;
  gcEnabled: boolean;
  /** Names the table in errors. */
  tableUri: string;
}

export interface OrphanPlan {
  orphans: ObjectInfo[];
  /** Unreferenced, but modified at or after `olderThan`: kept. */
  tooYoung: ObjectInfo[];
  hidden: ObjectInfo[];
  /** Set when nothing may be removed at all (gc.enabled=false). */
  refusal: string | null;
}

export function isHiddenKey(key: string): boolean {
  return key.split("/").some((segment) => (segment.startsWith("_") || segment.startsWith(".")) && !segment.includes("="));
}

export function planOrphanFiles(input: OrphanPlanInput): OrphanPlan {
  const blocking = input.unresolved.find((u) => u.kind === "unresolvable");
  if (blocking) {
    throw new UnresolvableReferenceError(input.tableUri, `orphan removal refused: ${blocking.path} cannot be resolved (${blocking.reason}); nothing deleted`);
  }
  const plan: OrphanPlan = { orphans: [], tooYoung: [], hidden: [], refusal: null };
  if (!input.gcEnabled) {
    plan.refusal = "gc.enabled is false: the table forbids maintenance from deleting its files";
    return plan;
  }
  for (const object of input.listing) {
    if (isHiddenKey(object.key)) {
      plan.hidden.push(object);
      continue;
    }
    if (input.reachable.has(object.key)) continue;
    const name = parseMetadataKey(object.key);
    if (name && name.sequence >= input.currentMetadataSequence) continue;
    if (object.lastModified.getTime() < input.olderThan.getTime()) plan.orphans.push(object);
    else plan.tooYoung.push(object);
  }
  return plan;
}
