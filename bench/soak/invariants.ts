/**
 * The invariants checked after every cleanup round, while the writer keeps committing. The
 * checker holds the table's cleanup lease meanwhile, so no cleanup removes anything under it:
 * whatever it finds missing was removed by a cleanup that should not have removed it.
 *
 *  - the timeline (`versions`) lists every version ever committed, with the rows it had, and
 *    marks is_cleaned_up exactly the versions cleanups reported removing;
 *  - every version it reports as not cleaned up opens in LanceDB with the rows it had;
 *  - every tag opens, on a version that is still there; every branch opens at each of its versions;
 *  - the head never goes backwards and never names a version not committed;
 *  - the newest checkpoint loads, and holds every removed version it covers as is_cleaned_up;
 *  - every file a kept version (of main or of a branch) references exists;
 *  - openTable loads a version at least as new as the latest committed before it.
 */
import * as lancedb from "@lancedb/lancedb";
import { DEFAULT_MAX_ENTRIES } from "../../lib/checkpoint/history.ts";
import { loadNewestCheckpoint } from "../../lib/checkpoint/load.ts";
import { lanceFormat } from "../../lib/formats/lance/lance-format.ts";
import { readLanceVersion } from "../../lib/formats/lance/read-version.ts";
import { deletionFileName } from "../../lib/formats/lance/snapshot-files.ts";
import { openTable } from "../../lib/head/loader.ts";
import { readStoredHead } from "../../lib/head/stored-head.ts";
import type { ObjectStore } from "../../lib/store/object-store.ts";
import { readTimeline } from "../../lib/versions/timeline.ts";
import type { VersionRecord } from "../../lib/model/version-record.ts";
import type { Content } from "./history.ts";
import { describeContent, sameContent, type SoakHistory } from "./history.ts";
import { versionFileExists } from "./readers.ts";
import type { Violations } from "./violations.ts";

export interface CheckStats {
  rounds: number;
  versionsOpened: number;
  tagsOpened: number;
  branchVersionsOpened: number;
  filesChecked: number;
  cliVersionsRuns: number;
  /** LanceDB listings of tags or branches that failed on a ref deleted meanwhile, and were repeated. */
  lancedbRefListRaces: number;
}

export interface CheckerOptions {
  dbUri: string;
  tableUri: string;
  storageOptions?: Record<string, string>;
  store: ObjectStore;
  history: SoakHistory;
  violations: Violations;
  /** Every version a cleanup reported removing so far. */
  removed: ReadonlySet<number>;
  /** Removed versions the newest checkpoint must hold as cleaned up (see CleanerOptions.archived). */
  archived: ReadonlySet<number>;
  /** `lakewarden versions --json` through the real CLI. */
  runCliVersions: () => Promise<VersionRecord[]>;
}

async function contentOf(table: lancedb.Table): Promise<Content> {
  const rows = await table.query().select(["id"]).toArray();
  return { rows: rows.length, idSum: rows.reduce((sum, row) => sum + Number(row.id), 0) };
}

/** Is the root of the main table what this base path names? (local paths and s3:// URIs) */
function namesRoot(basePath: string, tableUri: string): boolean {
  const normalise = (p: string) => p.replace(/^file:\/\//, "").replace(/\/+$/, "");
  return normalise(basePath) === normalise(tableUri);
}

/** Who needs a file: for messages, and a branch deleted meanwhile takes its files with it. */
interface Needer {
  what: string;
  branch: string | null;
}

export class InvariantChecker {
  readonly stats: CheckStats = { rounds: 0, versionsOpened: 0, tagsOpened: 0, branchVersionsOpened: 0, filesChecked: 0, cliVersionsRuns: 0, lancedbRefListRaces: 0 };
  private readonly options: CheckerOptions;
  private headVersion = -1;

  constructor(options: CheckerOptions) {
    this.options = options;
  }

  async check(options: { cli: boolean }): Promise<void> {
    this.stats.rounds++;
    const { history } = this.options;
    // Only what was committed before the check started is expected to be there.
    const committed = new Map(history.main);
    const latestCommitted = Math.max(...committed.keys());
    // The versions the timeline (what `lakewarden versions` prints) says are not cleaned up.
    let live = new Set<number>();
    const checks: Array<[string, () => Promise<void>]> = [
      ["timeline", async () => void (live = await this.checkTimeline(committed))],
      ["lancedb", () => this.checkLanceDb(committed, live)],
      ["head", () => this.checkHead(latestCommitted)],
      ["checkpoint", () => this.checkCheckpoint()],
      ["files", () => this.checkFiles()],
      ["openTable", () => this.checkOpenTable(latestCommitted, committed)],
    ];
    if (options.cli) checks.push(["cli-versions", () => this.checkCliVersions(committed)]);
    for (const [name, run] of checks) {
      try {
        await run();
      } catch (error) {
        this.options.violations.add(name, `check failed: ${(error as Error).message.split("\n")[0]}`);
      }
    }
  }

  /** Every committed version listed, with its rows; is_cleaned_up exactly for removed ones. */
  private compareHistory(source: string, records: readonly VersionRecord[], committed: ReadonlyMap<number, Content>): void {
    const { violations, removed } = this.options;
    const byVersion = new Map(records.map((r) => [r.version, r]));
    // A checkpoint holds at most DEFAULT_MAX_ENTRIES rows, the oldest going first (DESIGN.md).
    const capped = records.length >= DEFAULT_MAX_ENTRIES ? (records[0]?.version ?? 0) : 0;
    for (const [version, content] of committed) {
      const record = byVersion.get(version);
      if (!record && version < capped) continue;
      if (!record) {
        violations.add(source, `version ${version} is missing from ${source}`);
        continue;
      }
      if (record.total_rows !== content.rows) violations.add(source, `${source} says version ${version} had ${record.total_rows} rows; it was committed with ${content.rows}`);
      if (record.is_cleaned_up !== removed.has(version)) {
        violations.add(
          source,
          `${source} says version ${version} is_cleaned_up=${record.is_cleaned_up}, but ${removed.has(version) ? "a cleanup removed it" : "no cleanup removed it"}`,
        );
      }
    }
  }

  /** Returns the versions it lists as not cleaned up. */
  private async checkTimeline(committed: ReadonlyMap<number, Content>): Promise<Set<number>> {
    const timeline = await readTimeline(this.options.store, lanceFormat);
    this.compareHistory("timeline", timeline.records, committed);
    if (timeline.skippedCheckpoints.length > 0) {
      this.options.violations.add("timeline", `checkpoints skipped: ${timeline.skippedCheckpoints.map((s) => s.problem).join("; ")}`);
    }
    return new Set(timeline.records.filter((r) => !r.is_cleaned_up).map((r) => r.version));
  }

  private async checkCliVersions(committed: ReadonlyMap<number, Content>): Promise<void> {
    this.stats.cliVersionsRuns++;
    this.compareHistory("lakewarden versions", await this.options.runCliVersions(), committed);
  }

  /** Live versions, tags and branches, each read through LanceDB with a fresh connection. */
  private async checkLanceDb(committed: ReadonlyMap<number, Content>, live: ReadonlySet<number>): Promise<void> {
    const { dbUri, storageOptions, store, history, violations } = this.options;
    // Tags and branches made after the timeline was read name versions committed after it too.
    const stillThere = async (version: number): Promise<boolean> => live.has(version) || (await versionFileExists(store, version));
    const db = await lancedb.connect(dbUri, storageOptions ? { storageOptions } : {});
    const table = await db.openTable("t");
    try {
      for (const [version, expected] of committed) {
        if (!live.has(version)) continue;
        try {
          await table.checkout(version);
          const seen = await contentOf(table);
          this.stats.versionsOpened++;
          if (!sameContent(seen, expected))
            violations.add("live-version", `LanceDB reads kept version ${version} as ${describeContent(seen)}; committed with ${describeContent(expected)}`);
        } catch (error) {
          violations.add("live-version", `LanceDB cannot read kept version ${version}: ${(error as Error).message.split("\n")[0]}`);
        }
      }

      const tags = await this.listRefs(() => table.tags());
      for (const [name, tag] of Object.entries(tags)) {
        const expected = committed.get(tag.version);
        if (!(await stillThere(tag.version))) violations.add("tag", `tag ${name} names version ${tag.version}, whose version file is gone`);
        try {
          await table.checkout(name);
          const seen = await contentOf(table);
          this.stats.tagsOpened++;
          if (expected && !sameContent(seen, expected))
            violations.add("tag", `tag ${name} (version ${tag.version}) reads ${describeContent(seen)}; committed with ${describeContent(expected)}`);
        } catch (error) {
          // The writer may have deleted it since the list.
          if (name in (await this.listRefs(() => table.tags())))
            violations.add("tag", `LanceDB cannot open tag ${name} (version ${tag.version}): ${(error as Error).message.split("\n")[0]}`);
        }
      }

      const branches = await this.listRefs(() => table.branches());
      for (const [name, record] of [...history.branches]) {
        if (!(name in branches)) continue;
        if (!(await stillThere(record.parentVersion))) violations.add("branch", `branch ${name} was created from version ${record.parentVersion}, whose version file is gone`);
        for (const [version, expected] of [...record.versions]) {
          try {
            const pinned = await (await table.branches()).checkout(name, version);
            const seen = await contentOf(pinned);
            pinned.close();
            this.stats.branchVersionsOpened++;
            if (!sameContent(seen, expected))
              violations.add("branch", `branch ${name} version ${version} reads ${describeContent(seen)}; committed with ${describeContent(expected)}`);
          } catch (error) {
            if (history.branches.has(name)) violations.add("branch", `LanceDB cannot open branch ${name} at version ${version}: ${(error as Error).message.split("\n")[0]}`);
          }
        }
      }
    } finally {
      table.close();
      db.close();
    }
  }

  /**
   * LanceDB's own listing of tags or branches, again when it fails on a ref deleted under it:
   * LanceDB 0.31 (lance 8.0.0) lists `_refs/` and then HEADs each file, and a ref the writer
   * deletes in between fails the whole list (lakewarden's reader had the same race; fixed).
   */
  private async listRefs<T>(refs: () => Promise<{ list(): Promise<Record<string, T>> }>): Promise<Record<string, T>> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await (await refs()).list();
      } catch (error) {
        if (attempt === 5 || !/_refs\/.*not found/i.test((error as Error).message)) throw error;
        this.stats.lancedbRefListRaces++;
      }
    }
  }

  private async checkHead(latestCommitted: number): Promise<void> {
    const { store, history, violations } = this.options;
    const head = await readStoredHead(store);
    if (head.state === "missing") return;
    if (head.state === "unreadable") {
      violations.add("head", `the head does not load: ${head.problem}`);
      return;
    }
    const version = head.content.tableVersion;
    if (version < this.headVersion) violations.add("head", `the head went back from version ${this.headVersion} to ${version}`);
    // A commit can land between our snapshot of the history and the head's read.
    if (version > latestCommitted && !history.main.has(version)) violations.add("head", `the head names version ${version}, never committed`);
    this.headVersion = Math.max(this.headVersion, version);
  }

  private async checkCheckpoint(): Promise<void> {
    const { store, violations, archived } = this.options;
    const loaded = await loadNewestCheckpoint(store);
    if (loaded.skipped.length > 0) violations.add("checkpoint", `newest checkpoint(s) skipped: ${loaded.skipped.map((s) => s.problem).join("; ")}`);
    if (archived.size === 0) return;
    const checkpoint = loaded.checkpoint;
    if (!checkpoint) {
      violations.add("checkpoint", `no checkpoint loads although completed cleanups removed ${archived.size} versions`);
      return;
    }
    const records = new Map(checkpoint.records.map((r) => [r.version, r]));
    const newest = Math.max(...records.keys());
    const oldest = checkpoint.records.length >= DEFAULT_MAX_ENTRIES ? Math.min(...records.keys()) : 0;
    for (const version of archived) {
      if (version > newest || version < oldest) continue;
      const record = records.get(version);
      if (!record?.is_cleaned_up) violations.add("checkpoint", `removed version ${version} is ${record ? "not marked is_cleaned_up" : "missing"} in ${checkpoint.key}`);
    }
  }

  /** Every file a live version of main or of a branch references is in a listing taken after reading them. */
  private async checkFiles(): Promise<void> {
    const { store, history, violations } = this.options;
    const needed = new Map<string, Needer>();
    for (const file of await lanceFormat.listVersionFiles(store)) {
      const snapshot = await lanceFormat.readSnapshot(store, file);
      for (const ref of snapshot.referencedFiles) if (!needed.has(ref.path)) needed.set(ref.path, { what: `main version ${file.version}`, branch: null });
    }
    for (const name of [...history.branches.keys()]) {
      try {
        await this.branchReferences(name, needed);
      } catch (error) {
        // The writer may have deleted the branch, files and all, while we read it.
        if (history.branches.has(name)) throw error;
      }
    }
    const keys: string[] = [];
    for await (const object of store.list("")) keys.push(object.key);
    const present = new Set(keys);
    const dirs = new Set(
      keys.flatMap((key) =>
        key
          .split("/")
          .slice(0, -1)
          .map((_, i, parts) => parts.slice(0, i + 1).join("/") + "/"),
      ),
    );
    for (const [path, by] of needed) {
      this.stats.filesChecked++;
      const there = path.endsWith("/") ? dirs.has(path) : present.has(path);
      if (!there && !(by.branch !== null && !history.branches.has(by.branch))) violations.add("files", `${path}, needed by ${by.what}, is missing`);
    }
  }

  /** Files a branch's versions reference, in its own folder or, through a base path, in main's. */
  private async branchReferences(name: string, needed: Map<string, Needer>): Promise<void> {
    const { store, tableUri } = this.options;
    const branchRoot = `tree/${name}/`;
    const branchStore = store.scope(branchRoot.slice(0, -1));
    for (const file of await lanceFormat.listVersionFiles(branchStore)) {
      const { manifest } = await readLanceVersion(branchStore, file.key, file.size);
      // Base paths naming main's root resolve there; other bases are not this table's files.
      const bases = new Map(manifest.basePaths.map((b) => [b.id, namesRoot(b.path, tableUri) ? "" : null]));
      const at = (baseId: number | null): string | null => (baseId === null ? branchRoot : (bases.get(baseId) ?? null));
      const by = { what: `branch ${name} version ${file.version}`, branch: name };
      for (const fragment of manifest.fragments) {
        for (const data of fragment.files) {
          const root = at(data.baseId);
          if (root !== null) needed.set(`${root}data/${data.path}`, by);
        }
        const deletion = fragment.deletionFile;
        const root = deletion ? at(deletion.baseId) : null;
        if (deletion && root !== null) needed.set(`${root}_deletions/${deletionFileName(fragment.id, deletion)}`, by);
      }
      for (const index of manifest.indices) {
        const root = at(index.baseId);
        if (root !== null) needed.set(`${root}_indices/${index.uuid}/`, by);
      }
    }
  }

  private async checkOpenTable(latestCommitted: number, committed: ReadonlyMap<number, Content>): Promise<void> {
    const state = (await openTable(this.options.store, { versionCheckInterval: 0 })).current()!;
    if (state.version < latestCommitted) this.options.violations.add("openTable", `openTable gave version ${state.version}; ${latestCommitted} was committed before`);
    const expected = committed.get(state.version) ?? (await this.options.history.contentOf(state.version));
    if (expected && state.snapshot.record.total_rows !== expected.rows) {
      this.options.violations.add("openTable", `openTable: version ${state.version} has ${state.snapshot.record.total_rows} rows; committed with ${expected.rows}`);
    }
  }
}
