/**
 * A removal the format plans by its own rules (removal strategy "format-plan": Delta's VACUUM and log
 * cleanup), turned into the pipeline's terms: version decisions and a file plan, which the
 * stages after it (history archived first, intent, deletes commit files first, post-delete check,
 * report) carry out as they carry out a generic plan.
 *
 * The pipeline's own guarantees are checked here, not trusted to the format: the latest version,
 * versions at or above the latest when the run started and pinned versions are never removed, a
 * kept version's commit file is never deleted, and only listed keys outside `_lakewarden/` go.
 * An interrupted run's intent is not needed as proof here: the format's rules decide again from
 * the table as it is now, and the intent's records still reach the history (run-cleanup.ts).
 */
import type { FormatPlannedRemoval, RemovalInput, TableFormat } from "../formats/table-format.ts";
import type { ObjectInfo, ObjectStore } from "../store/object-store.ts";
import { LAKEWARDEN_PREFIX, addPlanned, emptyFilePlan } from "./file-plan.ts";
import type { ListedObjects } from "./listing.ts";
import { describePin } from "../pins/pins.ts";
import type { DeletePlan, PlanDeletesOptions } from "./plan-deletes.ts";
import type { ProcessedManifests, ScannedVersion } from "./process-manifests.ts";
import { ReferenceSet } from "./references.ts";
import type { KeptBy, ProtectionOutcome, VersionDecision } from "./version-plan.ts";

export async function planRemovalByFormat(
  store: ObjectStore,
  format: TableFormat,
  planRemoval: FormatPlannedRemoval["planRemoval"],
  processed: ProcessedManifests,
  listed: ListedObjects,
  options: PlanDeletesOptions,
): Promise<DeletePlan> {
  // The format walks the listing (spilled pages), it is not copied whole: the objects named by its plan are looked up below.
  const listing = listed;
  const pinned = new Map<number, string>();
  for (const pin of processed.pins) pinned.set(pin.version, [pinned.get(pin.version), describePin(pin)].filter(Boolean).join("; "));
  const { policy, latestAtStart } = processed;
  const versions = [...processed.scan.values()];
  const removal = await planRemoval(store, {
    listing,
    versions: versions.map(removalVersion),
    latestAtStart,
    now: options.now,
    policy: { olderThanMs: policy.olderThanMs, retainVersions: policy.retainVersions, protectBefore: policy.protectBefore, safetyWindowMs: policy.safetyWindowMs },
    pinned,
  });

  const latest = versions.at(-1)?.file.version ?? latestAtStart;
  const given = new Map(removal.decisions.map((d) => [d.version, d]));
  const decisions: VersionDecision[] = versions.map(({ file, record }) => {
    const version = file.version;
    const planned = given.get(version);
    if (!planned) throw new Error(`${format.name} planned no decision for version ${version} of ${store.uri}: nothing deleted`);
    const base = { version, timestampMillis: record.timestamp_millis, keep: planned.keep, reason: planned.reason };
    if (!planned.keep) {
      if (version === latest || version >= latestAtStart || pinned.has(version)) {
        throw new Error(`${format.name} planned to remove version ${version} of ${store.uri}, which must stay (latest, new or pinned): nothing deleted`);
      }
      return { ...base, keptBy: "removed" };
    }
    return { ...base, keptBy: keptByOf(version, latest, latestAtStart, pinned) };
  });
  const decided = new Map(decisions.map((d) => [d.version, d]));

  const byKey = objectsNamed(listing, [...removal.files, ...(removal.reported ?? [])]);
  // In the format's order: it says what goes first (Delta: log files before the data they name).
  const files = emptyFilePlan(options.spill ?? null, "format");
  const seen = new Set<string>();
  for (const file of removal.files) {
    const object = byKey.get(file.key);
    // Only what the listing showed is a candidate; lakewarden's own folder never is.
    if (!object || seen.has(file.key) || file.key.startsWith(LAKEWARDEN_PREFIX)) continue;
    const committed = format.parseVersionKey(file.key);
    if (committed !== null && decided.get(committed)?.keep) {
      throw new Error(`${format.name} planned to delete ${file.key}, the commit file of kept version ${committed} of ${store.uri}: nothing deleted`);
    }
    seen.add(file.key);
    addPlanned(files, {
      key: file.key,
      kind: file.role,
      size: object.size,
      lastModified: object.lastModified.toISOString(),
      action: "delete",
      reason: file.reason,
      ...(file.version !== undefined ? { version: file.version } : {}),
    });
  }

  for (const file of removal.reported ?? []) {
    const object = byKey.get(file.key);
    if (!object || seen.has(file.key) || file.key.startsWith(LAKEWARDEN_PREFIX)) continue;
    seen.add(file.key);
    addPlanned(files, { key: file.key, kind: file.role, size: object.size, lastModified: object.lastModified.toISOString(), action: "keep", reason: file.reason });
  }

  const kept = new ReferenceSet();
  const removed = new ReferenceSet();
  for (const scanned of versions) {
    const version = scanned.file.version;
    if (decided.get(version)!.keep) kept.addAll(version, removal.kept.get(version) ?? []);
    else removed.addAll(version, scanned.references, scanned.unresolved);
  }
  return {
    processed: {
      ...processed,
      plan: {
        decisions,
        kept: decisions.filter((d) => d.keep).map((d) => d.version),
        removed: decisions.filter((d) => !d.keep).map((d) => d.version),
        taggedOld: [],
        formatNotes: [],
        ...(removal.applied ? { applied: removal.applied } : {}),
        ...unreadableKept(removal.unreadable, decided),
        protection: protectionOutcome(removal.protection, decisions, processed.removedEarlier),
        cutoffMillis: options.now.getTime() - policy.olderThanMs,
      },
      decisions: decided,
      kept,
      removed,
      keptByFormat: removal.kept,
    },
    listing,
    files,
  };
}

/** The listed objects of the keys the format's plan names, by key: one walk of the listing, holding only those. */
function objectsNamed(listing: Iterable<ObjectInfo>, files: readonly { key: string }[]): Map<string, ObjectInfo> {
  const wanted = new Set(files.map((file) => file.key));
  const byKey = new Map<string, ObjectInfo>();
  if (wanted.size === 0) return byKey;
  for (const object of listing) if (wanted.has(object.key)) byKey.set(object.key, object);
  return byKey;
}

/** The format's unreadable versions that the plan keeps (a removed one is cleaned up anyway). */
function unreadableKept(unreadable: ReadonlyMap<number, string> | undefined, decided: ReadonlyMap<number, VersionDecision>): { unreadable?: ReadonlyMap<number, string> } {
  if (!unreadable) return {};
  return { unreadable: new Map([...unreadable].filter(([version]) => decided.get(version)?.keep)) };
}

/** A version as the format's plan reads it: its list made when read, one version at a time, not all held at once. */
function removalVersion(scanned: ScannedVersion): RemovalInput["versions"][number] {
  return {
    file: scanned.file,
    get references() {
      return scanned.references.list();
    },
  };
}

function keptByOf(version: number, latest: number, latestAtStart: number, pinned: ReadonlyMap<number, string>): KeptBy {
  if (version === latest) return "latest";
  if (version >= latestAtStart) return "new";
  if (pinned.has(version)) return "pin";
  return "retention";
}

function protectionOutcome(
  protection: { boundary: number; result: ProtectionOutcome["result"]; reason: string } | null,
  decisions: readonly VersionDecision[],
  removedEarlier: readonly number[],
): ProtectionOutcome | null {
  if (!protection) return null;
  const below = decisions.filter((d) => d.version < protection.boundary).map((d) => d.version);
  const live = new Set(below);
  const earlier = removedEarlier.filter((v) => v < protection.boundary && !live.has(v)).sort((a, b) => a - b);
  return { boundary: protection.boundary, below, removed_earlier: earlier, result: protection.result, reason: protection.reason };
}
