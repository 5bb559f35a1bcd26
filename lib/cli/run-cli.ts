import { buildProgram } from "./program.ts";
import type { CliIO } from "./io.ts";
import { describeError, exitCodeOf, isCommanderExit } from "./errors.ts";
import { EXIT_CODES } from "./exit-codes.ts";
import { takeStatsLine } from "./table-command.ts";

/**
 * Runs one command line; returns the exit status (exit-codes.ts). Never throws: errors become
 * one line on stderr. With `--stats`, the request counts are the very last line on stderr,
 * after warnings and after the error line.
 */
export async function runCli(argv: readonly string[], io: CliIO): Promise<number> {
  const program = buildProgram({ io });
  let code: number = EXIT_CODES.ok;
  try {
    await program.parseAsync([...argv], { from: "user" });
  } catch (error) {
    if (isCommanderExit(error)) {
      // Commander has printed its message (or the help, or the version) already.
      code = error.exitCode === 0 ? EXIT_CODES.ok : EXIT_CODES.usage;
    } else {
      io.err(`${describeError(error, argv.includes("--verbose"))}\n`);
      code = exitCodeOf(error);
    }
  }
  const stats = takeStatsLine(io);
  if (stats !== null) io.err(stats);
  return code;
}
