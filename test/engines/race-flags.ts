/**
 * The cleanup flags of the races: retentions far below the defaults, so every round has work,
 * each with the acknowledgement the CLI requires (README, `lakewarden cleanup`). The safety window
 * of 5 s is far longer than any one commit of these writers takes (well under a second from the
 * first data file to the commit), which is the condition under which the README allows a window
 * below an hour. On Delta and Iceberg the table's own retentions decide, and these only lengthen them.
 */
export const SHORT_RACE_CLEANUP_FLAGS = ["--older-than", "1s", "--allow-short-retention", "--retain-versions", "2", "--safety-window", "5s", "--allow-short-safety-window"];
