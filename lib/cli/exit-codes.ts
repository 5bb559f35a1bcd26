/**
 * The `lakewarden` command's exit statuses, as docs/cli.md and `lakewarden --help` list them.
 * Scripts (cron, CI, `timeout`) can tell "try again later" (3) from "fix the command" (2)
 * from "something broke" (1).
 */
export const EXIT_CODES = {
  /** The command did what it was asked. */
  ok: 0,
  /** A runtime failure: storage errors, a table that cannot be read, failed deletes. */
  failure: 1,
  /** A usage error: unknown flag, bad flag value, missing argument. Nothing was read or written. */
  usage: 2,
  /** Another cleaner holds the table's lease: nothing was touched; try again later. */
  leaseHeld: 3,
  /**
   * Done, but part of lakewarden's own history could not be read: a damaged checkpoint or archive
   * segment, named on stderr with the versions it covered. What could be read was listed or kept.
   */
  historyIncomplete: 4,
  /** Interrupted (Ctrl-C, SIGINT, SIGTERM): stopped cleanly, safe to run again. */
  interrupted: 130,
} as const;

/** The same list as `--help` prints it. */
export const EXIT_CODES_HELP = [
  "Exit status:",
  "  0    ok",
  "  1    runtime failure (storage error, unreadable table, failed deletes)",
  "  2    usage error (unknown flag, bad value, missing argument): nothing was touched",
  "  3    the table's lease is held by another cleaner: nothing was touched, try later",
  "  4    done, but a checkpoint or archive segment of the history could not be read (named on stderr)",
  "  130  interrupted (Ctrl-C, SIGINT, SIGTERM): stopped cleanly, safe to run again",
].join("\n");
