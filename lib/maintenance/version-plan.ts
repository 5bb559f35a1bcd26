/**
 * Which versions a cleanup keeps and which it removes, with the reason for each: the
 * decision half of `process_manifests`, over plain data so it can be tested alone.
 *
 * Never removed, whatever the policy: the latest version, every version at or above the one
 * read as latest when the run started (anything committed meanwhile), versions carrying a tag
 * of the main branch, and versions a branch was created from. A tagged version the policy
 * would otherwise remove is kept and reported, not refused.
 */
import type { AppliedRetentions, FormatRemovalRules } from "../formats/table-format.ts";
import type { Refs } from "../model/refs.ts";
import { formatDuration } from "./duration.ts";
import { describePin } from "../pins/pins.ts";
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
  /** The format's rule: removed versions a kept one still needs to be read, with why (TableFormat.keptTogether). */
  keptTogether?: (kept: readonly number[], removed: readonly number[]) => Map<number, string>;
  /** Reader pins that hold (not expired): each keeps its version until its expiry (pins.ts). */
  pins?: readonly VersionPin[];
  /**
   * Versions an interrupted run removed (from its intent, or the protection state a checkpoint
   * kept): below a protected boundary they mean its history is partial already.
   */
  removedEarlier?: readonly number[];
  /**
   * The format's own retention rules (the metadata-commit strategy's rules): for the versions they cover they
   * replace the age and count defaults and the tag, branch and "new" rules. Only what the caller
   * set explicitly (a policy field whose source is not "default") and reader pins keep more.
   */
  formatRules?: FormatRemovalRules;
}

/** A reader pin as the plan needs it. */
export interface VersionPin {
  id: string;
  version: number;
  expires_at: string;
  note: string | null;
}

/**
 * Why a version is kept, as a word (the reason says it for people): the latest, committed at or
 * after the run started, a tag, a branch, a reader pin, the retention policy (age or count),
 * another kept version needs it (the format's rule), or history protection. "removed" otherwise.
 */
export type KeptBy = "latest" | "new" | "tag" | "branch" | "pin" | "retention" | "needed" | "protection" | "removed";

export interface VersionDecision {
  version: number;
  timestampMillis: number;
  keep: boolean;
  reason: string;
  /** Why, as a word (storage splits history by it); set by planVersions. */
  keptBy?: KeptBy;
}

export interface TaggedOldVersion {
  version: number;
  tags: string[];
}

/**
 * not-applicable: no version below the boundary remains (protection has lifted);
 * nothing-due / kept-all / removed-all: the boundary's history is whole and stays so, or goes whole;
 * partial: an earlier run already removed part of it (it stopped or was killed half way): this
 * run finishes what is due, and what a ref created since keeps stays, said in every report.
 */
export type ProtectionResult = "not-applicable" | "nothing-due" | "removed-all" | "kept-all" | "partial";

export interface ProtectionOutcome {
  boundary: number;
  /** Live versions below the boundary when the run planned. */
  below: number[];
  /** Versions below the boundary an earlier run already removed. */
  removed_earlier: number[];
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
  /** What the format's rules change besides versions (refs its removal commit drops), for the report. */
  formatNotes: string[];
  /** The retentions the format's rules applied in place of the policy's age and count (the report's policy says them). */
  applied?: AppliedRetentions;
  /** Kept versions whose version file stays but which cannot be read once the plan has run (a format whose commits outlive the data its vacuum took), with why. */
  unreadable?: ReadonlyMap<number, string>;
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
    versions
      .filter((v) => v.version <= latestAtStart)
      .slice(-policy.retainVersions)
      .map((v) => v.version),
  );
  const tags = mainTagsByVersion(input.refs);
  const branches = branchesByParentVersion(input.refs);
  const olderThan = formatDuration(policy.olderThanMs);
  const pins = new Map<number, VersionPin[]>();
  for (const pin of input.pins ?? []) pins.set(pin.version, [...(pins.get(pin.version) ?? []), pin]);
  const taggedOld: TaggedOldVersion[] = [];

  const rules = input.formatRules;
  const explicitAge = policy.sources.olderThanMs !== "default";
  const explicitCount = policy.sources.retainVersions !== "default";

  const decisions: VersionDecision[] = versions.map(({ version, timestampMillis }) => {
    const committed = new Date(timestampMillis).toISOString();
    const dueByPolicy = !newestRetained.has(version) && timestampMillis < cutoffMillis;
    const decide = (keep: boolean, reason: string, keptBy: KeptBy): VersionDecision => ({ version, timestampMillis, keep, reason, keptBy });
    const formatKeep = rules?.keep.get(version);
    const formatDue = rules?.due.get(version);
    if (formatKeep !== undefined) return decide(true, formatKeep.reason, formatKeep.keptBy);
    if (formatDue !== undefined) {
      // The format's rules let it go; only what the caller asked for, or a reader, keeps it.
      if (version === latestAtStart) return decide(true, "latest version", "latest");
      const pinned = pins.get(version);
      if (pinned) return decide(true, `pinned by a reader: ${pinned.map(describePin).join("; ")}`, "pin");
      if (explicitCount && newestRetained.has(version)) {
        return decide(true, `${formatDue}, but among the newest ${policy.retainVersions} versions (retain-versions, ${policy.sources.retainVersions})`, "retention");
      }
      if (explicitAge && timestampMillis >= cutoffMillis) {
        return decide(true, `${formatDue}, but committed ${committed}, within older-than ${olderThan} (${policy.sources.olderThanMs})`, "retention");
      }
      return decide(false, formatDue, "removed");
    }
    if (version === latest) return decide(true, "latest version", "latest");
    if (version >= latestAtStart) return decide(true, `at or above version ${latestAtStart}, the latest when this run started`, "new");
    const tagNames = tags.get(version);
    if (tagNames) {
      if (dueByPolicy) taggedOld.push({ version, tags: tagNames });
      return decide(true, `tagged ${tagNames.map((t) => JSON.stringify(t)).join(", ")}`, "tag");
    }
    const branchNames = branches.get(version);
    if (branchNames) return decide(true, `branch ${branchNames.map((b) => JSON.stringify(b)).join(", ")} was created from it`, "branch");
    const pinned = pins.get(version);
    if (pinned) return decide(true, `pinned by a reader: ${pinned.map(describePin).join("; ")}`, "pin");
    if (newestRetained.has(version)) return decide(true, `among the newest ${policy.retainVersions} versions`, "retention");
    if (!dueByPolicy) return decide(true, `committed ${committed}, within older-than ${olderThan}`, "retention");
    return decide(false, `committed ${committed} (older than ${olderThan}) and not among the newest ${policy.retainVersions}`, "removed");
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
        decision.keptBy = "needed";
      }
    }
  }
  const protection = policy.protectBefore === null ? null : applyProtection(decisions, policy.protectBefore, input.removedEarlier ?? []);
  return {
    decisions,
    kept: decisions.filter((d) => d.keep).map((d) => d.version),
    removed: decisions.filter((d) => !d.keep).map((d) => d.version),
    taggedOld,
    protection,
    cutoffMillis,
    formatNotes: rules?.notes ?? [],
    ...(rules?.applied ? { applied: rules.applied } : {}),
  };
}

/**
 * History protection: versions below the boundary are removed all in one run or not at all.
 * Mutates `decisions` (keeping them all) when only part of that history is due.
 */
function applyProtection(decisions: VersionDecision[], boundary: number, removedEarlier: readonly number[]): ProtectionOutcome {
  const below = decisions.filter((d) => d.version < boundary);
  const versions = below.map((d) => d.version);
  const live = new Set(versions);
  const earlier = removedEarlier.filter((v) => v < boundary && !live.has(v)).sort((a, b) => a - b);
  const outcome = (result: ProtectionResult, reason: string): ProtectionOutcome => ({ boundary, below: versions, removed_earlier: earlier, result, reason });
  if (below.length === 0) {
    return outcome("not-applicable", `no version below ${boundary} remains: protection no longer applies`);
  }
  const due = below.filter((d) => !d.keep);
  const blockers = below.filter((d) => d.keep);
  const shown = blockers.slice(0, 5).map((d) => `${d.version}: ${d.reason}`);
  const more = blockers.length > shown.length ? `; and ${blockers.length - shown.length} more` : "";
  if (earlier.length > 0) {
    // The history below the boundary is partial already: keeping the rest would not make it
    // whole again. Finish what is due; what a ref keeps stays, and every report says so.
    const gone = `an earlier run removed ${earlier.length} of the versions below ${boundary} (it stopped half way)`;
    if (blockers.length === 0) return outcome("removed-all", `${gone}: this run removes the other ${due.length}, so history below ${boundary} is gone whole`);
    return outcome(
      "partial",
      `${gone}; this run removes the ${due.length} still due and keeps ${blockers.length} that must stay ` +
        `(${shown.join("; ")}${more}): history below ${boundary} stays partial, and protection stays in force, until they go`,
    );
  }
  if (due.length === 0) {
    return outcome("nothing-due", `none of the ${below.length} versions below ${boundary} is due for removal`);
  }
  if (blockers.length === 0) {
    return outcome("removed-all", `all ${below.length} versions below ${boundary} are due: removed together in this run`);
  }
  const reason = `only ${due.length} of the ${below.length} versions below ${boundary} are due, so all of them are kept ` + `(still needed: ${shown.join("; ")}${more})`;
  for (const decision of due) {
    decision.keep = true;
    decision.reason = `history protection: ${decision.reason}, but versions below ${boundary} go all together or not at all`;
    decision.keptBy = "protection";
  }
  return outcome("kept-all", reason);
}
