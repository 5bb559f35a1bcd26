/**
 * The damage matrix's shared part: the four damages, what a cleanup did to a damaged table, and
 * the one verdict every case must reach. A case damages one file a kept version depends on, then
 * runs the dry run and the real run (aggressive settings); either the run deleted nothing, or every
 * version it reports as kept reads, through an independent reader, exactly as before the damage.
 * And the dry run says what the run did: both refused with the same line, or both plan the same files.
 */
import { randomBytes } from "node:crypto";
import { readFile, rm, stat, truncate, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { runCleanup } from "../../../lib/maintenance/run-cleanup.ts";
import type { CleanupReport } from "../../../lib/maintenance/cleanup-report.ts";
import type { TableFormat } from "../../../lib/formats/table-format.ts";
import { LocalStore } from "../../../lib/store/local-store.ts";
import { listTree } from "../lance-checks.ts";

export const DAMAGES = ["missing", "zero length", "truncated", "random bytes"] as const;
export type Damage = (typeof DAMAGES)[number];

/** Damages one file in place. Truncation keeps the first half (at least one byte less). */
export async function damageFile(path: string, damage: Damage): Promise<void> {
  const { size } = await stat(path);
  switch (damage) {
    case "missing":
      return rm(path);
    case "zero length":
      return truncate(path, 0);
    case "truncated":
      return truncate(path, Math.max(0, Math.min(size - 1, Math.floor(size / 2))));
    case "random bytes":
      return writeFile(path, randomBytes(size));
  }
}

/**
 * A same-size overwrite of a data, deletion or index file whose version records its size passes
 * the listing's size check, and the default proof reads no more of such a file (docs/cleanup.md,
 * "What the proof reads"): the matrices run that case with the deep proof, which reads its end.
 */
export function deepProofFor(damage: Damage, sizedContentFile: boolean): { verifyData?: true } {
  return damage === "random bytes" && sizedContentFile ? { verifyData: true } : {};
}

/** Every version counts as old and every unreferenced file as unproven-but-old: the most a cleanup could delete. */
export function aggressive(now = new Date(Date.now() + 400 * 86_400_000)) {
  return { settings: { olderThanMs: 86_400_000, retainVersions: 1, safetyWindowMs: 86_400_000 }, now: () => now };
}

export interface CleanupOutcome {
  /** The run's report, or null when it refused. */
  report: CleanupReport | null;
  /** The refusal's one line, when it refused. */
  error: string | null;
  /** Files outside `_lakewarden/` that the run removed. */
  deleted: string[];
  /** The dry run's planned deletes (its report's files), or its refusal. */
  dryRun: { planned: string[]; error: string | null };
}

/** The dry run, then the run, on the damaged table, and what each did. */
export async function cleanDamaged(
  tableDir: string,
  format: TableFormat,
  options: { settings?: object; now?: () => Date; verifyData?: boolean } = aggressive(),
): Promise<CleanupOutcome> {
  const base = { format, ...options };
  const dry = await runCleanup(new LocalStore(tableDir), { ...base, dryRun: true }).then(
    (report) => ({
      planned: report.files
        .filter((file) => file.action === "delete")
        .map((file) => file.key)
        .sort(),
      error: null,
    }),
    (error: Error) => ({ planned: [], error: error.message }),
  );
  const before = withoutOurs(await listTree(tableDir));
  const run = await runCleanup(new LocalStore(tableDir), base).then(
    (report) => ({ report, error: null as string | null }),
    (error: Error) => ({ report: null, error: error.message }),
  );
  const after = new Set(withoutOurs(await listTree(tableDir)));
  return { ...run, deleted: before.filter((file) => !after.has(file)), dryRun: dry };
}

/**
 * Versions the run reports as kept whose data it promises to keep readable. `promised` tells those
 * from versions kept for another reason (Delta keeps the log above its kept checkpoint, but its
 * VACUUM keeps only the data the latest snapshot and the retention window need).
 */
export function keptVersions(outcome: CleanupOutcome, promised: (reason: string) => boolean = () => true): number[] {
  return outcome.report ? outcome.report.versions.filter((v) => v.keep && promised(v.reason)).map((v) => v.version) : [];
}

/**
 * The verdict: problems in words (empty: the case passes). `readKept` reads the given versions
 * with the independent reader and says which differ from before the damage.
 */
export async function verdict(outcome: CleanupOutcome, readKept: (versions: number[]) => Promise<string[]>, promised?: (reason: string) => boolean): Promise<string[]> {
  const problems: string[] = [];
  // Both refuse (the line may name another of the versions that need the file: reads run in parallel), or both plan the same.
  if ((outcome.dryRun.error === null) !== (outcome.error === null)) {
    problems.push(`dry run ${outcome.dryRun.error ? `refused (${outcome.dryRun.error})` : "planned deletes"} but the run ${outcome.error ? `refused (${outcome.error})` : "ran"}`);
  } else if (outcome.error === null) {
    const deleted = [...outcome.deleted].sort();
    const planned = outcome.dryRun.planned.filter((key) => !key.startsWith("_lakewarden/"));
    if (JSON.stringify(planned) !== JSON.stringify(deleted)) problems.push(`dry run planned ${planned.length} deletes, the run deleted ${deleted.length}`);
  }
  if (outcome.deleted.length === 0) return problems;
  const unreadable = await readKept(keptVersions(outcome, promised));
  for (const line of unreadable) problems.push(`deleted ${outcome.deleted.length} file(s), and then ${line}`);
  return problems;
}

export async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

export async function readJsonFile<T>(path: string): Promise<T> {
  return JSON.parse(await readFile(path, "utf8")) as T;
}

export function withoutOurs(files: readonly string[]): string[] {
  return files.filter((file) => !file.startsWith("_lakewarden/"));
}

export { join };
