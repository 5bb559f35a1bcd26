/**
 * How `versions` and `checkpoint` say that part of lakewarden's own history could not be read:
 * one stderr line per damaged file (what, where, which versions it covered, which of those
 * nothing lists now, what serves meanwhile), then exit status 4 (exit-codes.ts).
 */
import { describeHistoryProblem } from "../checkpoint/damaged.ts";
import type { HistoryProblem } from "../checkpoint/damaged.ts";
import { HistoryIncompleteError } from "./errors.ts";
import type { CliIO } from "./io.ts";

/** Prints each problem on stderr and ends the command with exit status 4; nothing when there are none. */
export function reportHistoryProblems(io: CliIO, table: string, problems: readonly HistoryProblem[]): void {
  if (problems.length === 0) return;
  for (const problem of problems) io.err(`lakewarden: warning: ${describeHistoryProblem(problem)}\n`);
  throw new HistoryIncompleteError(
    `${table}: ${problems.length} file${problems.length === 1 ? "" : "s"} of lakewarden's history could not be read (above); everything that could be read was used`,
  );
}
