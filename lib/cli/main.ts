/** Entry point of the `lakewarden` executable (started by bin.js). */
import { runCli } from "./run-cli.ts";
import { processIO } from "./io.ts";

process.exitCode = await runCli(process.argv.slice(2), processIO);
