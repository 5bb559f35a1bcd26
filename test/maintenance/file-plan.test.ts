import { describe, expect, it } from "vitest";
import { lanceFormat } from "../../lib/formats/lance/lance-format.ts";
import { planFiles } from "../../lib/maintenance/file-plan.ts";
import { ReferenceSet } from "../../lib/maintenance/references.ts";
import { relativeKeyProblem } from "../../lib/model/table-path.ts";
import type { ObjectInfo } from "../../lib/store/object-store.ts";
import type { VersionDecision } from "../../lib/maintenance/version-plan.ts";

const DAY = 86_400_000;
const NOW = Date.parse("2026-11-01T00:00:00Z");

function listed(key: string, ageDays: number, size = 100): ObjectInfo {
  return { key, size, etag: `"${key}"`, lastModified: new Date(NOW - ageDays * DAY) };
}

function v2(version: number): string {
  return `_versions/${(18446744073709551615n - BigInt(version)).toString().padStart(20, "0")}.manifest`;
}

const decisions = new Map<number, VersionDecision>([
  [1, { version: 1, timestampMillis: 0, keep: false, reason: "committed 30 days ago (older than 7d) and not among the newest 1" }],
  [2, { version: 2, timestampMillis: 0, keep: true, reason: "latest version" }],
]);

function references() {
  const kept = new ReferenceSet();
  kept.addAll(2, [
    { path: "data/kept.lance", role: "data" },
    { path: "_indices/aaaa/", role: "index" },
    { path: "_transactions/1-x.txn", role: "transaction" },
  ]);
  const removed = new ReferenceSet();
  removed.addAll(1, [
    { path: "data/kept.lance", role: "data" },
    { path: "data/old-young.lance", role: "data" },
    { path: "_indices/bbbb/", role: "index" },
    { path: "_deletions/0-1-2.arrow", role: "delete" },
    { path: "../../elsewhere/victim.lance", role: "data" },
  ]);
  return { kept, removed };
}

function plan(listing: ObjectInfo[], deleteUnverified = false) {
  const { kept, removed } = references();
  return planFiles({ listing, format: lanceFormat, decisions, kept, removed, safetyWindowMs: 7 * DAY, deleteUnverified, nowMillis: NOW });
}

describe("which files delete_unreferenced removes", () => {
  const listing = [
    listed(v2(2), 1),
    listed(v2(1), 30),
    listed(`${v2(3)}-0d3e`, 0), // staging manifest of an unfinished rename commit
    listed("_versions/.tmp_abc", 10),
    listed("_versions/latest_version_hint.json", 30), // Lance's own bookkeeping: kept without a word
    listed("data/kept.lance", 40),
    listed("data/old-young.lance", 0),
    listed("data/orphan-old.lance", 9),
    listed("data/orphan-young.lance", 0.1),
    listed("data/notes.txt", 100),
    listed("_indices/aaaa/page_data.lance", 40),
    listed("_indices/bbbb/page_data.lance", 1),
    listed("_indices/bbbb/page_lookup.lance", 1),
    listed("_deletions/0-1-2.arrow", 2),
    listed("_transactions/1-x.txn", 40),
    listed("_transactions/0-y.txn", 8),
    listed("_lakewarden/checkpoints/00000000000000000001.arrow", 100),
  ];

  it("gives every file in the plan its reason", () => {
    const result = plan(listing);
    const byKey = Object.fromEntries(result.files.map((f) => [f.key, [f.action, f.kind, f.reason]]));
    expect(byKey).toEqual({
      [v2(1)]: ["delete", "commit", "version 1 removed: committed 30 days ago (older than 7d) and not among the newest 1"],
      [`${v2(3)}-0d3e`]: ["keep", "unknown", expect.stringMatching(/not a file lance cleanup knows in _versions\/ \(staging manifest, temp or foreign file\): kept/)],
      "_versions/.tmp_abc": ["keep", "unknown", expect.stringMatching(/not a file lance cleanup knows/)],
      "data/old-young.lance": ["delete", "data", "named only by removed version 1"],
      "data/orphan-old.lance": ["delete", "data", "unreferenced, last modified 2026-10-23T00:00:00.000Z, older than the safety window 7d"],
      "data/orphan-young.lance": ["keep", "data", "unreferenced, last modified 2026-10-31T21:36:00.000Z, within the safety window 7d: may belong to a commit in progress"],
      "data/notes.txt": ["keep", "unknown", expect.stringMatching(/not a file lance cleanup knows \(/)],
      "_indices/bbbb/page_data.lance": ["delete", "index", "named only by removed version 1"],
      "_indices/bbbb/page_lookup.lance": ["delete", "index", "named only by removed version 1"],
      "_deletions/0-1-2.arrow": ["delete", "delete", "named only by removed version 1"],
      "_transactions/0-y.txn": ["delete", "transaction", "unreferenced, last modified 2026-10-24T00:00:00.000Z, older than the safety window 7d"],
    });
    expect([...result.toDelete].map((f) => f.key)).not.toContain("data/kept.lance");
    expect(result.files.some((f) => f.key.startsWith("_lakewarden/"))).toBe(false);
  });

  it("--delete-unverified lifts the safety window, never the kinds it does not know", () => {
    const result = plan(listing, true);
    const young = result.files.find((f) => f.key === "data/orphan-young.lance")!;
    expect(young).toMatchObject({
      action: "delete",
      reason: "unreferenced, last modified 2026-10-31T21:36:00.000Z, within the safety window 7d, deleted because of --delete-unverified",
    });
    expect([...result.reported].map((f) => f.kind)).toEqual(["unknown", "unknown", "unknown"]);
  });

  it("a reference outside the table root is recorded, never a key", () => {
    const { removed } = references();
    expect(removed.outside).toEqual([{ path: "../../elsewhere/victim.lance", version: 1, kind: "unresolvable", reason: 'the format gave a path that has a ".." segment' }]);
    expect(removed.lookup("../../elsewhere/victim.lance")).toBeUndefined();
    for (const path of ["/abs/x", "s3://other/x", "a/../../b", "a//b", "a\\b", ""]) expect(relativeKeyProblem(path)).not.toBeNull();
    expect(relativeKeyProblem("_indices/abc/")).toBeNull();
  });
});
