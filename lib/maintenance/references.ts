/**
 * The files a set of versions references, indexed for the two questions cleanup asks of a
 * listed key: "does any of these versions need it?" and "which versions named it?".
 * Index references are folders (paths ending in "/"): a key inside one is covered by it.
 */
import type { FileKind, ReferencedFile } from "../formats/table-format.ts";

/** Versions kept per path, for reasons; the count says how many there were in all. */
const VERSIONS_REMEMBERED = 3;

export interface Reference {
  path: string;
  kind: FileKind;
  /** Up to a few of the versions naming it, lowest first. */
  versions: number[];
  count: number;
}

/** A reference that would resolve outside the table root: never a key, never deleted. */
export interface OutsideReference {
  path: string;
  version: number;
}

export class ReferenceSet {
  private readonly files = new Map<string, Reference>();
  private readonly folders = new Map<string, Reference>();
  readonly outside: OutsideReference[] = [];

  add(version: number, file: ReferencedFile): void {
    if (unsafeReferenceReason(file.path) !== null) {
      this.outside.push({ path: file.path, version });
      return;
    }
    const map = file.path.endsWith("/") ? this.folders : this.files;
    const existing = map.get(file.path);
    if (!existing) {
      map.set(file.path, { path: file.path, kind: file.kind, versions: [version], count: 1 });
      return;
    }
    existing.count++;
    if (existing.versions.length < VERSIONS_REMEMBERED || version < existing.versions.at(-1)!) {
      existing.versions = [...existing.versions, version].sort((a, b) => a - b).slice(0, VERSIONS_REMEMBERED);
    }
  }

  addAll(version: number, files: readonly ReferencedFile[]): void {
    for (const file of files) this.add(version, file);
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
 * Why a referenced path is not a plain key under the table root, or null if it is one.
 * Formats already refuse such paths; this is the pipeline's own guard, so a format bug
 * can never turn into a delete outside the root.
 */
export function unsafeReferenceReason(path: string): string | null {
  if (path === "") return "is empty";
  if (path.startsWith("/")) return "is absolute";
  if (path.includes("\\")) return "contains a backslash";
  if (/^[a-z][a-z0-9+.-]*:/i.test(path)) return "is a URI";
  const segments = path.split("/");
  if (path.endsWith("/")) segments.pop();
  for (const segment of segments) {
    if (segment === "") return "has an empty segment";
    if (segment === "." || segment === "..") return `has a "${segment}" segment`;
  }
  return null;
}
