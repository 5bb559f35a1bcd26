/**
 * The `lakewarden` program: one commander program, one file per command under commands/.
 * Every command that touches a table takes the same `--json`, `--stats` and `--verbose`
 * meanings: `--json` puts one JSON document on stdout, `--stats` ends stderr with one line
 * `{"requests":{...}}`, `--verbose` adds stack traces to errors.
 */
import { readFileSync } from "node:fs";
import { Command } from "commander";
import { EXIT_CODES_HELP } from "./exit-codes.ts";
import { formatNames } from "../formats/index.ts";
import type { CliIO } from "./io.ts";
import { registerVersionsCommand } from "./commands/versions.ts";
import { registerHeadCommand } from "./commands/head.ts";
import { registerCleanupCommand } from "./commands/cleanup.ts";
import { registerCheckpointCommand } from "./commands/checkpoint.ts";
import { registerVersionAtCommand } from "./commands/version-at.ts";
import { registerServeCommand } from "./commands/serve.ts";
import { registerLeaseCommand } from "./commands/lease.ts";
import { registerConfigCommand } from "./commands/config.ts";
import { registerPinCommands } from "./commands/pins.ts";
import { registerStorageCommand } from "./commands/storage.ts";
import { registerReportCommand } from "./commands/report.ts";
import { registerFilesCommand } from "./commands/files.ts";
import { registerScanCommand } from "./commands/scan.ts";

const ENVIRONMENT_HELP = [
  "Environment:",
  "  AWS_REGION, AWS_ENDPOINT_URL_S3, AWS_ACCESS_KEY_ID, ...   S3 settings, as the AWS SDK reads them",
  "  LAKEWARDEN_S3_REQUEST_TIMEOUT   give up on an S3 request with no answer after this long (default 15s)",
].join("\n");

export interface ProgramContext {
  io: CliIO;
}

export function buildProgram(context: ProgramContext): Command {
  const program = new Command("lakewarden")
    .description(
      `Maintains lakehouse tables (${formatNames().join(", ")}) on S3 or local disk: head objects, cleanup, version checkpoints, reader pins, storage breakdowns, HTML reports.`,
    )
    .version(packageVersion(), "--version", "print lakewarden's version")
    .option("--verbose", "print stack traces with errors")
    .addHelpText("after", `\n${EXIT_CODES_HELP}\n\n${ENVIRONMENT_HELP}\n`)
    .configureOutput({
      writeOut: (text) => context.io.out(text),
      writeErr: (text) => context.io.err(text),
      // Usage errors in the one-line format of every other error: "lakewarden: <problem> (...)".
      outputError: (text, write) => write(`lakewarden: ${text.replace(/^error: /, "").trimEnd()} (run with --help for usage)\n`),
    })
    .exitOverride();

  registerVersionsCommand(program, context);
  registerHeadCommand(program, context);
  registerFilesCommand(program, context);
  registerScanCommand(program, context);
  registerCleanupCommand(program, context);
  registerCheckpointCommand(program, context);
  registerVersionAtCommand(program, context);
  registerLeaseCommand(program, context);
  registerConfigCommand(program, context);
  registerPinCommands(program, context);
  registerStorageCommand(program, context);
  registerReportCommand(program, context);
  registerServeCommand(program, context);
  return program;
}

/** The version in package.json: two folders up from here both in the sources (lib/cli) and in the package (dist/cli). */
function packageVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
  return manifest.version;
}
