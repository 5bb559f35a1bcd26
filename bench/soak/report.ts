/**
 * The soak's summary: printed at the end and written into the results file, where each store
 * (local, s3) has its own section that a new run of that store replaces.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname } from "node:path";
import type { MachineInfo } from "../harness/machine.ts";
import type { CleanerStats } from "./cleaner.ts";
import type { HeadFollowerStats } from "./head-follower.ts";
import type { CheckStats } from "./invariants.ts";
import type { ReaderStats } from "./readers.ts";
import type { SoakOptions } from "./options.ts";
import type { Violation } from "./violations.ts";
import type { WriterStats } from "./writer.ts";

export interface SoakSummary {
  options: SoakOptions;
  command: string;
  machine: MachineInfo;
  startedAt: Date;
  durationMs: number;
  writer: WriterStats;
  cleaner: CleanerStats;
  head: HeadFollowerStats;
  readers: ReaderStats;
  checks: CheckStats;
  versionsEverCommitted: number;
  versionsLive: number;
  violations: Violation[];
}

function listCounts(map: Map<string, number>, limit = 8): string {
  if (map.size === 0) return "none";
  const entries = [...map].sort((a, b) => b[1] - a[1]);
  const shown = entries.slice(0, limit).map(([key, n]) => `${n} × ${key}`);
  return shown.join("; ") + (entries.length > limit ? `; and ${entries.length - limit} more` : "");
}

function bytes(n: number): string {
  return n >= 2 ** 20 ? `${(n / 2 ** 20).toFixed(1)} MiB` : `${(n / 1024).toFixed(1)} KiB`;
}

export function summaryLines(s: SoakSummary): string[] {
  const files = [...s.cleaner.filesRemoved].reduce((sum, [, n]) => sum + n, 0);
  const byKind = [...s.cleaner.filesRemoved].map(([kind, n]) => `${kind} ${n}`).join(", ");
  const steps = Object.entries(s.writer.steps)
    .filter(([, n]) => n > 0)
    .map(([step, n]) => `${step} ${n}`)
    .join(", ");
  return [
    `| | |`,
    `|---|---|`,
    `| store | ${s.options.store} |`,
    `| duration | ${(s.durationMs / 60_000).toFixed(1)} min (writer ${s.options.minutes} min, seed ${s.options.seed}) |`,
    `| rounds (cleanup + invariant check) | ${s.checks.rounds} |`,
    `| commits | ${s.writer.mainCommits} on main, ${s.writer.branchCommits} on branches (${s.versionsEverCommitted} main versions, ${s.versionsLive} still live at the end) |`,
    `| writer steps | ${steps} |`,
    `| cleanup runs | ${s.cleaner.runs}: ${s.cleaner.completed} completed (${s.cleaner.viaCli} of them through the CLI); ${s.cleaner.aborted} aborted part way and ${s.cleaner.faulted} hit by an injected failed request, on purpose; ${s.cleaner.leaseHeld} stopped by the lease (${s.cleaner.contenderRuns} runs came from the second cleaner) |`,
    `| versions removed | ${s.cleaner.versionsRemoved} |`,
    `| files removed | ${files} (${byKind || "none"}), ${bytes(s.cleaner.bytesRemoved)} |`,
    `| re-plans (table moved while planning) | ${s.cleaner.replans} |`,
    `| heads written | ${s.head.writes} (${listCounts(s.head.actions)}) |`,
    `| reads | LanceDB latest ${s.readers.lancedbLoads}; openTable warm ${s.readers.warmLoads}, cold ${s.readers.coldLoads} (${s.readers.headLoads} served by the head) |`,
    `| reads that lost their version to cleanup (allowed at older-than 0s) | ${s.readers.racedWithCleanup}${s.readers.raceExamples.length ? ` (e.g. ${s.readers.raceExamples[0]})` : ""} |`,
    `| timeline reads during cleanups | ${s.readers.timelineReads}; ${s.readers.timelineGaps} left out versions a running cleanup had removed but not yet archived${s.readers.gapExamples.length ? ` (e.g. ${s.readers.gapExamples[0]})` : ""} |`,
    `| checked | ${s.checks.versionsOpened} kept versions, ${s.checks.tagsOpened} tags, ${s.checks.branchVersionsOpened} branch versions opened in LanceDB; ${s.checks.filesChecked} referenced files; \`lakewarden versions\` ${s.checks.cliVersionsRuns} times |`,
    `| writer errors | ${listCounts(s.writer.errors)} |`,
    `| LanceDB tag/branch listings repeated (a ref deleted under them) | ${s.checks.lancedbRefListRaces} |`,
    `| cleanup errors | ${listCounts(s.cleaner.errors)} |`,
    `| cleanup warnings | ${listCounts(s.cleaner.warnings, 4)} |`,
    `| head write errors | ${listCounts(s.head.errors)} |`,
    `| **invariant violations** | **${s.violations.length}** |`,
  ];
}

/** The results file is committed: no path of this machine in it. */
function scrub(text: string): string {
  return text.split(tmpdir()).join("$TMPDIR");
}

export function sectionFor(s: SoakSummary): string {
  const m = s.machine;
  const lines = [
    `## ${s.options.store}`,
    "",
    `\`${s.command}\`, ${s.startedAt.toISOString()}; ${m.cpuModel}, ${m.cores} cores, ${m.memoryGiB} GiB, ${m.os}, Node ${m.node}, LanceDB ${m.lancedb}.`,
    "",
    ...summaryLines(s),
  ];
  if (s.violations.length > 0) {
    lines.push("", "Violations (first 20):", "");
    for (const v of s.violations.slice(0, 20)) lines.push(`- [${v.check}] round ${v.round}, ${(v.atMs / 1000).toFixed(1)} s: ${v.message}`);
  }
  return scrub(lines.join("\n")) + "\n";
}

const TITLE = `# Soak: cleanup under a live LanceDB writer

Written by \`npm run soak\` (bench/soak/). Each section is the last run on that store. What runs
and what is checked after every round: bench/soak/run.ts and bench/soak/invariants.ts.

Writer errors are LanceDB's, not violations: the writer re-reads the table after one and goes
on. Known: \`compact\` (LanceDB \`optimize()\`) can fail with "manifest not found" when a
cleanup removes an old version file while LanceDB 0.31 (lance 8.0.0) lists and reads every
manifest for its own prune pass; newer Lance skips an old manifest a concurrent cleanup removed.
LanceDB's own \`tags().list()\` fails the same way when a tag is deleted between its listing of
\`_refs/\` and its HEAD of the file; the checks list again (counted below). On S3 every cleanup
goes through the library: a \`lakewarden cleanup\` child process would bypass this process's
conditional-write semantics for fauxqs, which ignores If-None-Match, so the lease would not hold.
`;

/** Replaces this store's section in the results file (creating the file), keeping the other's. */
export async function writeResults(path: string, summary: SoakSummary): Promise<void> {
  let existing = "";
  try {
    existing = await readFile(path, "utf8");
  } catch {
    // first run
  }
  const sections = new Map<string, string>();
  for (const part of existing.split(/^(?=## )/m).slice(1)) sections.set(part.split("\n")[0]!.slice(3).trim(), part.trimEnd() + "\n");
  sections.set(summary.options.store, sectionFor(summary));
  const ordered = ["local", "s3"].filter((k) => sections.has(k)).map((k) => sections.get(k)!);
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, [TITLE, ...ordered].join("\n"));
}
