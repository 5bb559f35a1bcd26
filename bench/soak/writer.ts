/**
 * The LanceDB writer of the soak: commits in a loop, choosing each step at random (seeded),
 * and records in the history what every committed version holds, computed from its own model
 * of the rows (ids), never read back from the table. Tags and branches are made only from the
 * version it has just committed: a ref to an older version made while a cleanup is between
 * its last look at the refs and its deletes is a race no cleaner can close (Lance's neither).
 */
import * as lancedb from "@lancedb/lancedb";
import { Field, Float64, Int32, Schema, Utf8 } from "apache-arrow";
import type { Content } from "./history.ts";
import type { Random, SoakHistory } from "./history.ts";

export type WriterStep = "append" | "delete" | "update" | "overwrite" | "compact" | "createIndex" | "dropIndex" | "tag" | "untag" | "branch" | "unbranch";

const STEP_WEIGHTS: Record<WriterStep, number> = {
  append: 34,
  delete: 16,
  update: 7,
  overwrite: 7,
  compact: 4,
  createIndex: 6,
  dropIndex: 3,
  tag: 8,
  untag: 5,
  branch: 3,
  unbranch: 2,
};

const MAX_ROWS = 300;
const MAX_TAGS = 4;
const MAX_BRANCHES = 2;
/** Ids of rows appended on branches, far from main's. */
const BRANCH_ID_BASE = 1_000_000_000;

export interface WriterStats {
  steps: Record<WriterStep, number>;
  mainCommits: number;
  branchCommits: number;
  /** Steps LanceDB refused, by message (the model is re-read from the table after each). */
  errors: Map<string, number>;
  resyncs: number;
}

export interface WriterOptions {
  dbUri: string;
  storageOptions?: Record<string, string>;
  history: SoakHistory;
  random: Random;
  /** Called after every commit on main (the head follower listens). */
  onCommit: (version: number) => void;
  shouldStop: () => boolean;
}

const SCHEMA = new Schema([new Field("id", new Int32(), false), new Field("name", new Utf8(), true), new Field("score", new Float64(), true)]);

function rowsFor(ids: readonly number[], tag: string): lancedb.Data {
  return lancedb.makeArrowTable(
    ids.map((id) => ({ id, name: `${tag}-${id}`, score: id / 2 })),
    { schema: SCHEMA },
  );
}

function contentOfIds(ids: Iterable<number>): Content {
  let rows = 0;
  let idSum = 0;
  for (const id of ids) {
    rows++;
    idSum += id;
  }
  return { rows, idSum };
}

/**
 * LanceDB's message, grouped by kind: without the table's location, object names, numbers
 * and the Rust source locations it appends.
 */
function errorKind(message: string): string {
  return message
    .split("\n")[0]!
    .replace(/, \/\S+\.rs:\d+:\d+.*$/, "")
    .replace(/(?:[a-z0-9+]+:\/\/)?\/?(?:[\w.-]+\/)+[\w.-]+/gi, "<path>")
    .replace(/\d+/g, "N")
    .slice(0, 200);
}

/** A delete predicate LanceDB evaluates, and the same test in JS for the model. */
function deletePredicate(random: Random, ids: ReadonlySet<number>): { sql: string; matches: (id: number) => boolean } {
  if (random.next() < 0.7) {
    const m = random.int(3, 9);
    const r = random.int(0, m - 1);
    return { sql: `id % ${m} = ${r}`, matches: (id) => id % m === r };
  }
  const sorted = [...ids].sort((a, b) => a - b);
  const below = sorted[Math.floor(sorted.length / 3)] ?? 0;
  return { sql: `id < ${below}`, matches: (id) => id < below };
}

export class SoakWriter {
  readonly stats: WriterStats = {
    steps: Object.fromEntries(Object.keys(STEP_WEIGHTS).map((k) => [k, 0])) as Record<WriterStep, number>,
    mainCommits: 0,
    branchCommits: 0,
    errors: new Map(),
    resyncs: 0,
  };
  private readonly options: WriterOptions;
  private db!: lancedb.Connection;
  private table!: lancedb.Table;
  private ids = new Set<number>();
  private nextId = 0;
  private nextBranchId = BRANCH_ID_BASE;
  private refCounter = 0;

  constructor(options: WriterOptions) {
    this.options = options;
  }

  /** Creates the table (version 1) with a few rows. */
  async create(): Promise<void> {
    this.db = await lancedb.connect(this.options.dbUri, this.options.storageOptions ? { storageOptions: this.options.storageOptions } : {});
    const first = this.newIds(20);
    this.table = await this.db.createTable("t", rowsFor(first, "row"));
    for (const id of first) this.ids.add(id);
    await this.recordSince(0);
  }

  async run(): Promise<void> {
    const { random, shouldStop } = this.options;
    while (!shouldStop()) {
      const step = this.ids.size > MAX_ROWS ? random.pick<WriterStep>(["overwrite", "delete"]) : random.weighted(STEP_WEIGHTS);
      this.stats.steps[step]++;
      const before = this.options.history.latest;
      try {
        await this.apply(step);
      } catch (error) {
        const message = `${step}: ${errorKind((error as Error).message)}`;
        this.stats.errors.set(message, (this.stats.errors.get(message) ?? 0) + 1);
        await this.resync(before);
      }
      await new Promise((resolve) => setTimeout(resolve, random.int(5, 60)));
    }
  }

  close(): void {
    this.table?.close();
    this.db?.close();
  }

  private newIds(count: number): number[] {
    const ids = Array.from({ length: count }, (_, i) => this.nextId + i);
    this.nextId += count;
    return ids;
  }

  /** Records every main version after `previous` up to the handle's, with the model's rows. */
  private async recordSince(previous: number): Promise<void> {
    const version = await this.table.version();
    const content = contentOfIds(this.ids);
    for (let v = Math.max(previous + 1, 1); v <= version; v++) {
      this.options.history.recordMain(v, content);
      this.stats.mainCommits++;
    }
    if (version > previous) this.options.onCommit(version);
  }

  private async apply(step: WriterStep): Promise<void> {
    const { history, random } = this.options;
    const before = history.latest;
    switch (step) {
      case "append": {
        const ids = this.newIds(random.int(3, 20));
        await this.table.add(rowsFor(ids, "row"));
        for (const id of ids) this.ids.add(id);
        break;
      }
      case "delete": {
        if (this.ids.size === 0) return this.apply("append");
        const predicate = deletePredicate(random, this.ids);
        await this.table.delete(predicate.sql);
        for (const id of [...this.ids]) if (predicate.matches(id)) this.ids.delete(id);
        break;
      }
      case "update": {
        if (this.ids.size === 0) return this.apply("append");
        const id = random.pick([...this.ids]);
        await this.table.update({ where: `id = ${id}`, valuesSql: { name: `'updated-${history.latest}'` } });
        break;
      }
      case "overwrite": {
        const ids = this.newIds(random.int(5, 30));
        await this.table.add(rowsFor(ids, "row"), { mode: "overwrite" });
        this.ids = new Set(ids);
        break;
      }
      case "compact":
        // Compaction (and index optimisation) commits; its prune step is given a cutoff that
        // matches nothing, so LanceDB's own cleanup removes no version while lakewarden's runs.
        await this.table.optimize({ cleanupOlderThan: new Date(0) });
        break;
      case "createIndex":
        await this.table.createIndex("id", { config: lancedb.Index.btree(), replace: true });
        break;
      case "dropIndex": {
        const [index] = await this.table.listIndices();
        if (!index) return this.apply("createIndex");
        await this.table.dropIndex(index.name);
        break;
      }
      case "tag": {
        // The version just committed: at or above the latest any running cleanup started from.
        const name = `soak-tag-${++this.refCounter}`;
        await (await this.table.tags()).create(name, before);
        history.tags.set(name, before);
        if (history.tags.size > MAX_TAGS) await this.untag([...history.tags.keys()][0]!);
        return;
      }
      case "untag": {
        if (history.tags.size === 0) return;
        await this.untag(random.pick([...history.tags.keys()]));
        return;
      }
      case "branch":
        await this.branch(before);
        if (history.branches.size > MAX_BRANCHES) await this.unbranch([...history.branches.keys()][0]!);
        return;
      case "unbranch":
        if (history.branches.size === 0) return;
        await this.unbranch(random.pick([...history.branches.keys()]));
        return;
    }
    await this.recordSince(before);
  }

  private async untag(name: string): Promise<void> {
    // Forget it first: a check running meanwhile must not expect it.
    this.options.history.tags.delete(name);
    await (await this.table.tags()).delete(name);
  }

  /** A branch from the version just committed, with one to three commits of its own. */
  private async branch(from: number): Promise<void> {
    const { history, random } = this.options;
    const name = `soak-branch-${++this.refCounter}`;
    const handle = await (await this.table.branches()).create(name, "main", from);
    try {
      const record = { name, parentVersion: from, versions: new Map<number, Content>() };
      let ids = new Set(this.ids);
      record.versions.set(await handle.version(), contentOfIds(ids));
      history.branches.set(name, record);
      for (let i = random.int(1, 3); i > 0; i--) {
        if (random.next() < 0.6 || ids.size === 0) {
          const added = Array.from({ length: random.int(2, 8) }, () => this.nextBranchId++);
          await handle.add(rowsFor(added, name));
          ids = new Set([...ids, ...added]);
        } else {
          const predicate = deletePredicate(random, ids);
          await handle.delete(predicate.sql);
          ids = new Set([...ids].filter((id) => !predicate.matches(id)));
        }
        record.versions.set(await handle.version(), contentOfIds(ids));
        this.stats.branchCommits++;
      }
    } finally {
      handle.close();
    }
  }

  private async unbranch(name: string): Promise<void> {
    this.options.history.branches.delete(name);
    await (await this.table.branches()).delete(name);
  }

  /**
   * After a refused step: the commit may or may not have happened, so the model is rebuilt
   * from the table itself and every version since `before` recorded with what it holds.
   */
  private async resync(before: number): Promise<void> {
    this.stats.resyncs++;
    await this.table.checkoutLatest();
    const rows = await this.table.query().select(["id"]).toArray();
    this.ids = new Set(rows.map((row) => Number(row.id)));
    this.nextId = Math.max(this.nextId, ...[...this.ids].filter((id) => id < BRANCH_ID_BASE).map((id) => id + 1));
    await this.recordSince(before);
  }
}
