/**
 * The files each version read names, held once per file: a table of the distinct references a
 * scan met, and per version the runs of table ids its list is made of, in its own order.
 *
 * A cleanup decides which versions go only after it has read them all, so what every version
 * names stays in memory until then. As one array a version that was versions × files (512
 * versions of a 100,000-fragment Lance table: 51 million entries, 410 MB); consecutive versions
 * name mostly the same files in the same order, so a version's ids fall in a few runs and what
 * is held is a cost per file. Reading a version back yields the same references, in the same
 * order, as the format gave (equal by path, role and size).
 */
import type { FileReference, ReferenceSequence } from "../model/file-reference.ts";
import { relativeKeyProblem } from "../model/table-path.ts";

/** Every distinct reference a scan met, by id in the order first met. */
export class ReferenceTable {
  private readonly references: FileReference[] = [];
  /** The first id of each path. */
  private readonly idByPath = new Map<string, number>();
  /** The next id with the same path but another role or size (rare: a later version re-describes a file). */
  private readonly variants = new Map<number, number>();
  /** A variant's first id: the id of its path's first entry. */
  private readonly firstOfVariant = new Map<number, number>();
  /** Per id: 0 not checked yet, 1 a key under the root, 2 not (its problem in `problems`). */
  private checked = new Uint8Array(1024);
  private readonly problems = new Map<number, string>();
  /** The list encoded last and its ids, place by place (see encode); let go by `endScan`. */
  private lastList: readonly FileReference[] = [];
  private lastIds = new Int32Array(0);
  /** The sequence encoded last (see encodeSequence): its chunks, how many it held, its runs; let go by `endScan`. */
  private lastChunks: ReferenceSequence["chunks"] | null = null;
  private lastCount = 0;
  private lastRuns: BuiltRuns = { runs: [], ends: [] };
  /** How many VersionReferences encodeSequence made: the serial of the next one. */
  private encoded = 0;
  /** Where each chunk of `lastChunks` starts in a version's list, known for the first `offsetsKnown` + 1. */
  private offsets = new Int32Array(1);
  private offsetsKnown = 0;
  /** The path firstIdOf was asked for last, and its answer: the stages ask several sets (kept, removed) about one listed key in a row. */
  private askedPath: string | null = null;
  private askedId: number | undefined = undefined;

  get size(): number {
    return this.references.length;
  }

  at(id: number): FileReference {
    return this.references[id]!;
  }

  /** The id of the first entry of `path` (the one every entry of the path is counted under), if met. */
  firstIdOf(path: string): number | undefined {
    if (path === this.askedPath) return this.askedId;
    const id = this.idByPath.get(path);
    this.askedPath = path;
    this.askedId = id;
    return id;
  }

  /** The first id of the path of `id`: `id` itself, unless it is a variant. */
  firstId(id: number): number {
    return this.firstOfVariant.size === 0 ? id : (this.firstOfVariant.get(id) ?? id);
  }

  /**
   * Why the path of `id` is not a key under the table root (relativeKeyProblem), or null; checked
   * once per path for the whole scan, not once per set and path.
   */
  keyProblem(id: number): string | null {
    if (id >= this.checked.length) {
      const grown = new Uint8Array(Math.max(this.checked.length * 2, id + 1));
      grown.set(this.checked);
      this.checked = grown;
    }
    const state = this.checked[id]!;
    if (state === 1) return null;
    if (state === 2) return this.problems.get(id)!;
    const problem = relativeKeyProblem(this.references[id]!.path);
    this.checked[id] = problem === null ? 1 : 2;
    if (problem !== null) this.problems.set(id, problem);
    return problem;
  }

  /** `list` as runs of ids: the version's references, held by the table. */
  encode(list: readonly FileReference[]): VersionReferences {
    const runs: number[] = [];
    const ids = new Int32Array(list.length);
    const { lastList, lastIds } = this;
    let start = -1;
    let length = 0;
    for (let i = 0; i < list.length; i++) {
      const reference = list[i]!;
      // The object the last list held at this place has the id it had then (a format that shares
      // its objects between versions: no compare at all); then the next id of the current run
      // (consecutive versions mostly repeat the last one's list); then the path's.
      const next = start + length;
      const id =
        i < lastList.length && lastList[i] === reference
          ? lastIds[i]!
          : length > 0 && next < this.references.length && sameReference(this.references[next]!, reference)
            ? next
            : this.idOf(reference);
      ids[i] = id;
      if (length > 0 && id === next) {
        length++;
        continue;
      }
      if (length > 0) runs.push(start, length);
      start = id;
      length = 1;
    }
    if (length > 0) runs.push(start, length);
    this.lastList = list;
    this.lastIds = ids;
    return new VersionReferences(this, Int32Array.from(runs), list.length);
  }

  /**
   * `sequence` as runs of ids, its list never made: the chunks it shares with the sequence encoded
   * last (the same chunk objects at the same places: a prefix of the same `chunks`, whose first
   * entries never change, or of another array) take that one's runs, cut where they end; only the
   * others are walked.
   */
  encodeSequence(sequence: ReferenceSequence): VersionReferences {
    const { chunks, count } = sequence;
    const runs = new RunBuilder();
    let baseRuns = 0;
    // The chunks this version shares with the last one: all of the shorter when it is the same array; else
    // those at the same places (versions read out of order: the next one started an array of its own).
    let shared = 0;
    const last = this.lastChunks;
    if (last !== null) {
      const most = Math.min(count, this.lastCount);
      if (last === chunks) shared = most;
      else while (shared < most && chunks[shared] === last[shared]) shared++;
      baseRuns = runs.startWithPrefixOf(this.lastRuns, this.offsets[shared]!);
    }
    if (last !== chunks) {
      this.lastChunks = chunks;
      // Where the chunks start is known as far as they are the last array's.
      this.offsetsKnown = shared;
    }
    if (this.offsets.length < count + 1) {
      const grown = new Int32Array(Math.max(count + 1, this.offsets.length * 2));
      grown.set(this.offsets.subarray(0, this.offsetsKnown + 1));
      this.offsets = grown;
    }
    for (let c = shared; c < count; c++) {
      const references = chunks[c]!.references;
      for (let r = 0; r < references.length; r++) runs.add(this.nextId(runs, references[r]!));
      if (c >= this.offsetsKnown) {
        this.offsets[c + 1] = this.offsets[c]! + references.length;
        this.offsetsKnown = c + 1;
      }
    }
    for (const reference of sequence.extra) runs.add(this.nextId(runs, reference));
    this.lastCount = count;
    this.lastRuns = runs.finish();
    // A plain list encoded next is not compared with this one's (never made) list.
    this.lastList = [];
    // The runs taken whole are the first runs of the version encoded just before: its serial is this one's less one.
    this.encoded++;
    return new VersionReferences(this, Int32Array.from(this.lastRuns.runs), runs.count, { serial: this.encoded, baseRuns });
  }

  /** The next id of the run being built when `reference` continues it (consecutive versions mostly repeat the last one's list), else the path's. */
  private nextId(runs: RunBuilder, reference: FileReference): number {
    const next = runs.next();
    return next >= 0 && next < this.references.length && sameReference(this.references[next]!, reference) ? next : this.idOf(reference);
  }

  /** A scan's reads are done: the last list (a whole version's references, the format's objects) is not held past it. */
  endScan(): void {
    this.lastList = [];
    this.lastIds = new Int32Array(0);
    this.lastChunks = null;
    this.lastRuns = { runs: [], ends: [] };
    this.offsetsKnown = 0;
  }

  private idOf(reference: FileReference): number {
    let id = this.idByPath.get(reference.path);
    if (id === undefined) {
      id = this.push(reference);
      this.idByPath.set(this.references[id]!.path, id);
      // A path asked for before it was met has an id now.
      if (reference.path === this.askedPath) this.askedPath = null;
      return id;
    }
    for (;;) {
      if (sameReference(this.references[id]!, reference)) return id;
      const variant = this.variants.get(id);
      if (variant === undefined) {
        const fresh = this.push(reference);
        this.variants.set(id, fresh);
        this.firstOfVariant.set(fresh, this.firstOfVariant.get(id) ?? id);
        return fresh;
      }
      id = variant;
    }
  }

  private push(reference: FileReference): number {
    // A copy with only the fields the pipeline reads: the format's object may carry more.
    const path = flattened(reference.path);
    this.references.push(reference.size !== undefined ? { path, role: reference.role, size: reference.size } : { path, role: reference.role });
    return this.references.length - 1;
  }
}

/**
 * Runs of ids, built id by id after a prefix taken whole: a run grows while the next id follows it.
 * Plain arrays, not typed ones: one per version, short-lived, and a typed array's own buffer made
 * the cleanup benchmark's old generation grow into a full collection (issue 27).
 */
class RunBuilder {
  /** Closed runs as (start, length) pairs, and where each ends in the list. */
  private runs: number[] = [];
  private ends: number[] = [];
  private start = -1;
  private length = 0;
  /** How many ids were added. */
  count = 0;

  /** The id that would continue the current run, or -1 before the first. */
  next(): number {
    return this.length > 0 ? this.start + this.length : -1;
  }

  add(id: number): void {
    if (this.length > 0 && id === this.start + this.length) {
      this.length++;
      this.count++;
      return;
    }
    this.close();
    this.start = id;
    this.length = 1;
    this.count++;
  }

  /**
   * Starts with the ids of the first `length` places of another version's runs (`ends` as
   * `finish` gave them): the runs before the cut copied whole, not walked (a version of a table
   * that grew one fragment a commit is a run per fragment), the one it cuts left open. Returns how
   * many runs were copied whole.
   */
  startWithPrefixOf(built: BuiltRuns, length: number): number {
    if (length <= 0) return 0;
    const { runs, ends } = built;
    let low = 0;
    let high = ends.length - 1;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (ends[middle]! >= length) high = middle;
      else low = middle + 1;
    }
    this.runs = runs.slice(0, low * 2);
    this.ends = ends.slice(0, low);
    const before = low > 0 ? ends[low - 1]! : 0;
    this.start = runs[low * 2]!;
    this.length = length - before;
    this.count = length;
    return low;
  }

  finish(): BuiltRuns {
    this.close();
    return { runs: this.runs, ends: this.ends };
  }

  /** Closes the open run, which ends where everything added so far does. */
  private close(): void {
    if (this.length === 0) return;
    this.runs.push(this.start, this.length);
    this.ends.push(this.count);
    this.length = 0;
  }
}

/** A version's runs of ids as (start, length) pairs, and where each run ends in its list. */
interface BuiltRuns {
  runs: number[];
  ends: number[];
}

/** One version's references: runs of ids into its scan's table. */
export class VersionReferences {
  /** The table the ids point into (a scan's later reads add to the same one). */
  readonly table: ReferenceTable;
  /** Runs of ids as (start, length) pairs, in order: for a reader that counts ids (references.ts) rather than references. */
  readonly idRuns: Int32Array;
  /** How many references the version names. */
  readonly length: number;
  /**
   * Which of its table's encodeSequence calls made it (from 1; 0: encode, a plain list), and how many
   * of its first runs are those of the version made just before it (serial - 1), the same ids:
   * consecutive versions of a table repeat the last one's fragments, then add some. A reader that
   * counts versions per id (ReferenceSet) takes those runs as one block.
   */
  readonly serial: number;
  readonly baseRuns: number;

  constructor(table: ReferenceTable, runs: Int32Array, length: number, made: { serial: number; baseRuns: number } = { serial: 0, baseRuns: 0 }) {
    this.table = table;
    this.idRuns = runs;
    this.length = length;
    this.serial = made.serial;
    this.baseRuns = made.baseRuns;
  }

  /** How many runs of ids hold the version (its memory, beside the table's per-file entries). */
  get runCount(): number {
    return this.idRuns.length / 2;
  }

  /** Indexed runs, not an iterator: a cleanup walks every reference of every version. */
  forEach(visit: (reference: FileReference) => void): void {
    const { idRuns: runs, table } = this;
    for (let r = 0; r < runs.length; r += 2) {
      const end = runs[r]! + runs[r + 1]!;
      for (let id = runs[r]!; id < end; id++) visit(table.at(id));
    }
  }

  /** The references as an array, in the version's order (for a caller that needs one, one version at a time). */
  list(): FileReference[] {
    const list = new Array<FileReference>(this.length);
    let at = 0;
    this.forEach((reference) => {
      list[at++] = reference;
    });
    return list;
  }
}

/**
 * `text`, its characters made one flat run in place. A format builds a path by joining its parts
 * ("data/" + a file's name), which V8 holds as a rope; a map keyed by ropes compares each look-up
 * character by character through them, and the stages look up every listed key several times:
 * 2 to 5 times slower than flat keys at 100,000 paths. Converting it to a number flattens it.
 */
function flattened(text: string): string {
  void Number(text);
  return text;
}

function sameReference(known: FileReference, reference: FileReference): boolean {
  return known === reference || (known.path === reference.path && known.role === reference.role && known.size === reference.size);
}
