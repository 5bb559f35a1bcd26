/**
 * Cleanup rounds with an aggressive policy (older-than 0s, retain 1-3, never
 * --delete-unverified: a live writer's files in flight are exactly what it protects), through
 * the library and, every few rounds on local disk, through the real `lakewarden cleanup`
 * executable. A second cleaner starts runs at random moments, so the lease is contended. Some
 * rounds are cut short on purpose: aborted at a random moment, or with one mutating request
 * failing (the k-th, k at random); the next run must finish their job. After each round the
 * invariants are checked under the lease.
 */
import { LeaseHeldError } from "../../lib/maintenance/errors.ts";
import { Lease } from "../../lib/maintenance/lease.ts";
import type { CleanupReport } from "../../lib/maintenance/cleanup-report.ts";
import { runCleanup } from "../../lib/maintenance/run-cleanup.ts";
import { FaultInjectingStore } from "../../test/support/fault-injecting-store.ts";
import type { ObjectStore } from "../../lib/store/object-store.ts";
import { lanceFormat } from "../../lib/formats/lance/lance-format.ts";
import type { Random, SoakHistory } from "./history.ts";
import type { InvariantChecker } from "./invariants.ts";
import type { Violations } from "./violations.ts";

/** library: runCleanup; cli: the executable; abort: aborted at a random moment; fault: one failed mutating request. */
export type CleanupMode = "library" | "cli" | "abort" | "fault";

/** Cut-short runs hold the lease this long at most if they could not release it. */
const FAULT_LEASE_MS = 20_000;

export interface CleanerStats {
  runs: number;
  completed: number;
  viaCli: number;
  aborted: number;
  /** Runs that met an injected failure (and threw or reported it). */
  faulted: number;
  contenderRuns: number;
  /** Runs that found the lease held (by the other cleaner or by the checker) and stopped. */
  leaseHeld: number;
  versionsRemoved: number;
  filesRemoved: Map<string, number>;
  bytesRemoved: number;
  replans: number;
  errors: Map<string, number>;
  warnings: Map<string, number>;
}

export interface CleanerOptions {
  store: ObjectStore;
  history: SoakHistory;
  random: Random;
  violations: Violations;
  checker: InvariantChecker;
  /** Versions cleanups reported removing: the checker compares the timeline with it. */
  removed: Set<number>;
  /**
   * The versions removed so far as of the last run that completed: that run's checkpoint must
   * mark them all cleaned up. (A run cut short may delete before it archives; the next run to
   * complete archives for it, so in between the newest checkpoint lags on purpose.)
   */
  archived: Set<number>;
  /** `lakewarden cleanup … --json` through the real executable; null when not used (S3: see run.ts). */
  runCliCleanup: ((retainVersions: number) => Promise<CleanupReport>) | null;
  shouldStop: () => boolean;
}

function bump(map: Map<string, number>, key: string, by = 1): void {
  map.set(key, (map.get(key) ?? 0) + by);
}

const firstLine = (error: unknown): string => (error instanceof Error ? error.message : String(error)).split("\n")[0]!;

export class SoakCleaner {
  readonly stats: CleanerStats = {
    runs: 0,
    completed: 0,
    viaCli: 0,
    aborted: 0,
    faulted: 0,
    contenderRuns: 0,
    leaseHeld: 0,
    versionsRemoved: 0,
    filesRemoved: new Map(),
    bytesRemoved: 0,
    replans: 0,
    errors: new Map(),
    warnings: new Map(),
  };
  private readonly options: CleanerOptions;

  constructor(options: CleanerOptions) {
    this.options = options;
  }

  /** The main cleaner: cleanup, then the invariants, round after round. */
  async run(): Promise<void> {
    const { random, shouldStop } = this.options;
    for (let round = 1; !shouldStop(); round++) {
      await this.cleanOnce(this.modeFor(round));
      await this.checkUnderLease(round % 10 === 0);
      await new Promise((resolve) => setTimeout(resolve, random.int(100, 1200)));
    }
  }

  /** Another cleaner at random moments: it and the main one must never run at once. */
  async contend(): Promise<void> {
    const { random, shouldStop } = this.options;
    while (!shouldStop()) {
      await new Promise((resolve) => setTimeout(resolve, random.int(500, 4000)));
      if (shouldStop()) break;
      this.stats.contenderRuns++;
      await this.cleanOnce("library");
    }
  }

  /** The last round after the writer stopped: clean, then check everything once more. */
  async finish(): Promise<void> {
    await this.cleanOnce("library");
    await this.checkUnderLease(true);
  }

  private modeFor(round: number): CleanupMode {
    if (round % 5 === 0 && this.options.runCliCleanup !== null) return "cli";
    if (round % 6 === 3) return "abort";
    if (round % 6 === 0) return "fault";
    return "library";
  }

  private async cleanOnce(via: CleanupMode): Promise<void> {
    const { store, random } = this.options;
    const settings = { olderThanMs: 0, retainVersions: random.int(1, 3) };
    this.stats.runs++;
    try {
      let report: CleanupReport;
      if (via === "cli") {
        report = await this.options.runCliCleanup!(settings.retainVersions);
        this.stats.viaCli++;
      } else if (via === "abort") {
        const controller = new AbortController();
        const timer = setTimeout(() => controller.abort(), random.int(0, 60));
        report = await runCleanup(store, { settings, signal: controller.signal, lease: { owner: "soak-cleaner (aborted)", durationMs: FAULT_LEASE_MS } });
        clearTimeout(timer);
        if (report.status === "stopped") this.stats.aborted++;
      } else if (via === "fault") {
        const faulty = new FaultInjectingStore(store, { failMutations: [{ at: random.int(1, 10) }] });
        report = await runCleanup(faulty, { settings, lease: { owner: "soak-cleaner (fault)", durationMs: FAULT_LEASE_MS } });
        if (report.delete_failures.length > 0 || report.warnings.some((w) => /not written|not released/.test(w))) this.stats.faulted++;
      } else {
        report = await runCleanup(store, { settings, lease: { owner: "soak-cleaner" } });
      }
      this.absorb(report);
    } catch (error) {
      if (via === "fault") {
        this.stats.faulted++;
        await this.accountForFailedRun();
        return;
      }
      if (error instanceof LeaseHeldError || /holds this table's lease|took over the expired lease/.test(firstLine(error))) {
        this.stats.leaseHeld++;
        return;
      }
      bump(this.stats.errors, `${via}: ${firstLine(error)}`);
      await this.accountForFailedRun();
    }
  }

  private absorb(report: CleanupReport): void {
    const { removed, violations } = this.options;
    for (const version of report.versions_removed) removed.add(version);
    if (report.status === "completed") {
      this.stats.completed++;
      for (const version of removed) this.options.archived.add(version);
    }
    this.stats.versionsRemoved += report.versions_removed.length;
    this.stats.bytesRemoved += report.bytes_removed;
    for (const [kind, totals] of Object.entries(report.files_removed)) bump(this.stats.filesRemoved, kind, totals?.files ?? 0);
    this.stats.replans += report.replans.length;
    for (const warning of report.warnings) bump(this.stats.warnings, warning.replace(/\d+/g, "N"));
    if (report.reference_check && !report.reference_check.ok) {
      violations.add(
        "cleanup",
        `run ${report.run_id}: its post-delete check found referenced files deleted: ${JSON.stringify((report.reference_check as unknown as { deleted_by_run: unknown[] }).deleted_by_run.slice(0, 3))}`,
      );
    }
    // An injected failure makes a run report a failed delete, never an error of its own.
    if (report.errors.length > 0) violations.add("cleanup", `run ${report.run_id} reported errors: ${report.errors.join("; ")}`);
    const latestAtStart = report.latest_version_at_start ?? Infinity;
    const tooNew = report.versions_removed.filter((v) => v >= latestAtStart);
    if (tooNew.length > 0) violations.add("cleanup", `run ${report.run_id} removed versions ${tooNew} at or above ${latestAtStart}, the latest when it started`);
  }

  /** A run that threw may have removed versions before it did: whatever is gone, a cleanup removed. */
  private async accountForFailedRun(): Promise<void> {
    const { store, history, removed } = this.options;
    // Versions known before the listing: one committed after it is not missing from it.
    const known = [...history.main.keys()];
    const live = new Set((await lanceFormat.listVersionFiles(store)).map((f) => f.version));
    for (const version of known) {
      if (live.has(version) || removed.has(version)) continue;
      removed.add(version);
      this.stats.versionsRemoved++;
    }
  }

  private async checkUnderLease(cli: boolean): Promise<void> {
    const { store, violations, checker } = this.options;
    let lease: Lease | null = null;
    while (!lease) {
      try {
        lease = await Lease.acquire(store, { owner: "soak-checker", purpose: "soak invariant check", durationMs: 5 * 60_000 });
      } catch (error) {
        if (!(error instanceof LeaseHeldError)) throw error;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    violations.round++;
    try {
      await checker.check({ cli });
    } finally {
      await lease.release();
    }
  }
}
