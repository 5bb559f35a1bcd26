/**
 * Tags and branches, format-neutral. A ref points at a version by its ordering sequence
 * (`version`) and, where the format's ids are not the sequence, by id too. Retention settings
 * are the ones the format attaches to a ref (Iceberg: max-ref-age-ms, max-snapshot-age-ms,
 * min-snapshots-to-keep); null where the format has none.
 */
export interface RefRetention {
  maxRefAgeMs: number | null;
  maxSnapshotAgeMs: number | null;
  minSnapshotsToKeep: number | null;
}

export interface Tag {
  name: string;
  version: number;
  /** The format's id of the tagged version when it is not `String(version)`. */
  versionId?: string;
  /** Branch the tagged version belongs to; null = main. */
  branch: string | null;
  retention?: RefRetention;
}

export interface Branch {
  name: string;
  parentBranch: string | null;
  /** The version the branch was created from (Lance) or its head (Iceberg). */
  parentVersion: number;
  parentVersionId?: string;
  retention?: RefRetention;
}

export interface Refs {
  tags: Tag[];
  branches: Branch[];
}

export const NO_REFS: Refs = Object.freeze({ tags: [], branches: [] }) as Refs;

/** Versions carrying a tag of the main branch: tags of other branches pin other lineages. */
export function mainBranchTaggedVersions(refs: Refs): Set<number> {
  return new Set(refs.tags.filter((tag) => tag.branch === null).map((tag) => tag.version));
}

/** A stable text of the refs, to tell whether they moved between two reads. */
export function refsFingerprint(refs: Refs): string {
  const tags = refs.tags.map((t) => `${t.name}\u0000${t.version}\u0000${t.branch ?? ""}`).sort();
  const branches = refs.branches.map((b) => `${b.name}\u0000${b.parentVersion}\u0000${b.parentBranch ?? ""}`).sort();
  return JSON.stringify([tags, branches]);
}
