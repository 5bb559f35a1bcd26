/**
 * The parts of a table's storage (see storage.ts), computed from a cleanup plan: pure, no
 * request. Cleanup's receipt records them for the listing it already made; `lakewarden
 * storage` adds one listing of the whole root.
 *
 * A file several kept versions share counts once, in the part of the version that holds it
 * longest: live first, then tags, branches, protection, pins, and retention last.
 */
import type { TableFormat } from "../formats/table-format.ts";
import { LAKEWARDEN_PREFIX } from "../model/layout.ts";
import type { ObjectInfo } from "../store/object-store.ts";
import type { PlannedFile } from "./file-plan.ts";
import type { DeletePlan } from "./plan-deletes.ts";
import type { ProcessedManifests } from "./process-manifests.ts";
import type { KeptBy } from "./version-plan.ts";
import type { ReferenceTable, VersionReferences } from "./version-references.ts";

export interface Totals {
  files: number;
  bytes: number;
}

export type HistoryReason = "retention" | "tags" | "branches" | "pins" | "protection";
export type OtherReason = "within_safety_window" | "format_bookkeeping" | "outside_format_folders";

export const HISTORY_REASONS: readonly HistoryReason[] = ["tags", "branches", "protection", "pins", "retention"];

export interface StorageParts {
  live: Totals;
  history: Totals & { by_reason: Record<HistoryReason, Totals> };
  reclaimable: Totals;
  unknown: Totals;
  lakewarden: Totals;
  other: Totals & { by_reason: Record<OtherReason, Totals> };
}

export interface VersionHolding {
  version: number;
  version_id: string;
  timestamp_millis: number;
  kept_by: KeptBy;
  reason: string;
  /** Files only this version needs among the kept ones (what removing it alone would free). */
  alone: Totals;
  /** Every listed file it references. */
  referenced: Totals;
}

export const zero = (): Totals => ({ files: 0, bytes: 0 });

export function emptyParts(): StorageParts {
  return {
    live: zero(),
    history: { ...zero(), by_reason: { retention: zero(), tags: zero(), branches: zero(), pins: zero(), protection: zero() } },
    reclaimable: zero(),
    unknown: zero(),
    lakewarden: zero(),
    other: { ...zero(), by_reason: { within_safety_window: zero(), format_bookkeeping: zero(), outside_format_folders: zero() } },
  };
}

export function add(totals: Totals, size: number, files = 1): void {
  totals.files += files;
  totals.bytes += size;
}

/** Sum of the parts (each file counted once). */
export function partsTotal(parts: StorageParts): Totals {
  const all = [parts.live, parts.history, parts.reclaimable, parts.unknown, parts.lakewarden, parts.other];
  return { files: all.reduce((s, t) => s + t.files, 0), bytes: all.reduce((s, t) => s + t.bytes, 0) };
}

/**
 * The parts of a cleanup plan's own listing (the format's folders only: no extra request), for
 * the run's receipt: before = the plan, after = before minus what the run deleted.
 */
export interface RunStorage {
  /** Which files the parts count: the listing the run made. */
  scope: string;
  before: StorageParts;
  after: StorageParts;
}

/** `deleted`: what the run deleted (null: nothing, as in a dry run). */
export function storageOfPlan(plan: DeletePlan, format: TableFormat, deleted: Totals | null): RunStorage {
  const before = classify(plan, format, plan.listing, false).parts;
  const after = structuredClone(before);
  if (deleted) add(after.reclaimable, -deleted.bytes, -deleted.files);
  return { scope: `the format's folders (${format.managedPrefixes.join(", ")})`, before, after };
}

/** Which kept versions reference each key: files by exact key, folders by prefix. */
class VersionIndex {
  private readonly files = new Map<string, number[]>();
  private readonly folders = new Map<string, number[]>();

  add(version: number, references: VersionReferences): void {
    references.forEach((reference) => {
      const map = reference.path.endsWith("/") ? this.folders : this.files;
      const list = map.get(reference.path);
      if (list) {
        if (list.at(-1) !== version) list.push(version);
      } else map.set(reference.path, [version]);
    });
  }

  versionsOf(key: string): number[] {
    const found = new Set(this.files.get(key) ?? []);
    if (this.folders.size > 0) {
      for (let slash = key.indexOf("/"); slash !== -1 && slash < key.length - 1; slash = key.indexOf("/", slash + 1)) {
        for (const version of this.folders.get(key.slice(0, slash + 1)) ?? []) found.add(version);
      }
    }
    return [...found];
  }
}

/** A path's standing in PathStanding: named by a live version; else 1 + the rank of its best history reason; NONE: named by no kept version. */
const LIVE = 0;
const NONE = 127;

/**
 * Per path, the best standing among the kept versions that name it (files by exact key, folders
 * by prefix): what the receipt's parts ask, a number per file of the scan's table, where a list
 * of versions per path grew with versions × files (512 kept versions of 100,000 fragments: 51
 * million entries). The best of a union is the best of its parts, so a file in a named folder
 * takes the better of both, as the versions of both together would give.
 */
class PathStanding {
  private table: ReferenceTable | null = null;
  private best = new Int8Array(0);
  /** Paths of another table than the first (a later scan's), and folders. */
  private readonly files = new Map<string, number>();
  private readonly folders = new Map<string, number>();

  add(standing: number, references: VersionReferences): void {
    const table = (this.table ??= references.table);
    if (references.table !== table) {
      references.forEach((reference) => {
        this.addPath(standing, reference.path);
      });
      return;
    }
    if (this.best.length < table.size) {
      const grown = new Int8Array(table.size).fill(NONE);
      grown.set(this.best);
      this.best = grown;
    }
    const best = this.best;
    const runs = references.idRuns;
    for (let r = 0; r < runs.length; r += 2) {
      const end = runs[r]! + runs[r + 1]!;
      for (let id = runs[r]!; id < end; id++) {
        const first = table.firstId(id);
        if (standing >= best[first]!) continue;
        const path = table.at(first).path;
        if (path.endsWith("/")) this.addPath(standing, path);
        else best[first] = standing;
      }
    }
  }

  of(key: string): number {
    let standing = NONE;
    const id = this.table?.firstIdOf(key);
    if (id !== undefined && id < this.best.length) standing = this.best[id]!;
    standing = Math.min(standing, this.files.get(key) ?? NONE);
    if (this.folders.size === 0) return standing;
    for (let slash = key.indexOf("/"); slash !== -1 && slash < key.length - 1; slash = key.indexOf("/", slash + 1)) {
      standing = Math.min(standing, this.folders.get(key.slice(0, slash + 1)) ?? NONE);
    }
    return standing;
  }

  private addPath(standing: number, path: string): void {
    const map = path.endsWith("/") ? this.folders : this.files;
    map.set(path, Math.min(standing, map.get(path) ?? NONE));
  }
}

const REASON_OF: Partial<Record<KeptBy, HistoryReason>> = {
  tag: "tags",
  branch: "branches",
  pin: "pins",
  protection: "protection",
  retention: "retention",
  needed: "retention",
};

function isLive(keptBy: KeptBy | undefined): boolean {
  return keptBy === "latest" || keptBy === "new";
}

/** A version's standing (PathStanding); a commit file of a version the plan did not read was committed after it: live. */
function standingOf(decision: { keptBy?: KeptBy | undefined } | undefined): number {
  if (decision === undefined || isLive(decision.keptBy)) return LIVE;
  return 1 + HISTORY_REASONS.indexOf(REASON_OF[decision.keptBy ?? "retention"] ?? "retention");
}

/** Adds a kept file to its part by its standing. */
function addKept(parts: StorageParts, standing: number, size: number): void {
  if (standing === NONE) {
    // Kept by the plan yet named by no kept version: not a case the file plan makes; counted, not hidden.
    add(parts.unknown, size);
  } else if (standing === LIVE) add(parts.live, size);
  else {
    add(parts.history, size);
    add(parts.history.by_reason[HISTORY_REASONS[standing - 1]!], size);
  }
}

export function classify(plan: DeletePlan, format: TableFormat, listing: Iterable<ObjectInfo>, byVersion: boolean) {
  const processed: ProcessedManifests = plan.processed;
  const parts = emptyParts();
  // A plan in listing order is walked alongside the listing, not indexed by key.
  const deleting = plannedLookup(plan.files.toDelete, plan.files.order);
  const reported = plannedLookup(plan.files.reported, plan.files.order);
  // Every version each file needs only for the per-version holdings; the parts need a file's best standing alone.
  const index = byVersion ? new VersionIndex() : null;
  const standing = new PathStanding();
  for (const [version, scanned] of processed.scan) {
    const decision = processed.decisions.get(version);
    if (!decision?.keep) continue;
    index?.add(version, scanned.references);
    standing.add(standingOf(decision), scanned.references);
  }
  const holdings = new Map<number, VersionHolding>();
  if (byVersion) {
    for (const decision of processed.plan.decisions) {
      if (!decision.keep) continue;
      holdings.set(decision.version, {
        version: decision.version,
        version_id: processed.scan.get(decision.version)?.record.version_id ?? String(decision.version),
        timestamp_millis: decision.timestampMillis,
        kept_by: decision.keptBy ?? "retention",
        reason: decision.reason,
        alone: zero(),
        referenced: zero(),
      });
    }
  }
  const managed = (key: string) => format.managedPrefixes.some((prefix) => key.startsWith(prefix));

  for (const object of listing) {
    const { key, size } = object;
    if (key.startsWith(LAKEWARDEN_PREFIX)) {
      add(parts.lakewarden, size);
      continue;
    }
    if (deleting.take(key)) {
      add(parts.reclaimable, size);
      continue;
    }
    if (!managed(key)) {
      add(parts.other, size);
      add(parts.other.by_reason.outside_format_folders, size);
      continue;
    }
    if (format.isBookkeepingFile(key)) {
      add(parts.other, size);
      add(parts.other.by_reason.format_bookkeeping, size);
      continue;
    }
    const planned = reported.take(key);
    if (planned) {
      if (planned.kind === "unknown") add(parts.unknown, size);
      else {
        add(parts.other, size);
        add(parts.other.by_reason.within_safety_window, size);
      }
      continue;
    }
    const commitOf = format.parseVersionKey(key);
    addKept(parts, commitOf !== null ? standingOf(processed.decisions.get(commitOf)) : standing.of(key), size);
    if (index) {
      const versions = commitOf !== null ? [commitOf] : index.versionsOf(key);
      for (const version of versions) {
        const holding = holdings.get(version);
        if (!holding) continue;
        add(holding.referenced, size);
        if (versions.length === 1) add(holding.alone, size);
      }
    }
  }
  deleting.assertDone("files to delete");
  reported.assertDone("reported files");
  return { parts, byVersion: byVersion ? [...holdings.values()].sort((a, b) => a.version - b.version) : null };
}

interface PlannedLookup {
  take(key: string): PlannedFile | undefined;
  assertDone(what: string): void;
}

function plannedLookup(files: Iterable<PlannedFile>, order: "listing" | "format"): PlannedLookup {
  if (order === "listing") return new InOrder(files);
  const byKey = new Map<string, PlannedFile>();
  for (const file of files) byKey.set(file.key, file);
  return { take: (key) => byKey.get(key), assertDone: () => {} };
}

/** A plan's files read alongside the listing they are a subsequence of. */
class InOrder implements PlannedLookup {
  private readonly files: Iterator<PlannedFile>;
  private head: IteratorResult<PlannedFile>;

  constructor(files: Iterable<PlannedFile>) {
    this.files = files[Symbol.iterator]();
    this.head = this.files.next();
  }

  /** The planned file for `key` when it is the next one, else undefined. */
  take(key: string): PlannedFile | undefined {
    if (this.head.done || this.head.value.key !== key) return undefined;
    const file = this.head.value;
    this.head = this.files.next();
    return file;
  }

  /** Every planned file must have met its listed object: a plan out of listing order would be miscounted. */
  assertDone(what: string): void {
    if (!this.head.done) throw new Error(`internal: the plan's ${what} are not in listing order (${this.head.value.key} not met)`);
  }
}
