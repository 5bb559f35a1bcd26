/**
 * How `versions` and `checkpoint` say that part of lakewarden's own history could not be read:
 * one stderr line per damaged file (what, where, which versions it covered, which of those
 * nothing lists now, what serves meanwhile), then exit status 4 (exit-codes.ts).
 */
import { describeRange } from "../checkpoint/damaged.ts";
import type { HistoryProblem } from "../checkpoint/damaged.ts";
import { HistoryIncompleteError } from "./errors.ts";
import type { CliIO } from "./io.ts";

/** Ranges shown in a line; the JSON has them all. */
const RANGES_SHOWN = 5;

export function describeHistoryProblem(problem: HistoryProblem): string {
  const { covered, unlisted } = problem;
  const versions = covered.from === null ? `versions up to ${covered.through}` : covered.from === covered.through ? `version ${covered.from}` : `versions ${covered.from}-${covered.through}`;
  const shown = unlisted.slice(0, RANGES_SHOWN).map(describeRange).join(", ") + (unlisted.length > RANGES_SHOWN ? `, and ${unlisted.length - RANGES_SHOWN} more ranges` : "");
  const missing = unlisted.length === 0 ? "every one of them is still listed" : `not listed now: ${shown}`;
  const kept =
    problem.set_aside === null
      ? ""
      : `; set aside at ${problem.set_aside}: repair it there and run lakewarden checkpoint to merge its rows back, or delete it to accept the loss`;
  return `history incomplete: ${problem.role} ${problem.file} cannot be read (${reasonOf(problem)}); it covered ${versions}; ${missing}; listed from ${problem.served_by.join(", ")}${kept}`;
}

/** The problem without the file's URI in front (the line names the file already). */
function reasonOf(problem: HistoryProblem): string {
  const colon = problem.problem.indexOf(": ");
  return colon > 0 && problem.problem.slice(0, colon).endsWith(problem.file) ? problem.problem.slice(colon + 2) : problem.problem;
}

/** Prints each problem on stderr and ends the command with exit status 4; nothing when there are none. */
export function reportHistoryProblems(io: CliIO, table: string, problems: readonly HistoryProblem[]): void {
  if (problems.length === 0) return;
  for (const problem of problems) io.err(`lakewarden: warning: ${describeHistoryProblem(problem)}\n`);
  throw new HistoryIncompleteError(
    `${table}: ${problems.length} file${problems.length === 1 ? "" : "s"} of lakewarden's history could not be read (above); everything that could be read was used`,
  );
}
