import { buildProgram } from "./program.ts";
import type { CliIO } from "./io.ts";
import { describeError, isCommanderExit } from "./errors.ts";

/** Runs one command line; returns the exit code. Never throws: errors become one line on stderr. */
export async function runCli(argv: readonly string[], io: CliIO): Promise<number> {
  const program = buildProgram({ io });
  try {
    await program.parseAsync([...argv], { from: "user" });
    return 0;
  } catch (error) {
    if (isCommanderExit(error)) return error.exitCode;
    io.err(`${describeError(error, argv.includes("--verbose"))}\n`);
    return 1;
  }
}
