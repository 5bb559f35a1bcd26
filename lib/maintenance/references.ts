/**
 * The files a set of versions references, indexed for the two questions cleanup asks of a
 * listed key: "does any of these versions need it?" and "which versions named it?".
 * Index references are folders (paths ending in "/"): a key inside one is covered by it.
 */
import type { FileReference, FileRole, UnresolvedReference } from "../formats/table-format.ts";
import { relativeKeyProblem } from "../model/table-path.ts";
import { VersionReferences } from "./version-references.ts";

/** Versions kept per path, for reasons; the count says how many there were in all. */
const VERSIONS_REMEMBERED = 3;

export interface Reference {
  path: string;
  kind: FileRole;
  /** Up to a few of the versions naming it, lowest first. */
  versions: number[];
  count: number;
  /** Bytes, as the first version naming it with a size recorded (undefined = unknown). */
  size?: number;
}

/** A path a version names that is not a key under the table root: never deleted. */
export interface OutsideReference {
  path: string;
  version: number;
  /** "outside": proven to lie outside the root; "unresolvable": cannot be placed (a kept one stops cleanup). */
  kind: UnresolvedReference["kind"];
  reason: string;
}

export class ReferenceSet {
  private readonly files = new Map<string, Reference>();
  private readonly folders = new Map<string, Reference>();
  readonly outside: OutsideReference[] = [];

  add(version: number, file: FileReference): void {
    const map = file.path.endsWith("/") ? this.folders : this.files;
    const existing = map.get(file.path);
    if (!existing) {
      // Formats resolve paths through the one validator; this re-check (once per path: a path
      // already held passed it) is the pipeline's own guard, so a format bug can never turn
      // into a delete outside the root.
      const problem = relativeKeyProblem(file.path);
      if (problem !== null) {
        this.outside.push({ path: file.path, version, kind: "unresolvable", reason: `the format gave a path that ${problem}` });
        return;
      }
      const reference: Reference = { path: file.path, kind: file.role, versions: [version], count: 1 };
      if (file.size !== undefined) reference.size = file.size;
      map.set(file.path, reference);
      return;
    }
    existing.count++;
    if (existing.size === undefined && file.size !== undefined) existing.size = file.size;
    rememberVersion(existing.versions, version);
  }

  addAll(version: number, files: readonly FileReference[] | VersionReferences, unresolved: readonly UnresolvedReference[] = []): void {
    // Indexed, not for-of: a cleanup adds every file of every version (~50K adds for 331
    // versions), mostly before the code is optimised, where a for-of allocates per step.
    if (files instanceof VersionReferences)
      files.forEach((file) => {
        this.add(version, file);
      });
    else for (let i = 0; i < files.length; i++) this.add(version, files[i]!);
    for (const reference of unresolved) this.outside.push({ path: reference.path, version, kind: reference.kind, reason: reference.reason });
  }

  /** Paths that could not be resolved to a key nor proven outside the root. */
  unresolvable(): OutsideReference[] {
    return this.outside.filter((reference) => reference.kind === "unresolvable");
  }

  /** The reference covering `key`: the file itself, or a referenced folder containing it. */
  lookup(key: string): Reference | undefined {
    const file = this.files.get(key);
    if (file) return file;
    for (let slash = key.indexOf("/"); slash !== -1 && slash < key.length - 1; slash = key.indexOf("/", slash + 1)) {
      const folder = this.folders.get(key.slice(0, slash + 1));
      if (folder) return folder;
    }
    return undefined;
  }

  /** Every file and folder reference. */
  *all(): Iterable<Reference> {
    yield* this.files.values();
    yield* this.folders.values();
  }

  get size(): number {
    return this.files.size + this.folders.size;
  }
}

/** "version 41", "versions 3, 5 and 7", "versions 3, 5, 7 and 4 more". */
export function describeVersions(reference: Pick<Reference, "versions" | "count">): string {
  const { versions, count } = reference;
  if (count === 1) return `version ${versions[0]}`;
  const more = count - versions.length;
  if (more > 0) return `versions ${versions.join(", ")} and ${more} more`;
  return `versions ${versions.slice(0, -1).join(", ")} and ${versions.at(-1)}`;
}

/**
 * Keeps `versions` the VERSIONS_REMEMBERED smallest seen, ascending, in place: a cleanup adds
 * every live file of every version (~100K adds for 331 versions), and a new sorted copy per add
 * was a visible share of its time.
 */
function rememberVersion(versions: number[], version: number): void {
  if (versions.length >= VERSIONS_REMEMBERED && version >= versions[versions.length - 1]!) return;
  let at = versions.length;
  while (at > 0 && versions[at - 1]! > version) at--;
  versions.splice(at, 0, version);
  if (versions.length > VERSIONS_REMEMBERED) versions.length = VERSIONS_REMEMBERED;
}
