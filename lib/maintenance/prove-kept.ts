/**
 * Stage `prove_kept_state`, between the settled plan and the first write: proof that every
 * version the plan keeps can be read from what will remain. Never make a table worse: the
 * versions cleanup removes may be the only ones that still hold a table's rows, so before any of
 * them goes, the kept ones must be shown whole, not assumed.
 *
 *   1. the plan deletes no file a kept version needs (a format's own plan is checked, not trusted);
 *   2. every file a kept version needs exists (the run's listing, else a HEAD) and has the size
 *      its version recorded;
 *   3. whenever the run is about to delete or commit anything, the files kept versions are read
 *      through are whole by the format's own reading of them (TableFormat.proveFile): every
 *      commit, checkpoint (part), sidecar, manifest list and manifest decodes to its end. A data,
 *      deletion or index file whose version records its size was proven present and whole in
 *      length by step 2 with no request of its own; one whose version records no size (a Lance
 *      deletion file, a Delta deletion vector) is read, as every one is with `verifyData`, by the
 *      magic its file format ends with. Data files are immutable, written once under a unique
 *      name: what a same-size overwrite would take to slip through is not worth a request per
 *      file on every run (docs/cleanup.md, "What the proof reads"). A data file a removed version
 *      needs as well is never read: if it is damaged, that version is as broken as the kept one,
 *      so removing it loses nothing readable.
 *
 * Any problem stops the run before anything is written or deleted, with one line naming the file,
 * the versions that need it and the versions that are still whole. The post-delete check
 * (reference-check.ts) stays as the second line of defence.
 */
import type { FileReference, TableFormat } from "../formats/table-format.ts";
import { TableFormatError } from "../formats/errors.ts";
import { NotFoundError } from "../store/errors.ts";
import { TableChangedError } from "./errors.ts";
import type { ObjectInfo, ObjectStore } from "../store/object-store.ts";
import type { DeletePlan } from "./plan-deletes.ts";
import type { ProcessedManifests } from "./process-manifests.ts";
import { removalCommitDue } from "./removal-commit.ts";
import { ReferenceSet, describeVersions } from "./references.ts";
import type { Reference } from "./references.ts";

/** A kept version cannot be read from what the table holds: nothing was written or deleted. */
export class KeptStateError extends TableFormatError {
  readonly problems: readonly KeptFileProblem[];
  constructor(uri: string, message: string, problems: readonly KeptFileProblem[]) {
    super(uri, message);
    this.problems = problems;
  }
}

export interface KeptFileProblem {
  path: string;
  /** "version 12", "versions 3, 5 and 4 more". */
  versions: string;
  problem: string;
}

/** What the proof looked at, for the report. */
export interface KeptStateProof {
  /** Files and folders kept versions need, each looked up in the listing or by a HEAD. */
  filesChecked: number;
  /** Of those, looked up with a HEAD (not in the run's listing). */
  filesHeaded: number;
  /** Files read by the format's proof of their content (metadata always, data only kept versions need). */
  filesRead: number;
  /** Data, deletion and index files only kept versions need, proven by their listed size alone (not read). */
  filesProvenBySize: number;
  /** Why the content proof was skipped, when it was (null: it ran). */
  contentSkipped: string | null;
}

export interface ProveKeptOptions {
  /** Requests in flight at once (HEADs and content reads). */
  concurrency?: number;
  /** The deep proof: read every data, deletion and index file only kept versions need, sized or not. */
  verifyData?: boolean;
}

/** Requests in flight: what remains to read (metadata, files with no recorded size) is few enough to ask for at once, under the S3 client's 50 sockets. */
const DEFAULT_CONCURRENCY = 32;
/** Roles of the files a version is read through (as opposed to the data it reads). */
const METADATA_ROLES: ReadonlySet<string> = new Set(["commit", "checkpoint", "metadata", "sidecar", "manifest-list", "manifest"]);
const PROBLEMS_NAMED = 3;

export async function proveKeptState(store: ObjectStore, format: TableFormat, plan: DeletePlan, options: ProveKeptOptions = {}): Promise<KeptStateProof> {
  const { processed } = plan;
  const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
  const kept = keptReferences(processed);
  const versionFiles = new Set<string>();
  for (const [version, scanned] of processed.scan) if (scanned.round === 0 && processed.decisions.get(version)?.keep) versionFiles.add(scanned.file.key);
  const problems: KeptFileProblem[] = [];
  const add = (reference: Reference, problem: string): void => {
    problems.push({ path: reference.path, versions: describeVersions(reference), problem });
  };

  // 1. The plan against the kept set: a format's plan deleting what a kept version reads is a defect, never a delete.
  for (const file of plan.files.toDelete) {
    if (kept.has(file.key)) add(kept.lookup(file.key)!, `the plan would delete it (${file.reason})`);
  }
  if (problems.length > 0) {
    throw new KeptStateError(
      store.uri,
      `cleanup refused: its plan would delete ${countOf(problems.length, "file")} that kept versions need (${namedProblems(problems, 1)}); nothing was deleted. This is a defect in lakewarden: please report it with this line`,
      problems,
    );
  }

  // 2. Existence and size, from the listing; what it does not show is asked for.
  const { found, folders } = lookUpInListing(kept, plan.listing);
  const unlisted: Reference[] = [];
  for (const reference of kept.all()) {
    if (isFolder(reference)) {
      if (!folders.has(reference.path)) add(reference, "the folder holds no file");
    } else if (!found.has(reference.path)) unlisted.push(reference);
  }
  let filesHeaded = 0;
  const vanished: Reference[] = [];
  await inParallel(unlisted, concurrency, async (reference) => {
    filesHeaded++;
    try {
      found.set(reference.path, await store.head(reference.path));
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error;
      if (versionFiles.has(reference.path)) vanished.push(reference);
      else add(reference, "it does not exist");
    }
  });
  if (vanished.length > 0) {
    // The scan read these version files a moment ago: they moved (LanceDB renaming manifests) or
    // another cleaner removed them. A table in motion, not a broken one.
    const named = vanished
      .slice(0, PROBLEMS_NAMED)
      .map((reference) => `${reference.path} (${describeVersions(reference)})`)
      .join(", ");
    throw new TableChangedError(
      store.uri,
      `the version file(s) ${named} vanished or moved while cleanup ran (a writer renaming them, or another cleaner); nothing was deleted, run again`,
    );
  }
  for (const reference of kept.all()) {
    const info = found.get(reference.path);
    if (!info) continue;
    if (info.size === 0) add(reference, "it is empty (0 bytes)");
    else if (reference.size !== undefined && info.size !== reference.size) add(reference, sizeProblem(info.size, reference.size));
  }

  // 3. Content, for files only kept versions need, when the run is about to change the table.
  const changes = plan.files.toDelete.length > 0 || removalCommitDue(format, processed);
  const contentSkipped = problems.length > 0 ? "the files are missing or of the wrong size" : !changes ? "nothing to delete" : null;
  let filesRead = 0;
  let filesProvenBySize = 0;
  if (contentSkipped === null) {
    const readable: Reference[] = [];
    for (const reference of kept.all()) {
      if (isFolder(reference) || !found.has(reference.path)) continue;
      const read = contentRead(reference, processed, options.verifyData === true);
      if (read === "read") readable.push(reference);
      else if (read === "by size") filesProvenBySize++;
    }
    await inParallel(readable, concurrency, async (reference) => {
      filesRead++;
      const problem = await format.proveFile(store, fileReferenceOf(reference), found.get(reference.path)!);
      if (problem !== null) add(reference, problem);
    });
  }

  if (problems.length > 0) throw brokenStateError(store.uri, processed, problems);
  return { filesChecked: kept.size, filesHeaded, filesRead, filesProvenBySize, contentSkipped };
}

/**
 * How the content of a kept file (present, at the size its version records) is proven: metadata
 * is read, being what the versions are read through; a data file that a removed version names
 * too is not (removing that version loses nothing its damage had not); one whose size its
 * version records is proven by the size step 2 checked, unless the deep proof reads it.
 */
function contentRead(reference: Reference, processed: ProcessedManifests, verifyData: boolean): "read" | "by size" | "shared" {
  if (METADATA_ROLES.has(reference.kind)) return "read";
  if (processed.removed.has(reference.path)) return "shared";
  return verifyData || reference.size === undefined ? "read" : "by size";
}

/**
 * The files kept versions need, read in the run's first scan (a version committed since may name
 * files the listing could not show; it is never a candidate). Each kept version's own commit file
 * is among them. A format that planned its own removal says what each kept version keeps.
 */
function keptReferences(processed: ProcessedManifests): ReferenceSet {
  const set = new ReferenceSet();
  for (const [version, scanned] of processed.scan) {
    if (scanned.round !== 0 || !processed.decisions.get(version)?.keep) continue;
    set.add(version, { path: scanned.file.key, role: "commit", size: scanned.file.size });
    set.addAll(version, processed.keptByFormat?.get(version) ?? scanned.references);
  }
  return set;
}

/** The kept files the listing shows, and the kept folders it shows a file in: one walk of the listing. */
function lookUpInListing(kept: ReferenceSet, listing: Iterable<ObjectInfo>): { found: Map<string, ObjectInfo>; folders: Set<string> } {
  const found = new Map<string, ObjectInfo>();
  const folders = new Set<string>();
  const keptFolders = new Set<string>();
  for (const path of kept.folderPaths()) keptFolders.add(path);
  for (const object of listing) {
    const reference = kept.lookup(object.key);
    if (!reference) continue;
    // Keyed by the reference's own string, which every later look-up of the proof asks with (the same string: no compare).
    if (reference.path === object.key) found.set(reference.path, object);
    if (keptFolders.size === 0) continue;
    // A kept file may lie in a kept folder (a Lance index's listed files): the folder counts it too.
    for (let slash = object.key.indexOf("/"); slash !== -1 && slash < object.key.length - 1; slash = object.key.indexOf("/", slash + 1)) {
      const folder = object.key.slice(0, slash + 1);
      if (keptFolders.has(folder)) folders.add(folder);
    }
  }
  return { found, folders };
}

/** The one line: which versions are broken by which file, and which versions are still whole. */
function brokenStateError(uri: string, processed: ProcessedManifests, problems: readonly KeptFileProblem[]): KeptStateError {
  const broken = new Set(problems.map((problem) => problem.path));
  const latest = Math.max(...[...processed.decisions.keys()].filter((version) => processed.decisions.get(version)!.keep));
  const latestBroken = [...processed.scan.values()].some(
    (scanned) => scanned.file.version === latest && (broken.has(scanned.file.key) || referencesAny(processed, latest, broken)),
  );
  const whole = [...processed.scan.keys()].filter((version) => !broken.has(processed.scan.get(version)!.file.key) && !referencesAny(processed, version, broken));
  const what = latestBroken ? `the latest version (${latest}) cannot be read` : "a version cleanup keeps cannot be read";
  const still = whole.length > 0 ? `; versions that do not need ${problems.length === 1 ? "it" : "them"}: ${describeList(whole)}` : "";
  return new KeptStateError(uri, `cleanup refused: ${what}: ${namedProblems(problems)}; nothing was deleted${still}. Restore or repair the file, then run again`, problems);
}

function referencesAny(processed: ProcessedManifests, version: number, paths: ReadonlySet<string>): boolean {
  const references = processed.keptByFormat?.get(version) ?? processed.scan.get(version)?.references.list() ?? [];
  return references.some((reference) => paths.has(reference.path) || [...paths].some((path) => reference.path.endsWith("/") && path.startsWith(reference.path)));
}

function namedProblems(problems: readonly KeptFileProblem[], named = PROBLEMS_NAMED): string {
  const first = problems
    .slice(0, named)
    .map((p) => `${p.path} (${p.versions}): ${p.problem}`)
    .join("; ");
  const more = problems.length - named;
  return more > 0 ? `${first}; and ${countOf(more, "more")}` : first;
}

/** "3", "3 and 5", "1-4, 7 and 9-12": ascending versions in runs. */
export function describeList(versions: readonly number[]): string {
  const sorted = [...versions].sort((a, b) => a - b);
  const runs: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    runs.push(j === i ? String(sorted[i]) : j === i + 1 ? `${sorted[i]}, ${sorted[j]}` : `${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  return runs.length === 1 ? runs[0]! : `${runs.slice(0, -1).join(", ")} and ${runs.at(-1)}`;
}

function sizeProblem(actual: number, recorded: number): string {
  return actual < recorded
    ? `truncated: ${actual.toLocaleString("en-US")} of ${recorded.toLocaleString("en-US")} bytes`
    : `${actual.toLocaleString("en-US")} bytes where its version recorded ${recorded.toLocaleString("en-US")}`;
}

function countOf(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

function isFolder(reference: Reference): boolean {
  return reference.path.endsWith("/");
}

function fileReferenceOf(reference: Reference): FileReference {
  return reference.size !== undefined ? { path: reference.path, role: reference.kind, size: reference.size } : { path: reference.path, role: reference.kind };
}

async function inParallel<T>(items: readonly T[], concurrency: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, lane));
}
