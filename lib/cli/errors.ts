import { CommanderError } from "commander";
import { StoreError } from "../store/errors.ts";
import { TableFormatError } from "../formats/errors.ts";
import { LeaseHeldError } from "../maintenance/errors.ts";
import { EXIT_CODES } from "./exit-codes.ts";

/** A problem with what the user asked for (bad flag value, unknown table format...): exit status 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/** The command stopped because it was interrupted (SIGINT/SIGTERM): exit status 130. */
export class InterruptedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "InterruptedError";
  }
}

/**
 * The command did its work, but part of lakewarden's own history could not be read (a damaged
 * checkpoint or archive segment, each already named on stderr): exit status 4.
 */
export class HistoryIncompleteError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "HistoryIncompleteError";
  }
}

/**
 * One line for the user: what failed and where. Typed errors already carry the object's URI;
 * anything else is unexpected, so it says so and points at --verbose for the stack.
 */
export function describeError(error: unknown, verbose: boolean): string {
  if (verbose && error instanceof Error && error.stack) return `lakewarden: ${error.stack}`;
  if (error instanceof StoreError) return `lakewarden: ${error.message}`;
  if (error instanceof TableFormatError || error instanceof UsageError || error instanceof InterruptedError || error instanceof HistoryIncompleteError)
    return `lakewarden: ${error.message}`;
  if (error instanceof Error) {
    return `lakewarden: unexpected ${error.name}: ${firstLine(error.message)} (run with --verbose for details)`;
  }
  return `lakewarden: unexpected error: ${String(error)}`;
}

/** The exit status for an error that ended a command (see exit-codes.ts). */
export function exitCodeOf(error: unknown): number {
  if (error instanceof UsageError) return EXIT_CODES.usage;
  if (error instanceof LeaseHeldError) return EXIT_CODES.leaseHeld;
  if (error instanceof InterruptedError) return EXIT_CODES.interrupted;
  if (error instanceof HistoryIncompleteError) return EXIT_CODES.historyIncomplete;
  return EXIT_CODES.failure;
}

export function isCommanderExit(error: unknown): error is CommanderError {
  return error instanceof CommanderError;
}

function firstLine(text: string): string {
  return text.split("\n", 1)[0] ?? text;
}
