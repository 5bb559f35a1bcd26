/**
 * What `delete_unreferenced` does with each listed file, with the reason: the decision half of
 * the stage, over plain data.
 *
 * Candidates are every file the listing of the format's own folders returned; removed versions
 * only supply proof. No time cutoff tied to the oldest kept version filters the listing
 * (that filter is how Lance orphaned files for good: lance#8705/#8516, #8942).
 *   - referenced by a kept version                  → kept (not in the plan)
 *   - manifest of a removed version                  → deleted
 *   - named only by removed versions                 → deleted (proof it was committed)
 *   - planned by an interrupted run's intent         → deleted (its proof, kept in the intent)
 *   - unreferenced, older than the safety window     → deleted
 *   - unreferenced, younger, with --delete-unverified → deleted
 *   - unreferenced, younger                          → kept and reported (a commit may be in progress)
 *   - a kind the format does not know                → kept and reported
 */
import type { FileRole, TableFormat, VersionFile } from "../formats/table-format.ts";
import type { ObjectInfo } from "../store/object-store.ts";
import { formatDuration } from "./duration.ts";
import type { ReferenceSet } from "./references.ts";
import { describeVersions } from "./references.ts";
import type { PageCodec, SpillArea } from "./spill.ts";
import { SpillList, TextTable, decodeJson, encodeJson } from "./spill.ts";
import type { VersionDecision } from "./version-plan.ts";
import { removalSteps } from "./removal-steps.ts";

/** lakewarden's own folder: never a cleanup candidate (checkpoint pruning has its own stage). */
export { LAKEWARDEN_PREFIX } from "../model/layout.ts";
import { LAKEWARDEN_PREFIX } from "../model/layout.ts";

export type PlannedKind = FileRole | "unknown";

export interface PlannedFile {
  key: string;
  kind: PlannedKind;
  size: number;
  lastModified: string;
  action: "delete" | "keep";
  reason: string;
  /** For a removed version's commit file: the version it is (deleted before every other file). */
  version?: number;
}

export interface FilePlanInput {
  listing: Iterable<ObjectInfo>;
  format: Pick<TableFormat, "name" | "versionsPrefix" | "parseVersionKey" | "classify" | "isBookkeepingFile" | "removal">;
  /** The version file the decisions were made on (for the removal strategy's committedAfter). */
  base?: VersionFile;
  /** The decision for every live version the run read. */
  decisions: ReadonlyMap<number, VersionDecision>;
  kept: ReferenceSet;
  removed: ReferenceSet;
  safetyWindowMs: number;
  deleteUnverified: boolean;
  nowMillis: number;
  /** Keys an interrupted run's intent proves were committed (key → reason), like removed versions do. */
  proven?: ReadonlyMap<string, string>;
  /** Where full pages of the plan go (null: kept encoded in memory). */
  spill?: SpillArea | null;
}

/** Planned files a page at a time (spill.ts), in listing order. */
export type PlannedFiles = SpillList<PlannedFile>;

/** The files a report names one by one; the counts always cover every file. */
export const REPORTED_FILES_LIMIT = 10_000;

export interface FilePlan {
  /** The first REPORTED_FILES_LIMIT files deleted or kept-and-reported, in listing order: the report's list. */
  files: PlannedFile[];
  /** Every file deleted or kept-and-reported (the length of toDelete and reported together). */
  planned: number;
  /** Files to delete; removed versions' commit files go first, then the others in this order. */
  toDelete: PlannedFiles;
  /** Kept files worth a line in the report (unknown kinds, unreferenced but young). */
  reported: PlannedFiles;
  /**
   * "listing": toDelete and reported are subsequences of the listing, in its order, so a stage
   * walks them alongside it (the generic plan). "format": the order a format's own plan gave
   * (TableFormat.planRemoval: Delta deletes log files before the data they name), so a stage
   * looks files up by key (that plan holds its listing whole anyway).
   */
  order: "listing" | "format";
}

export function planFiles(input: FilePlanInput): FilePlan {
  const { committedAfter } = removalSteps(input.format.removal);
  const plan = emptyFilePlan(input.spill ?? null);
  const texts = new TextMemo();
  for (const object of input.listing) {
    const planned = planOne(object, input, committedAfter, texts);
    if (planned) addPlanned(plan, planned);
  }
  return plan;
}

export function emptyFilePlan(spill: SpillArea | null, order: FilePlan["order"] = "listing"): FilePlan {
  return { files: [], planned: 0, toDelete: plannedFiles(spill), reported: plannedFiles(spill), order };
}

export function addPlanned(plan: FilePlan, file: PlannedFile): void {
  if (plan.files.length < REPORTED_FILES_LIMIT) plan.files.push(file);
  plan.planned++;
  (file.action === "delete" ? plan.toDelete : plan.reported).push(file);
}

export function plannedFiles(spill: SpillArea | null): PlannedFiles {
  return new SpillList(PLANNED_CODEC, spill);
}

/** A page of planned files in columns; kinds, times and reasons repeat, so each text is stored once. */
interface PlannedPage {
  texts: string[];
  keys: string[];
  sizes: number[];
  /** Indexes into texts: kind, last modified, reason. */
  kinds: number[];
  modified: number[];
  reasons: number[];
  /** "d" delete, "k" keep, one letter a file. */
  actions: string;
  /** The commit file's version, -1 for other files. */
  versions: number[];
}

const PLANNED_CODEC: PageCodec<PlannedFile> = {
  encode(files) {
    const table = new TextTable();
    const page: PlannedPage = { texts: table.texts, keys: [], sizes: [], kinds: [], modified: [], reasons: [], actions: "", versions: [] };
    let actions = "";
    for (const file of files) {
      page.keys.push(file.key);
      page.sizes.push(file.size);
      page.kinds.push(table.of(file.kind));
      page.modified.push(table.of(file.lastModified));
      page.reasons.push(table.of(file.reason));
      actions += file.action === "delete" ? "d" : "k";
      page.versions.push(file.version ?? -1);
    }
    page.actions = actions;
    return encodeJson(page);
  },
  decode(bytes) {
    const page = decodeJson<PlannedPage>(bytes);
    const { texts } = page;
    return page.keys.map((key, i) => {
      const file: PlannedFile = {
        key,
        kind: texts[page.kinds[i]!] as PlannedKind,
        size: page.sizes[i]!,
        lastModified: texts[page.modified[i]!]!,
        action: page.actions[i] === "d" ? "delete" : "keep",
        reason: texts[page.reasons[i]!]!,
      };
      if (page.versions[i]! >= 0) file.version = page.versions[i]!;
      return file;
    });
  },
};

/**
 * Files written together share their modification time, and so their texts: one string for all
 * of them, not one each (a plan can hold a million files). Bounded: cleared when full.
 */
class TextMemo {
  private readonly texts = new Map<string, string>();
  private readonly times = new Map<number, string>();

  iso(millis: number): string {
    let text = this.times.get(millis);
    if (text === undefined) {
      if (this.times.size >= TEXT_MEMO_LIMIT) this.times.clear();
      text = new Date(millis).toISOString();
      this.times.set(millis, text);
    }
    return text;
  }

  /** The text `make` builds for `key`, made once per key. */
  text(key: string, make: () => string): string {
    let text = this.texts.get(key);
    if (text === undefined) {
      if (this.texts.size >= TEXT_MEMO_LIMIT) this.texts.clear();
      text = make();
      this.texts.set(key, text);
    }
    return text;
  }
}

const TEXT_MEMO_LIMIT = 4096;

function planOne(object: ObjectInfo, input: FilePlanInput, committedAfter: (key: string, base: VersionFile) => boolean, texts: TextMemo): PlannedFile | null {
  const { format, nowMillis } = input;
  // The time's text only for a file the plan holds: most listed files are kept by a version and planned no further.
  const keep = (kind: PlannedKind, reason: string): PlannedFile => plannedFile(object, texts, kind, "keep", reason);
  const remove = (kind: PlannedKind, reason: string): PlannedFile => plannedFile(object, texts, kind, "delete", reason);

  if (object.key.startsWith(LAKEWARDEN_PREFIX) || format.isBookkeepingFile(object.key)) return null;

  const version = format.parseVersionKey(object.key);
  if (version !== null) {
    const decision = input.decisions.get(version);
    // Not read by this run: committed after the run listed versions, so it is new and kept.
    if (!decision || decision.keep) return null;
    return { ...remove(format.classify(object.key) ?? "commit", `version ${version} removed: ${decision.reason}`), version };
  }

  const kind = format.classify(object.key);
  if (input.base && committedAfter(object.key, input.base)) {
    return keep(kind ?? "unknown", `a commit made after ${input.base.key}, which this run planned on: kept`);
  }
  if (kind === null || kind === "commit") {
    const where = object.key.startsWith(format.versionsPrefix) ? `in ${format.versionsPrefix} ` : "";
    return keep("unknown", `not a file ${format.name} cleanup knows ${where}(staging manifest, temp or foreign file): kept`);
  }
  if (input.kept.has(object.key)) return null;

  const provenByRemoved = input.removed.lookup(object.key);
  if (provenByRemoved) return remove(kind, `named only by removed ${describeVersions(provenByRemoved)}`);
  const provenByIntent = input.proven?.get(object.key);
  if (provenByIntent) return remove(kind, provenByIntent);

  const ageMillis = nowMillis - object.lastModified.getTime();
  const modifiedAt = texts.iso(object.lastModified.getTime());
  const modified = `last modified ${modifiedAt}`;
  const window = formatDuration(input.safetyWindowMs);
  if (ageMillis >= input.safetyWindowMs)
    return remove(
      kind,
      texts.text(`old ${modifiedAt}`, () => `unreferenced, ${modified}, older than the safety window ${window}`),
    );
  if (input.deleteUnverified)
    return remove(
      kind,
      texts.text(`unverified ${modifiedAt}`, () => `unreferenced, ${modified}, within the safety window ${window}, deleted because of --delete-unverified`),
    );
  return keep(
    kind,
    texts.text(`young ${modifiedAt}`, () => `unreferenced, ${modified}, within the safety window ${window}: may belong to a commit in progress`),
  );
}

function plannedFile(object: ObjectInfo, texts: TextMemo, kind: PlannedKind, action: PlannedFile["action"], reason: string): PlannedFile {
  return { key: object.key, size: object.size, lastModified: texts.iso(object.lastModified.getTime()), kind, action, reason };
}
