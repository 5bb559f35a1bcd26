/** Runs `lakewarden` commands in-process, as a user would from the shell, and reads `--stats`. */
import { runCli } from "../../lib/cli/run-cli.ts";
import { BufferIO } from "../../lib/cli/io.ts";
import type { RequestCounts } from "../../lib/store/object-store.ts";

export interface CliRun {
  stdout: string;
  /** The request counts of the `--stats` line. */
  requests: RequestCounts;
}

/** Runs `lakewarden <args> --stats`; a non-zero exit is an error carrying the CLI's message. */
export async function runLakewarden(args: string[]): Promise<CliRun> {
  const io = new BufferIO();
  const code = await runCli([...args, "--stats"], io);
  if (code !== 0) throw new Error(`lakewarden ${args.join(" ")} exited ${code}: ${io.stderr.trim()}`);
  const statsLine = io.stderr.trimEnd().split("\n").at(-1) ?? "";
  let requests: RequestCounts;
  try {
    requests = (JSON.parse(statsLine) as { requests: RequestCounts }).requests;
  } catch {
    throw new Error(`lakewarden ${args.join(" ")}: no --stats line on stderr (got ${JSON.stringify(statsLine)})`);
  }
  return { stdout: io.stdout, requests };
}
