/**
 * Readers running all the time, while the writer commits and cleanup deletes: LanceDB opening
 * the latest version, and lakewarden's `openTable` (a warm handle checking on every call, and
 * cold loads). The latest version is never removed, but a version read as latest can stop
 * being the latest and be removed while it is being read (the policy is older-than 0s): a
 * failed read is a violation only if the version it was reading still has its version file.
 */
import * as lancedb from "@lancedb/lancedb";
import { lanceFormat } from "../../lib/formats/lance/lance-format.ts";
import { TableHandle, openTable } from "../../lib/head/loader.ts";
import { NotFoundError } from "../../lib/store/errors.ts";
import type { ObjectStore } from "../../lib/store/object-store.ts";
import { readTimeline } from "../../lib/versions/timeline.ts";
import { describeContent, sameContent, type SoakHistory } from "./history.ts";
import type { Violations } from "./violations.ts";

export interface ReaderStats {
  lancedbLoads: number;
  warmLoads: number;
  coldLoads: number;
  headLoads: number;
  /** Reads that failed because cleanup removed the version meanwhile (allowed with older-than 0s). */
  racedWithCleanup: number;
  raceExamples: string[];
  timelineReads: number;
  /** Timeline reads that left out committed versions (removed, not yet archived by the run). */
  timelineGaps: number;
  gapExamples: string[];
}

export interface ReaderOptions {
  dbUri: string;
  storageOptions?: Record<string, string>;
  store: ObjectStore;
  history: SoakHistory;
  violations: Violations;
  shouldStop: () => boolean;
}

export async function versionFileExists(store: ObjectStore, version: number): Promise<boolean> {
  try {
    await lanceFormat.findVersionFile(store, version);
    return true;
  } catch (error) {
    if (error instanceof NotFoundError) return false;
    throw error;
  }
}

export class SoakReaders {
  readonly stats: ReaderStats = {
    lancedbLoads: 0,
    warmLoads: 0,
    coldLoads: 0,
    headLoads: 0,
    racedWithCleanup: 0,
    raceExamples: [],
    timelineReads: 0,
    timelineGaps: 0,
    gapExamples: [],
  };
  private readonly options: ReaderOptions;

  constructor(options: ReaderOptions) {
    this.options = options;
  }

  run(): Promise<void> {
    return Promise.all([this.lancedbReader(), this.openTableReader(), this.timelineReader()]).then(() => undefined);
  }

  /**
   * `lakewarden versions` (the timeline) while cleanups run: it must not fail. Versions it
   * leaves out are counted: a run that deleted version files has not archived them yet.
   */
  private async timelineReader(): Promise<void> {
    const { store, history, violations, shouldStop } = this.options;
    while (!shouldStop()) {
      const committed = [...history.main.keys()];
      try {
        const timeline = await readTimeline(store, lanceFormat);
        this.stats.timelineReads++;
        const listed = new Set(timeline.records.map((r) => r.version));
        const missing = committed.filter((v) => !listed.has(v));
        if (missing.length > 0) {
          this.stats.timelineGaps++;
          if (this.stats.gapExamples.length < 3) this.stats.gapExamples.push(`versions ${missing.slice(0, 5).join(", ")}${missing.length > 5 ? ", …" : ""} not listed`);
        }
      } catch (error) {
        violations.add("timeline-reader", `the timeline failed while cleanup ran: ${(error as Error).message.split("\n")[0]}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** A failed read of `version`: a race if cleanup removed it meanwhile, a violation if not. */
  private async failed(what: string, version: number | null, error: unknown): Promise<void> {
    const message = `${what}${version !== null ? ` of version ${version}` : ""}: ${(error as Error).message.split("\n")[0]}`;
    if (version !== null && !(await versionFileExists(this.options.store, version))) {
      this.stats.racedWithCleanup++;
      if (this.stats.raceExamples.length < 3) this.stats.raceExamples.push(message);
      return;
    }
    this.options.violations.add("reader", `${message} (its version file is still there)`);
  }

  private async lancedbReader(): Promise<void> {
    const { dbUri, storageOptions, history, violations, shouldStop } = this.options;
    const db = await lancedb.connect(dbUri, storageOptions ? { storageOptions } : {});
    const table = await db.openTable("t");
    try {
      while (!shouldStop()) {
        let version: number | null = null;
        try {
          await table.checkoutLatest();
          version = await table.version();
          const rows = await table.query().select(["id"]).toArray();
          this.stats.lancedbLoads++;
          const seen = { rows: rows.length, idSum: rows.reduce((sum, row) => sum + Number(row.id), 0) };
          const expected = await history.contentOf(version);
          if (expected && !sameContent(seen, expected)) {
            violations.add("reader", `LanceDB read version ${version} as ${describeContent(seen)}; it was committed with ${describeContent(expected)}`);
          }
        } catch (error) {
          await this.failed("LanceDB read of the latest", version, error);
        }
        await new Promise((resolve) => setTimeout(resolve, 40));
      }
    } finally {
      table.close();
      db.close();
    }
  }

  private async openTableReader(): Promise<void> {
    const { store, history, violations, shouldStop } = this.options;
    // Checks on every call: one HEAD for version N+1, a cold load when it exists.
    const warm = new TableHandle(store, { versionCheckInterval: 0, format: lanceFormat });
    let iteration = 0;
    while (!shouldStop()) {
      const cold = iteration++ % 4 === 0;
      const latestBefore = history.latest;
      try {
        const state = cold ? (await openTable(store, { versionCheckInterval: 0 })).current()! : await warm.latest();
        if (cold) this.stats.coldLoads++;
        else this.stats.warmLoads++;
        if (state.source === "head") this.stats.headLoads++;
        if (state.version < latestBefore) {
          violations.add("openTable", `${cold ? "cold" : "warm"} load gave version ${state.version} although ${latestBefore} was committed before it started`);
        }
        const expected = await history.contentOf(state.version);
        const rows = state.snapshot.record.total_rows;
        if (expected && rows !== expected.rows) {
          violations.add("openTable", `version ${state.version} (from the ${state.source}) has ${rows} rows; it was committed with ${expected.rows}`);
        }
      } catch (error) {
        // Which version it was loading is not known from outside; the latest before the call is
        // what a cold load lists, and the handle's own state is what a warm load re-reads.
        const version = cold ? latestBefore : (warm.current()?.version ?? latestBefore);
        await this.failed(`openTable ${cold ? "cold" : "warm"} load`, version, error);
      }
      await new Promise((resolve) => setTimeout(resolve, 30));
    }
  }
}
