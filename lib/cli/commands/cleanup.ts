/**
 * `lakewarden cleanup <table>`: the cleanup pipeline (lib/maintenance/run-cleanup.ts) with the
 * policy from flags, then LAKEWARDEN_* environment variables, then per-table settings (the table's
 * `lakewarden.*` config, then `_lakewarden/config`), then defaults (lib/maintenance/policy.ts). `--dry-run` prints the
 * whole plan (every version and every file, with reasons and sizes, never truncated) and
 * changes nothing. On a terminal a progress bar shows on stderr. SIGINT (Ctrl-C) or SIGTERM
 * stops the run cleanly between delete batches and releases the lease (exit 130, safe to run
 * again); a second one quits at once (the lease is then taken over by the next run on this host).
 */
import { Option, type Command } from "commander";
import cliProgress from "cli-progress";
import type { ProgramContext } from "../program.ts";
import { parseDurationFlag, parsePositiveIntegerFlag, parseRateFlag, parseSettingFlag } from "../flags.ts";
import { catalogBinding, printJson, runOnTable, withCatalogOptions, withOutputOptions, TABLE_ARGUMENT_HELP } from "../table-command.ts";
import type { OutputOptions } from "../table-command.ts";
import { formatBytes, versionRanges, plural } from "../../text/human-units.ts";
import { textTable } from "../text-table.ts";
import { CHECKPOINT_STATUS_WORDS } from "./checkpoint.ts";
import { describeTotals, indent } from "./cleanup-summary.ts";
import { StoreError } from "../../store/errors.ts";
import { InterruptedError } from "../errors.ts";
import { EXIT_CODES } from "../exit-codes.ts";
import { SHORT_RETENTION_FLAG, SHORT_SAFETY_WINDOW_FLAG, checkShortRetention, checkShortSafetyWindow } from "../flags.ts";
import { settingsFromEnvironment, type CleanupSettings } from "../../maintenance/policy.ts";
import type { CleanupProgress, CleanupStage } from "../../maintenance/progress.ts";
import { reportedStatus, type CleanupReport } from "../../maintenance/cleanup-report.ts";
import { runCleanup } from "../../maintenance/run-cleanup.ts";
import { runCleanupThroughCatalog } from "../../maintenance/catalog-cleanup.ts";
import { formatAtCatalogPointer } from "../../formats/catalog.ts";
import type { TableCatalog } from "../../formats/catalog-commit.ts";
import type { TableFormat } from "../../formats/table-format.ts";
import type { ObjectStore } from "../../store/object-store.ts";
import { refreshHeadAfterCleanup } from "../../head/after-cleanup.ts";

/**
 * Signals this close after the first are the same interrupt, not a second one meaning "quit at
 * once": a terminal's Ctrl-C reaches every process of its group (npx, the Node 20 wrapper of
 * lib/cli/bin.js, this process), and npx and the wrapper forward it as well.
 */
const SAME_INTERRUPT_MS = 500;

interface CleanupFlags extends OutputOptions {
  olderThan?: string;
  retainVersions?: string;
  protectBefore?: string;
  deleteUnverified?: boolean;
  safetyWindow?: string;
  dryRun?: boolean;
  summary?: boolean;
  allowShortRetention?: boolean;
  allowShortSafetyWindow?: boolean;
  maxDeleteRate?: string;
  maxDuration?: string;
  minWork?: string;
  verifyData?: boolean;
}

export function registerCleanupCommand(program: Command, { io }: ProgramContext): void {
  withOutputOptions(
    withCatalogOptions(
      program
        .command("cleanup")
        .description("remove old versions and unreferenced files, then archive the history")
        .argument("<table>", TABLE_ARGUMENT_HELP)
        .option("--older-than <duration>", "remove versions committed longer ago than this (default 7d)")
        .option("--retain-versions <n>", "always keep the newest N versions (default 1)")
        .option("--protect-before <version>", "versions below this one go all in one run or not at all")
        .option("--delete-unverified", "also delete young unreferenced files that no removed version names")
        .option("--safety-window <duration>", "keep unreferenced files younger than this (default 7d)")
        .option("--dry-run", "print the plan with reasons and sizes; delete and write nothing")
        .addOption(new Option("--summary", "print totals by reason and kind, not every file and version").conflicts("json"))
        .option("--max-duration <duration>", "stop cleanly after this long (e.g. 10m); the next run resumes")
        .option("--min-work <objects>", "with --max-duration: objects of new work before it may stop (default 1)")
        .option("--max-delete-rate <keys-per-second>", "delete at most this many keys per second (default: no limit)")
        .option("--verify-data", "the deep proof: read the end of each data file kept versions alone need")
        .option("--allow-superseded-metadata", "with --metadata-location: clean by it even if newer metadata exists")
        .option(SHORT_RETENTION_FLAG, "allow --older-than below 7 days")
        .option(SHORT_SAFETY_WINDOW_FLAG, "allow --safety-window below 1 hour"),
    ),
  ).action(async (table: string, flags: CleanupFlags) => {
    const settings = settingsFromFlags(flags);
    checkShortRetention(settings.olderThanMs, Boolean(flags.allowShortRetention));
    checkShortSafetyWindow(settings.safetyWindowMs, Boolean(flags.allowShortSafetyWindow));
    const maxDurationMs = flags.maxDuration !== undefined ? parseDurationFlag("--max-duration", flags.maxDuration, { positive: true }) : undefined;
    const maxDeleteRate = flags.maxDeleteRate !== undefined ? parseRateFlag("--max-delete-rate", flags.maxDeleteRate) : undefined;
    const minWorkPerRun = flags.minWork !== undefined ? parsePositiveIntegerFlag("--min-work", flags.minWork, "objects") : undefined;
    const controller = new AbortController();
    let interruptedAt: number | null = null;
    const exitInterrupted = (): never => process.exit(EXIT_CODES.interrupted);
    const onInterrupt = (signal: NodeJS.Signals): void => {
      if (interruptedAt !== null) {
        if (Date.now() - interruptedAt < SAME_INTERRUPT_MS) return;
        exitInterrupted();
      }
      interruptedAt = Date.now();
      io.err(`lakewarden: ${signal}: stopping cleanly after the current step and releasing the lease (again to quit at once)\n`);
      controller.abort();
    };
    process.on("SIGINT", onInterrupt);
    process.on("SIGTERM", onInterrupt);
    try {
      const report = await runOnTable(table, flags, io, async (store) => {
        const { catalog, ...chosen } = await catalogBinding(flags, store);
        const options = {
          settings,
          environment: settingsFromEnvironment(process.env),
          dryRun: Boolean(flags.dryRun),
          ...(maxDeleteRate !== undefined ? { maxDeleteRate } : {}),
          ...(maxDurationMs !== undefined ? { maxDurationMs } : {}),
          ...(minWorkPerRun !== undefined ? { minWorkPerRun } : {}),
          ...(flags.verifyData ? { verifyData: true } : {}),
          signal: controller.signal,
          progress: io.interactive && !flags.json ? terminalProgress() : undefined,
        };
        // A table a catalog owns expires through the catalog's own commit, on the entry loaded right before the run.
        const run = catalog ? await runCleanupThroughCatalog(store, catalog, options) : await runCleanup(store, { ...chosen, ...options });
        // The run's own commit (Iceberg's expiry) makes the stored head describe the commit before it;
        // through a catalog, the head follows the file the catalog names now.
        const headFormat = catalog && run.removal_commit?.status === "written" ? await formatAtCatalogNow(store, catalog) : chosen;
        const head = typeof headFormat === "string" ? { action: "failed" as const, problem: headFormat } : await refreshHeadAfterCleanup(store, run, headFormat);
        if (head.action === "failed") run.warnings.push(head.problem);
        return run;
      });
      const failed = report.delete_failures.length > 0 || report.errors.length > 0;
      // A run whose deletes failed did not complete, whatever the pipeline got through.
      const shown = { ...report, status: reportedStatus(report) };
      if (flags.json) printJson(io, shown);
      else io.out(flags.dryRun ? describePlan(shown, Boolean(flags.summary)) : describeRun(shown, Boolean(flags.summary)));
      for (const warning of report.warnings) io.err(`lakewarden: warning: ${warning}\n`);
      if (interruptedAt !== null && report.status === "stopped") {
        throw new InterruptedError(
          `${report.table}: cleanup interrupted and stopped cleanly (${report.stop_reason ?? "signal"}); the lease is released and the next run finishes the job`,
        );
      }
      if (failed) throw new StoreError(failureLine(report), { uri: report.table });
    } finally {
      process.removeListener("SIGINT", onInterrupt);
      process.removeListener("SIGTERM", onInterrupt);
      // A late copy of the same interrupt (npx or the wrapper forwarding what the terminal sent the
      // whole group) must not find the default handler, which would kill the process by the signal
      // after the run stopped cleanly, instead of exiting 130 as it is about to.
      if (interruptedAt !== null) {
        process.once("SIGINT", exitInterrupted);
        process.once("SIGTERM", exitInterrupted);
      }
    }
  });
}

/**
 * The format at the file the catalog names now, for the head after a commit through it, or why
 * not: the cleanup is done whatever this finds, so a failed load is a warning, and the head
 * (if any) keeps describing the commit before, which readers fall back from with a warning.
 */
async function formatAtCatalogNow(store: ObjectStore, catalog: TableCatalog): Promise<{ format: TableFormat } | string> {
  try {
    return { format: formatAtCatalogPointer(store, await catalog.load()).format };
  } catch (error) {
    return `the head was not brought up to the catalog's new commit: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/**
 * The one line of a run that did not complete. A failed delete is retried by the next run; a
 * kept file the post-delete check found deleted cannot be brought back by any run, so the line
 * says what to do instead of promising a retry.
 */
export function failureLine(report: Pick<CleanupReport, "table" | "delete_failures" | "errors" | "reference_check">): string {
  const parts: string[] = [];
  const first = report.delete_failures[0];
  if (first)
    parts.push(
      `${plural(report.delete_failures.length, "delete")} failed (first: ${first.key}: ${first.message}); the next run retries ${report.delete_failures.length === 1 ? "it" : "them"}`,
    );
  const lost = report.reference_check && !report.reference_check.ok ? report.reference_check.deletedByRun : [];
  if (lost.length > 0) {
    parts.push(
      `the check after deleting found ${plural(lost.length, "file")} that kept versions need deleted (first: ${lost[0]!.path}, ${lost[0]!.versions}): ` +
        "no run can bring them back; restore them from the bucket's versioning or a backup, and report this as a lakewarden defect",
    );
  }
  const others = report.errors.filter((error) => !error.startsWith("post-delete check:"));
  if (others.length > 0 || parts.length === 0) parts.push(`${plural(others.length || report.errors.length, "error")} (first: ${others[0] ?? report.errors[0] ?? "unknown"})`);
  return `${report.table}: cleanup did not complete: ${parts.join("; ")}`;
}

/** CLI flags → caller settings, checked with the same parser as table config values. */
function settingsFromFlags(flags: CleanupFlags): CleanupSettings {
  const settings: CleanupSettings = {};
  if (flags.olderThan !== undefined) settings.olderThanMs = parseSettingFlag("olderThanMs", flags.olderThan, "--older-than");
  if (flags.retainVersions !== undefined) settings.retainVersions = parseSettingFlag("retainVersions", flags.retainVersions, "--retain-versions");
  if (flags.protectBefore !== undefined) settings.protectBefore = parseSettingFlag("protectBefore", flags.protectBefore, "--protect-before");
  if (flags.safetyWindow !== undefined) settings.safetyWindowMs = parseSettingFlag("safetyWindowMs", flags.safetyWindow, "--safety-window");
  if (flags.deleteUnverified) settings.deleteUnverified = true;
  if (flags.allowShortRetention) settings.allowShortRetention = true;
  if (flags.allowShortSafetyWindow) settings.allowShortSafetyWindow = true;
  return settings;
}

const STAGES: readonly CleanupStage[] = ["reading manifests", "listing files", "proving kept versions", "deleting files", "writing checkpoint", "pruning checkpoints"];

/**
 * The count a progress line shows: "12/40" when the stage knows its total, "12" when it does
 * not (a listing), never "12/0"; a total that turns out too small grows with the count.
 */
export function progressCount(value: number, total: number | undefined): string {
  return total === undefined || total <= 0 ? `${value}` : `${value}/${Math.max(total, value)}`;
}

/** A cli-progress bar on stderr, one stage at a time. */
function terminalProgress(): CleanupProgress {
  const bar = new cliProgress.SingleBar({ format: "{stage} [{bar}] {count}", stream: process.stderr, clearOnComplete: true, hideCursor: true }, cliProgress.Presets.shades_classic);
  let started = false;
  let value = 0;
  let total: number | undefined;
  const payload = (stage?: string) => ({ ...(stage ? { stage } : {}), count: progressCount(value, total) });
  return {
    stage(name, stageTotal) {
      value = 0;
      total = stageTotal;
      const stage = `${STAGES.indexOf(name) + 1}/${STAGES.length} ${name}`.padEnd(26);
      // Without a total the bar stays empty and the count alone moves.
      if (!started) bar.start(Math.max(total ?? 0, 1), 0, payload(stage));
      else {
        bar.setTotal(Math.max(total ?? 0, 1));
        bar.update(0, payload(stage));
      }
      started = true;
    },
    advance(count) {
      if (!started) return;
      value += count;
      if (total !== undefined && total > 0) {
        if (value > total) bar.setTotal(value);
        bar.update(value, payload());
      } else bar.update(0, payload());
    },
    finish() {
      if (started) bar.stop();
      started = false;
    },
  };
}

function policyLine(report: CleanupReport): string {
  if (!report.policy) return "";
  const parts = Object.entries(report.policy).map(([name, { value, source }]) => `${name.replace(/_/g, "-")} ${value ?? "none"}${source === "default" ? "" : ` (${source})`}`);
  return `policy: ${parts.join(", ")}\n`;
}

function summary(report: CleanupReport, removedWord: string): string {
  let text = "";
  text += policyLine(report);
  text += `latest version at start: ${report.latest_version_at_start ?? "-"}\n`;
  text += `versions ${removedWord}: ${versionRanges(report.versions_removed)} (${report.versions_removed.length}); kept: ${report.versions_kept}\n`;
  for (const tagged of report.tagged_old_versions) {
    text += `  version ${tagged.version} is older than the policy allows but tagged ${tagged.tags.map((t) => JSON.stringify(t)).join(", ")}: kept\n`;
  }
  const commit = report.removal_commit;
  if (commit) {
    const what = [...(commit.versions_removed.length > 0 ? [`drops ${plural(commit.versions_removed.length, "version")}`] : []), ...commit.changes];
    text += `metadata commit on ${commit.base ?? "-"}: ${commit.key ?? commit.status}: ${what.join("; ")}\n`;
  }
  if (report.protection) text += `history protection before ${report.protection.boundary}: ${report.protection.result}: ${report.protection.reason}\n`;
  const kinds = Object.entries(report.files_removed).map(([kind, totals]) => `${kind} ${totals!.files} (${formatBytes(totals!.bytes)})`);
  text += `files ${removedWord}: ${kinds.length === 0 ? "none" : kinds.join(", ")}; ${formatBytes(report.bytes_removed)} in all\n`;
  return text;
}

function describeRun(report: CleanupReport, totalsOnly: boolean): string {
  if (report.nothing_to_do) return `cleanup of ${report.table} (${report.format}): nothing to do: ${report.nothing_to_do}\n`;
  let text = `cleanup of ${report.table} (${report.format}): ${report.status} in ${report.duration_ms} ms\n`;
  text += summary(report, "removed");
  const cp = report.checkpoint;
  text += cp
    ? `checkpoint: ${CHECKPOINT_STATUS_WORDS[cp.status]}${cp.key ? ` ${cp.key}` : ""} (${plural(cp.rows, "version")}, ${cp.cleanedUpRows} cleaned up)\n`
    : "checkpoint: not written\n";
  text += `checkpoints pruned: ${report.checkpoints_pruned.length === 0 ? "none" : report.checkpoints_pruned.join(", ")}\n`;
  const kept = report.files.filter((f) => f.action === "keep");
  if (totalsOnly) text += describeTotals(report);
  else if (kept.length > 0) {
    text += `kept and reported (${report.files_kept_reported}${kept.length < report.files_kept_reported ? `, the first ${kept.length} shown` : ""}):\n`;
    text += indent(
      textTable(
        ["key", "kind", "size", "reason"],
        kept.map((f) => [f.key, f.kind, formatBytes(f.size), f.reason]),
      ),
    );
  }
  if (report.reference_check) {
    text += `check after deleting: ${plural(report.reference_check.checked, "file")} of kept versions, ${report.reference_check.ok ? "all present" : `${report.reference_check.deletedByRun.length} MISSING`}\n`;
  }
  if (report.receipt) text += `receipt: ${report.receipt}\n`;
  return text;
}

/** Above this many files, a full dry-run listing ends by pointing at --summary. */
const LONG_LISTING = 200;

function describePlan(report: CleanupReport, totalsOnly: boolean): string {
  if (report.nothing_to_do) return `DRY RUN of cleanup on ${report.table} (${report.format}): nothing to do: ${report.nothing_to_do}\n`;
  let text = `DRY RUN of cleanup on ${report.table} (${report.format}): nothing was deleted or written\n`;
  text += summary(report, "to remove");
  if (totalsOnly) return text + describeTotals(report) + outsideReferences(report);
  text += `\nversions (${report.versions.length}):\n`;
  text += indent(
    textTable(
      ["version", "committed", "action", "reason"],
      report.versions.map((v) => [String(v.version), new Date(v.timestamp_millis).toISOString(), v.keep ? "keep" : "remove", v.reason]),
    ),
  );
  text += `\nfiles (${report.files_planned}${report.files.length < report.files_planned ? `, the first ${report.files.length} shown; the counts above cover all` : ""}):\n`;
  text += indent(
    textTable(
      ["action", "kind", "size", "key", "reason"],
      report.files.map((f) => [f.action, f.kind, formatBytes(f.size), f.key, f.reason]),
    ),
  );
  text += outsideReferences(report);
  if (report.files_planned > LONG_LISTING) text += `\n(${plural(report.files_planned, "file")} listed: --summary prints the totals by reason alone)\n`;
  return text;
}

function outsideReferences(report: CleanupReport): string {
  if (report.references_outside_root.length === 0) return "";
  let text = `\nreferences outside the table root, never deleted (${report.references_outside_root.length}):\n`;
  for (const ref of report.references_outside_root) text += `  version ${ref.version}: ${ref.path}\n`;
  return text;
}
