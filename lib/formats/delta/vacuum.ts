/**
 * VACUUM candidates, as Delta's own VACUUM (FULL) decides them (PROTOCOL.md; delta.md §4, Spark
 * VacuumCommand + DeltaTableUtils.isHiddenDirectory), as a pure function over the latest
 * snapshot and a listing of the table root:
 *   - never anything under `_delta_log/` (nor lakewarden's `_lakewarden/`: hidden);
 *   - never a hidden path: a path component starting with `_` or `.`, except `_delta_index*`,
 *     `_change_data*` and `<partitionColumn>=…` (partition folders may start with `_`); and a
 *     component `metadata` while UniForm Iceberg is on (its Iceberg metadata, uniform.ts);
 *   - protected: every live add, every tombstone not yet expired (deletionTimestamp >= cutoff,
 *     a missing one counting as 0), and the deletion-vector files of both;
 *   - a candidate is any other listed file whose modification time is before the cutoff
 *     (now - delta.deletedFileRetentionDuration); one modified since is kept, and said (`young`):
 *     it may belong to a commit in progress.
 * A protected path that cannot be resolved to a key blocks the whole plan: nothing is deleted.
 */
import type { ObjectInfo } from "../../store/object-store.ts";
import type { AddAction, DeletionVectorDescriptor, RemoveAction } from "./actions.ts";
import { deletionVectorKey } from "./head-state.ts";
import { LOG_PREFIX } from "./log-names.ts";
import { ICEBERG_METADATA_COMPONENT } from "./uniform.ts";
import type { ResolvedDeltaPath } from "./paths.ts";

export interface VacuumInput {
  adds: readonly AddAction[];
  tombstones: readonly RemoveAction[];
  partitionColumns: readonly string[];
  /** UniForm Iceberg is on: `metadata` components are hidden too. */
  hideIcebergMetadata?: boolean;
  /** Every object under the table root (walked once). */
  files: Iterable<ObjectInfo>;
  now: Date;
  retentionMs: number;
  /** Turns a path an action names into a key under the root (the one path validator). */
  resolve: (path: string) => ResolvedDeltaPath;
}

export interface VacuumCandidate {
  key: string;
  size: number;
  lastModified: Date;
  reason: string;
}

export interface VacuumPlan {
  cutoff: Date;
  candidates: VacuumCandidate[];
  /** Files that would be candidates but were modified after the cutoff: kept, with why. */
  young: VacuumCandidate[];
  /** Keys the snapshot protects (live adds, unexpired tombstones, their DV files). */
  protectedKeys: Set<string>;
  /** Paths that could not be resolved: when non-empty, `candidates` is empty. */
  unresolved: { path: string; reason: string }[];
  blocked: string | null;
}

/** Delta's hidden-name rule for one path component (Spark DeltaTableUtils.isHiddenDirectory). */
export function isHiddenComponent(name: string, partitionColumns: readonly string[], hideIcebergMetadata = false): boolean {
  if (hideIcebergMetadata && name === ICEBERG_METADATA_COMPONENT) return true;
  if (!(name.startsWith("_") || name.startsWith("."))) return false;
  if (name.startsWith("_delta_index") || name.startsWith("_change_data")) return false;
  return !partitionColumns.some((column) => name.startsWith(`${column}=`));
}

/** True when VACUUM never looks at `key`: the log, or any hidden component. */
export function isHiddenFromVacuum(key: string, partitionColumns: readonly string[], hideIcebergMetadata = false): boolean {
  if (key.startsWith(LOG_PREFIX)) return true;
  return key.split("/").some((component) => isHiddenComponent(component, partitionColumns, hideIcebergMetadata));
}

export function planVacuum(input: VacuumInput): VacuumPlan {
  const cutoff = new Date(input.now.getTime() - input.retentionMs);
  const protectedKeys = new Set<string>();
  const unresolved: { path: string; reason: string }[] = [];

  const protect = (path: string) => {
    const resolved = input.resolve(path);
    if (resolved.kind === "key") protectedKeys.add(resolved.key);
    else if (resolved.kind === "unresolvable") unresolved.push({ path, reason: resolved.reason });
  };
  const protectDv = (owner: { deletionVector?: DeletionVectorDescriptor | null }) => {
    const dv = deletionVectorKey(owner, input.resolve);
    if (dv.key) protectedKeys.add(dv.key);
    if (dv.unresolved?.kind === "unresolvable") unresolved.push({ path: dv.unresolved.path, reason: dv.unresolved.reason });
  };

  for (const add of input.adds) {
    protect(add.path);
    protectDv(add);
  }
  for (const tombstone of input.tombstones) {
    if ((tombstone.deletionTimestamp ?? 0) < cutoff.getTime()) continue;
    protect(tombstone.path);
    protectDv(tombstone);
  }
  if (unresolved.length > 0) {
    return {
      cutoff,
      candidates: [],
      young: [],
      protectedKeys,
      unresolved,
      blocked: `${unresolved.length === 1 ? "1 path" : `${unresolved.length} paths`} the table references cannot be resolved (first: "${unresolved[0]!.path}": ${unresolved[0]!.reason})`,
    };
  }

  const candidates: VacuumCandidate[] = [];
  const young: VacuumCandidate[] = [];
  for (const file of input.files) {
    if (isHiddenFromVacuum(file.key, input.partitionColumns, input.hideIcebergMetadata)) continue;
    if (protectedKeys.has(file.key)) continue;
    if (file.lastModified.getTime() >= cutoff.getTime()) {
      young.push({
        key: file.key,
        size: file.size,
        lastModified: file.lastModified,
        reason: `unreferenced, last modified ${file.lastModified.toISOString()}, within the VACUUM retention ${formatDuration(input.retentionMs)}: may belong to a commit in progress`,
      });
      continue;
    }
    candidates.push({
      key: file.key,
      size: file.size,
      lastModified: file.lastModified,
      reason: `not referenced by the latest version nor by a tombstone within ${formatDuration(input.retentionMs)}, last modified ${file.lastModified.toISOString()}`,
    });
  }
  return { cutoff, candidates, young, protectedKeys, unresolved, blocked: null };
}

function formatDuration(ms: number): string {
  const hours = ms / 3_600_000;
  return hours % 24 === 0 ? `${hours / 24} days` : `${hours} hours`;
}
