import { describe, expect, it } from "vitest";
import type { Refs } from "../../lib/formats/table-format.ts";
import { resolvePolicy } from "../../lib/maintenance/policy.ts";
import type { CleanupSettings } from "../../lib/maintenance/policy.ts";
import { planVersions } from "../../lib/maintenance/version-plan.ts";

const DAY = 86_400_000;
const NOW = Date.parse("2026-11-01T00:00:00Z");
const NO_REFS: Refs = { tags: [], branches: [] };

/** Versions 1..n, version v committed (n - v + 1) days ago: 1 is the oldest. */
function history(n: number) {
  return Array.from({ length: n }, (_, i) => ({ version: i + 1, timestampMillis: NOW - (n - i) * DAY }));
}

function plan(n: number, settings: CleanupSettings = {}, refs: Refs = NO_REFS, latestAtStart = n) {
  return planVersions({ versions: history(n), latestAtStart, refs, policy: resolvePolicy(settings, {}, "mem://t"), nowMillis: NOW });
}

describe("which versions a cleanup removes", () => {
  it("removes versions older than the cutoff, never the latest", () => {
    const result = plan(10, { olderThanMs: 5 * DAY });
    // Version v is (11 - v) days old: 1..5 are 10..6 days old; 6 is exactly 5 days old and kept.
    expect(result.removed).toEqual([1, 2, 3, 4, 5]);
    expect(result.decisions[0]!.reason).toMatch(/committed 2026-10-22T00:00:00.000Z \(older than 5d\) and not among the newest 1/);
    expect(result.decisions[6]!.reason).toMatch(/within older-than 5d/);
    expect(plan(3, { olderThanMs: 0 }).removed).toEqual([1, 2]);
  });

  it("retains the newest N, counted among versions present when the run started", () => {
    expect(plan(10, { olderThanMs: 0, retainVersions: 3 }).removed).toEqual([1, 2, 3, 4, 5, 6, 7]);
    // Versions 9-10 were committed after the run read 8 as latest: they do not shift the window.
    const racing = plan(10, { olderThanMs: 0, retainVersions: 3 }, NO_REFS, 8);
    expect(racing.removed).toEqual([1, 2, 3, 4, 5]);
    expect(racing.decisions.find((d) => d.version === 9)!.reason).toBe("at or above version 8, the latest when this run started");
  });

  it("keeps tagged versions of main and reports the old ones; other branches' tags do not pin main", () => {
    const refs: Refs = {
      tags: [
        { name: "release", version: 2, branch: null },
        { name: "also", version: 2, branch: null },
        { name: "young", version: 9, branch: null },
        { name: "elsewhere", version: 3, branch: "dev" },
      ],
      branches: [],
    };
    const result = plan(10, { olderThanMs: 0 }, refs);
    expect(result.removed).toEqual([1, 3, 4, 5, 6, 7, 8]);
    expect(result.taggedOld).toEqual([
      { version: 2, tags: ["also", "release"] },
      { version: 9, tags: ["young"] },
    ]);
    expect(result.decisions[1]!.reason).toBe('tagged "also", "release"');
  });

  it("keeps the versions branches were created from", () => {
    const refs: Refs = {
      tags: [],
      branches: [
        { name: "dev", parentBranch: null, parentVersion: 4 },
        { name: "sub", parentBranch: "dev", parentVersion: 6 },
      ],
    };
    const result = plan(10, { olderThanMs: 0 }, refs);
    expect(result.removed).toEqual([1, 2, 3, 5, 6, 7, 8, 9]);
    expect(result.decisions[3]!.reason).toBe('branch "dev" was created from it');
  });
});

describe("history protection", () => {
  it("a run that would cut history below P part way keeps all of it, and says why", () => {
    const refs: Refs = { tags: [{ name: "keep-me", version: 3, branch: null }], branches: [] };
    const result = plan(10, { olderThanMs: 0, protectBefore: 6 }, refs);
    expect(result.removed).toEqual([6, 7, 8, 9]);
    expect(result.protection).toMatchObject({ boundary: 6, below: [1, 2, 3, 4, 5], result: "kept-all" });
    expect(result.protection!.reason).toMatch(/only 4 of the 5 versions below 6 are due, so all of them are kept \(still needed: 3: tagged "keep-me"\)/);
    expect(result.decisions[0]!.reason).toMatch(/^history protection: /);
  });

  it("partly due by age: kept together", () => {
    const result = plan(10, { olderThanMs: 7.5 * DAY, protectBefore: 5 });
    // Due by age: 1, 2, 3 (10, 9, 8 days old); 4 is 7 days old, so history below 5 stays whole.
    expect(result.removed).toEqual([]);
    expect(result.protection!.result).toBe("kept-all");
  });

  it("a run that removes all of it succeeds", () => {
    const result = plan(10, { olderThanMs: 0, protectBefore: 5 });
    expect(result.removed).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(result.protection).toMatchObject({ result: "removed-all", below: [1, 2, 3, 4] });
  });

  it("lifts once history below P is gone, and is inert when nothing below P is due", () => {
    const versions = history(10).filter((v) => v.version >= 5);
    const lifted = planVersions({ versions, latestAtStart: 10, refs: NO_REFS, policy: resolvePolicy({ olderThanMs: 0, protectBefore: 5 }, {}, "mem://t"), nowMillis: NOW });
    expect(lifted.protection!.result).toBe("not-applicable");
    expect(lifted.removed).toEqual([5, 6, 7, 8, 9]);
    expect(plan(10, { olderThanMs: 30 * DAY, protectBefore: 5 }).protection!.result).toBe("nothing-due");
  });
});
