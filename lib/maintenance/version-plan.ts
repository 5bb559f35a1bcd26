/**
 * Which versions a cleanup keeps and which it removes, with the reason for each: the
 * decision half of `process_manifests`, over plain data so it can be tested alone.
 *
 * Never removed, whatever the policy: the latest version, every version at or above the one
 * read as latest when the run started (anything committed meanwhile), versions carrying a tag
 * of the main branch, and versions a branch was created from. A tagged version the policy
 * would otherwise remove is kept and reported (Lance errors instead: error_if_tagged_old_versions).
 */
import type { Refs } from "../model/refs.ts";
import { describeAge, formatDuration } from "./duration.ts";
import type { RetentionPolicy } from "./policy.ts";

export interface VersionFacts {
  version: number;
  timestampMillis: number;
}

export interface VersionPlanInput {
  /** Every version that has a live version file. */
  versions: readonly VersionFacts[];
  /** The latest version read when the run started. */
  latestAtStart: number;
  refs: Refs;
  policy: RetentionPolicy;
  nowMillis: number;
  /** The format's rule: removed versions a kept one needs, with why (Delta: its checkpoint and the commits after it). */
  keptTogether?: (kept: readonly number[], removed: readonly number[]) => Map<number, string>;
}

export interface VersionDecision {
  version: number;
  timestampMillis: number;
  keep: boolean;
  reason: string;
}

export interface TaggedOldVersion {
  version: number;
  tags: string[];
}

export type ProtectionResult = "not-applicable" | "nothing-due" | "removed-all" | "kept-all";

export interface ProtectionOutcome {
  boundary: number;
  /** Live versions below the boundary when the run planned. */
  below: number[];
  result: ProtectionResult;
  reason: string;
}

export interface VersionPlan {
  /** Ascending by version. */
  decisions: VersionDecision[];
  kept: number[];
  removed: number[];
  /** Tagged versions the age/count policy alone would have removed. */
  taggedOld: TaggedOldVersion[];
  protection: ProtectionOutcome | null;
  cutoffMillis: number;
}

/** Tag names by version, for tags on the main branch only (other tags pin other lineages). */
export function mainTagsByVersion(refs: Refs): Map<number, string[]> {
  const byVersion = new Map<number, string[]>();
  for (const tag of refs.tags) {
    if (tag.branch !== null) continue;
    byVersion.set(tag.version, [...(byVersion.get(tag.version) ?? []), tag.name].sort());
  }
  return byVersion;
}

/** Branch names by the main-branch version they were created from. */
export function branchesByParentVersion(refs: Refs): Map<number, string[]> {
  const byVersion = new Map<number, string[]>();
  for (const branch of refs.branches) {
    if (branch.parentBranch !== null) continue;
    byVersion.set(branch.parentVersion, [...(byVersion.get(branch.parentVersion) ?? []), branch.name].sort());
  }
  return byVersion;
}

export function planVersions(input: VersionPlanInput): VersionPlan {
  const { policy, nowMillis, latestAtStart } = input;
  const versions = [...input.versions].sort((a, b) => a.version - b.version);
  const cutoffMillis = nowMillis - policy.olderThanMs;
  const latest = versions.at(-1)?.version ?? -1;
  // Counted among the versions that existed when the run started, so commits landing while
  // it runs cannot push older versions out of the window between a dry run and a real one.
  const newestRetained = new Set(
    versions.filter((v) => v.version <= latestAtStart).slice(-policy.retainVersions).map((v) => v.version),
  );
  const tags = mainTagsByVersion(input.refs);
  const branches = branchesByParentVersion(input.refs);
  const olderThan = formatDuration(policy.olderThanMs);
  const taggedOld: TaggedOldVersion[] = [];

  const decisions: VersionDecision[] = versions.map(({ version, timestampMillis }) => {
    const age = describeAge(nowMillis - timestampMillis);
    const dueByPolicy = !newestRetained.has(version) && timestampMillis < cutoffMillis;
    const decide = (keep: boolean, reason: string): VersionDecision => ({ version, timestampMillis, keep, reason });
    if (version === latest) return decide(true, "latest version");
    if (version >= latestAtStart) return decide(true, `at or above version ${latestAtStart}, the latest when this run started`);
    const tagNames = tags.get(version);
    if (tagNames) {
      if (dueByPolicy) taggedOld.push({ version, tags: tagNames });
      return decide(true, `tagged ${tagNames.map((t) => JSON.stringify(t)).join(", ")}`);
    }
    const branchNames = branches.get(version);
    if (branchNames) return decide(true, `branch ${branchNames.map((b) => JSON.stringify(b)).join(", ")} was created from it`);
    if (newestRetained.has(version)) return decide(true, `among the newest ${policy.retainVersions} versions`);
    if (!dueByPolicy) return decide(true, `committed ${age} ago, within older-than ${olderThan}`);
    return decide(false, `committed ${age} ago (older than ${olderThan}) and not among the newest ${policy.retainVersions}`);
  });

  if (input.keptTogether) {
    const needed = input.keptTogether(
      decisions.filter((d) => d.keep).map((d) => d.version),
      decisions.filter((d) => !d.keep).map((d) => d.version),
    );
    for (const decision of decisions) {
      const why = needed.get(decision.version);
      if (!decision.keep && why !== undefined) {
        decision.keep = true;
        decision.reason = `needed by a kept version: ${why}`;
      }
    }
  }
  const protection = policy.protectBefore === null ? null : applyProtection(decisions, policy.protectBefore);
  return {
    decisions,
    kept: decisions.filter((d) => d.keep).map((d) => d.version),
    removed: decisions.filter((d) => !d.keep).map((d) => d.version),
    taggedOld,
    protection,
    cutoffMillis,
  };
}

/**
 * History protection: versions below the boundary are removed all in one run or not at all.
 * Mutates `decisions` (keeping them all) when only part of that history is due.
 */
function applyProtection(decisions: VersionDecision[], boundary: number): ProtectionOutcome {
  const below = decisions.filter((d) => d.version < boundary);
  const versions = below.map((d) => d.version);
  if (below.length === 0) {
    return { boundary, below: versions, result: "not-applicable", reason: `no version below ${boundary} remains: protection no longer applies` };
  }
  const due = below.filter((d) => !d.keep);
  const blockers = below.filter((d) => d.keep);
  if (due.length === 0) {
    return { boundary, below: versions, result: "nothing-due", reason: `none of the ${below.length} versions below ${boundary} is due for removal` };
  }
  if (blockers.length === 0) {
    return { boundary, below: versions, result: "removed-all", reason: `all ${below.length} versions below ${boundary} are due: removed together in this run` };
  }
  const shown = blockers.slice(0, 5).map((d) => `${d.version}: ${d.reason}`);
  const more = blockers.length > shown.length ? `; and ${blockers.length - shown.length} more` : "";
  const reason =
    `only ${due.length} of the ${below.length} versions below ${boundary} are due, so all of them are kept ` +
    `(still needed: ${shown.join("; ")}${more})`;
  for (const decision of due) {
    decision.keep = true;
    decision.reason = `history protection: ${decision.reason}, but versions below ${boundary} go all together or not at all`;
  }
  return { boundary, below: versions, result: "kept-all", reason };
}
