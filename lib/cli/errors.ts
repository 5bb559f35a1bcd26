import { CommanderError } from "commander";
import { StoreError } from "../store/errors.ts";
import { TableFormatError } from "../formats/errors.ts";

/** A problem with what the user asked for (bad flag value, unknown table format...). */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/**
 * One line for the user: what failed and where. Typed errors already carry the object's URI;
 * anything else is unexpected, so it says so and points at --verbose for the stack.
 */
export function describeError(error: unknown, verbose: boolean): string {
  if (verbose && error instanceof Error && error.stack) return `lakewarden: ${error.stack}`;
  if (error instanceof StoreError) return `lakewarden: ${error.message}`;
  if (error instanceof TableFormatError || error instanceof UsageError) return `lakewarden: ${error.message}`;
  if (error instanceof Error) {
    return `lakewarden: unexpected ${error.name}: ${firstLine(error.message)} (run with --verbose for details)`;
  }
  return `lakewarden: unexpected error: ${String(error)}`;
}

export function isCommanderExit(error: unknown): error is CommanderError {
  return error instanceof CommanderError;
}

function firstLine(text: string): string {
  return text.split("\n", 1)[0] ?? text;
}
