/**
 * The files a set of versions references, indexed for the two questions cleanup asks of a
 * listed key: "does any of these versions need it?" and "which versions named it?".
 * Index references are folders (paths ending in "/"): a key inside one is covered by it.
 */
import type { FileReference, FileRole, UnresolvedReference } from "../formats/table-format.ts";
import { FILE_ROLES } from "../model/file-reference.ts";
import { relativeKeyProblem } from "../model/table-path.ts";
import { VersionReferences } from "./version-references.ts";
import type { ReferenceTable } from "./version-references.ts";

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

/**
 * Files a set of versions references. Paths met through a scan's ReferenceTable are counted in
 * columns indexed by the table's ids (a count, a role, a size and the first few versions: ~40
 * bytes a file), not in an object and a map entry each: a cleanup builds several sets over every
 * file a table names (kept, removed, the proofs'), 100,000 files each at 512 × 100,000 fragments.
 * Other paths (and every path of a set given no table) are held as before, one Reference each.
 * What the set answers is the same either way: by path, its first role, first size and versions.
 */
export class ReferenceSet {
  readonly outside: OutsideReference[] = [];
  private readonly files = new Map<string, Reference>();
  private readonly folders = new Map<string, Reference>();
  /** The table whose ids the columns are indexed by (the first one a VersionReferences brought). */
  private table: ReferenceTable | null = null;
  /** Per first id of a path: how many adds; -1: a folder, held in `folders`. */
  private counts = new Int32Array(0);
  private kinds = new Uint8Array(0);
  /** NaN: no size recorded yet. */
  private sizes = new Float64Array(0);
  /** VERSIONS_REMEMBERED per id, ascending; only the first min(count, VERSIONS_REMEMBERED) are set. */
  private versions = new Float64Array(0);
  /**
   * Role per index of `kinds`. Every set starts with the known roles: its array then has the same
   * elements kind from the start, and an add finds its role without the push, so the optimised
   * add code one set made still fits the next set (an empty array first deoptimised it).
   */
  private readonly roles: FileRole[] = [...FILE_ROLES];
  /** Files in the order first added (what `all()` yields): an id ≥ 0, or -1 - i for the i-th entry of `listed`. */
  private order = new Int32Array(64);
  private ordered = 0;
  private readonly listed: Reference[] = [];
  private counted = 0;
  /** The highest version added so far: a version below it starts no chain (see `chain`). */
  private highest = Number.NEGATIVE_INFINITY;
  /**
   * The last version added in order, when its runs started a chain: the next version whose first
   * runs are this one's (VersionReferences.baseRuns) counts the leading runs all of whose ids are
   * settled (`chainSettled` of them; see `settled`) as one block, not id by id. Per run index s,
   * `blocks[s]` is how many versions' runs [0, s) wait to be counted; cutBlocks counts them into
   * `counts` when a count is read or the chain moves on. A Lance scan's removed set: 49,840 adds
   * one by one became 1,387 (331 versions of up to ~300 fragments, each repeating the last).
   */
  private chain: VersionReferences | null = null;
  private chainSettled = 0;
  private blocks = new Int32Array(0);
  /** The highest s with blocks waiting (0: none). */
  private blockTop = 0;

  add(version: number, file: FileReference): void {
    if (version > this.highest) this.highest = version;
    const table = this.table;
    if (table !== null && !file.path.endsWith("/")) {
      const id = table.firstIdOf(file.path);
      if (id !== undefined && !this.files.has(file.path)) {
        this.ensureCapacity(table.size);
        this.addAt(version, id, file);
        return;
      }
    }
    this.addObject(version, file);
  }

  addAll(version: number, files: readonly FileReference[] | VersionReferences, unresolved: readonly UnresolvedReference[] = []): void {
    // Set first: only a version at or above every one added before it continues a chain.
    const inOrder = version >= this.highest;
    if (inOrder) this.highest = version;
    // Indexed, not for-of: a cleanup adds every file of every version (51 million adds at 512
    // versions of 100,000 fragments), mostly before the code is optimised.
    if (files instanceof VersionReferences) {
      // Paths held as objects before the table came stay objects (addAt looks there first).
      this.table ??= files.table;
      if (files.table === this.table) this.addRuns(version, files, inOrder);
      else
        files.forEach((file) => {
          this.add(version, file);
        });
    } else for (let i = 0; i < files.length; i++) this.add(version, files[i]!);
    for (const reference of unresolved) this.outside.push({ path: reference.path, version, kind: reference.kind, reason: reference.reason });
  }

  /** Paths that could not be resolved to a key nor proven outside the root. */
  unresolvable(): OutsideReference[] {
    return this.outside.filter((reference) => reference.kind === "unresolvable");
  }

  /** Whether a reference covers `key` (lookup's question without its answer: no Reference made, for the stages that ask it of every listed or deleted key). */
  has(key: string): boolean {
    const id = this.table?.firstIdOf(key);
    if (id !== undefined && id < this.counts.length && this.counts[id]! > 0) return true;
    if (this.files.has(key)) return true;
    if (this.folders.size === 0) return false;
    return this.lookup(key) !== undefined;
  }

  /** The reference covering `key`: the file itself, or a referenced folder containing it. */
  lookup(key: string): Reference | undefined {
    const id = this.table?.firstIdOf(key);
    if (id !== undefined && id < this.counts.length && this.counts[id]! > 0) return this.referenceAt(id);
    const file = this.files.get(key);
    if (file) return file;
    if (this.folders.size === 0) return undefined;
    for (let slash = key.indexOf("/"); slash !== -1 && slash < key.length - 1; slash = key.indexOf("/", slash + 1)) {
      const folder = this.folders.get(key.slice(0, slash + 1));
      if (folder) return folder;
    }
    return undefined;
  }

  /** Every file reference in the order first added, then every folder. */
  *all(): Iterable<Reference> {
    for (let i = 0; i < this.ordered; i++) {
      const at = this.order[i]!;
      yield at >= 0 ? this.referenceAt(at) : this.listed[-1 - at]!;
    }
    yield* this.folders.values();
  }

  /** The paths all() yields, in its order, without a Reference made for each (lookup gives one). */
  *paths(): Iterable<string> {
    for (let i = 0; i < this.ordered; i++) {
      const at = this.order[i]!;
      yield at >= 0 ? this.table!.at(at).path : this.listed[-1 - at]!.path;
    }
    yield* this.folders.keys();
  }

  /** The referenced folders' paths (each ending in "/"). */
  folderPaths(): Iterable<string> {
    return this.folders.keys();
  }

  get size(): number {
    return this.counted + this.files.size + this.folders.size;
  }

  private addRuns(version: number, references: VersionReferences, inOrder: boolean): void {
    this.ensureCapacity(references.table.size);
    const chain = this.chain;
    // Every chain is of this set's table: addAll brings runs here only from it.
    const shared = inOrder && chain !== null && references.serial === chain.serial + 1 ? references.baseRuns : 0;
    // The chain's runs past those this version shares are not its runs: what waits on them is counted now.
    this.cutBlocks(shared);
    const block = Math.min(this.chainSettled, shared);
    if (block > 0) this.addBlock(block);
    this.walkRuns(version, references, block);
    this.chain = inOrder && references.serial > 0 ? references : null;
    this.chainSettled = this.chain ? this.settledRuns(references, block) : 0;
  }

  /** The runs of `references` from run `fromRun` on, id by id. */
  private walkRuns(version: number, references: VersionReferences, fromRun: number): void {
    const table = references.table;
    // The runs walked here, not through a callback: a callback's caller was optimised with it inlined, then
    // thrown away at its next call (a wrong-map deopt), compiled for nothing in a cold process.
    const runs = references.idRuns;
    for (let r = fromRun * 2; r < runs.length; r += 2) {
      const end = runs[r]! + runs[r + 1]!;
      for (let id = runs[r]!; id < end; id++) this.addId(version, table, id);
    }
  }

  /** How many leading runs of `references` hold settled ids only, the first `known` of them known to. */
  private settledRuns(references: VersionReferences, known: number): number {
    const { idRuns: runs, table } = references;
    let settled = known;
    for (; settled * 2 < runs.length; settled++) {
      const end = runs[settled * 2]! + runs[settled * 2 + 1]!;
      for (let id = runs[settled * 2]!; id < end; id++) if (!this.settled(table.firstId(id))) return settled;
    }
    return settled;
  }

  /** One more version's chain runs [0, runCount) to count. */
  private addBlock(runCount: number): void {
    if (runCount >= this.blocks.length) {
      const grown = new Int32Array(Math.max(runCount + 1, this.blocks.length * 2, 64));
      grown.set(this.blocks);
      this.blocks = grown;
    }
    this.blocks[runCount]!++;
    if (runCount > this.blockTop) this.blockTop = runCount;
  }

  /**
   * Counts, per id, what the blocks wait to count of the chain's runs from run `keep` on; the
   * blocks reaching past it then reach to it (those runs are the next version's too).
   */
  private cutBlocks(keep: number): void {
    if (this.blockTop <= keep) return;
    const { idRuns: runs, table } = this.chain!;
    let covering = 0;
    for (let top = this.blockTop; top > keep; top--) {
      // Run top - 1 is in every block of top runs or more.
      covering += this.blocks[top]!;
      this.blocks[top] = 0;
      const end = runs[(top - 1) * 2]! + runs[(top - 1) * 2 + 1]!;
      for (let id = runs[(top - 1) * 2]!; id < end; id++) this.counts[table.firstId(id)]! += covering;
    }
    if (keep > 0) this.blocks[keep]! += covering;
    this.blockTop = keep;
  }

  /** One add of the reference with table id `id`. */
  private addId(version: number, table: ReferenceTable, id: number): void {
    const first = table.firstId(id);
    const count = this.counts[first]!;
    const size = table.at(id).size;
    if (count > 0) this.addAgain(version, first, count, size);
    else this.addAt(version, first, table.at(id));
  }

  /**
   * Whether further adds of an id whose path's first id is `first` (the id just added) change
   * nothing but the count, for any version at or above the highest added: a count held (not an
   * object, not refused) and the versions remembered full (each new one is at or above them). Its
   * size is no condition: the add just made recorded the id's size if the path had none. Once
   * true it stays true: counts only grow.
   */
  private settled(first: number): boolean {
    return this.counts[first]! >= VERSIONS_REMEMBERED;
  }

  /** An add of `file` under the first id of its path. */
  private addAt(version: number, first: number, file: FileReference): void {
    const count = this.counts[first]!;
    if (count > 0) {
      this.addAgain(version, first, count, file.size);
      return;
    }
    const table = this.table!;
    if (count < 0 || file.path.endsWith("/") || this.files.has(file.path)) {
      this.counts[first] = -1;
      this.addObject(version, file);
      return;
    }
    // The pipeline's own guard (once per path for the scan), so a format bug can never turn into a delete outside the root.
    const problem = table.keyProblem(first);
    if (problem !== null) {
      this.outside.push({ path: file.path, version, kind: "unresolvable", reason: `the format gave a path that ${problem}` });
      return;
    }
    this.counts[first] = 1;
    this.kinds[first] = this.roleIndex(file.role);
    this.sizes[first] = file.size ?? Number.NaN;
    this.versions[first * VERSIONS_REMEMBERED] = version;
    this.pushOrder(first);
    this.counted++;
  }

  private addAgain(version: number, first: number, count: number, size: number | undefined): void {
    this.counts[first] = count + 1;
    if (size !== undefined && Number.isNaN(this.sizes[first]!)) this.sizes[first] = size;
    // The VERSIONS_REMEMBERED smallest, ascending, in place (a scan adds in version order: mostly a compare).
    const base = first * VERSIONS_REMEMBERED;
    const held = Math.min(count, VERSIONS_REMEMBERED);
    const versions = this.versions;
    if (held === VERSIONS_REMEMBERED && version >= versions[base + held - 1]!) return;
    let at = held < VERSIONS_REMEMBERED ? held : held - 1;
    while (at > 0 && versions[base + at - 1]! > version) {
      versions[base + at] = versions[base + at - 1]!;
      at--;
    }
    versions[base + at] = version;
  }

  private addObject(version: number, file: FileReference): void {
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
      if (map === this.files) {
        this.listed.push(reference);
        this.pushOrder(-this.listed.length);
      }
      return;
    }
    existing.count++;
    if (existing.size === undefined && file.size !== undefined) existing.size = file.size;
    rememberVersion(existing.versions, version);
  }

  private pushOrder(entry: number): void {
    if (this.ordered === this.order.length) {
      const grown = new Int32Array(this.order.length * 2);
      grown.set(this.order);
      this.order = grown;
    }
    this.order[this.ordered++] = entry;
  }

  /** The Reference of a counted path, made when asked (the set holds columns, not objects). */
  private referenceAt(first: number): Reference {
    // The counts the chain's blocks hold back, in before one is read.
    this.cutBlocks(0);
    const count = this.counts[first]!;
    const held = Math.min(count, VERSIONS_REMEMBERED);
    const versions: number[] = [];
    for (let i = 0; i < held; i++) versions.push(this.versions[first * VERSIONS_REMEMBERED + i]!);
    const reference: Reference = { path: this.table!.at(first).path, kind: this.roles[this.kinds[first]!]!, versions, count };
    const size = this.sizes[first]!;
    if (!Number.isNaN(size)) reference.size = size;
    return reference;
  }

  private roleIndex(role: FileRole): number {
    let index = this.roles.indexOf(role);
    if (index === -1) {
      if (this.roles.length === 255) throw new Error(`more than 255 file roles in one reference set (${role})`);
      index = this.roles.push(role) - 1;
    }
    return index;
  }

  private ensureCapacity(ids: number): void {
    if (ids <= this.counts.length) return;
    const capacity = Math.max(ids, this.counts.length * 2, 1024);
    const grow = <A extends Int32Array | Uint8Array | Float64Array>(from: A, make: (length: number) => A, per = 1): A => {
      const grown = make(capacity * per);
      grown.set(from);
      return grown;
    };
    this.counts = grow(this.counts, (n) => new Int32Array(n));
    this.kinds = grow(this.kinds, (n) => new Uint8Array(n));
    this.sizes = grow(this.sizes, (n) => new Float64Array(n));
    this.versions = grow(this.versions, (n) => new Float64Array(n), VERSIONS_REMEMBERED);
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
