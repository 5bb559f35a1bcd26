/**
 * delta-rs commits while lakewarden cleans and writes heads: race.ts says what is checked. The
 * writer dates its log a day back at the end of each round (delta_table.py: Delta's log cleanup
 * cuts off at the start of a day), so the cleanup after the round has log to remove, and waits
 * 3 s first, so VACUUM has files past the table's 2-second deletedFileRetentionDuration
 * (lengthened to the 5 s safety window). delta-rs's optimize and z-order clean the expired log
 * themselves too (delta-rs 1.6 does it whatever PostCommitHookProperties says).
 */
import { afterAll, describe, expect, it } from "vitest";
import { makeTempDir, removeDir } from "../support/lance-datasets.ts";
import { deltaTable } from "./engine-tables.ts";
import { figuresLine, raceWritersAndMaintenance } from "./race.ts";
import { SHORT_RACE_CLEANUP_FLAGS } from "./race-flags.ts";

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await removeDir(dir);
});

describe("delta-rs writes while lakewarden maintains", () => {
  it("every kept version reads back with the rows the writer wrote; removed ones stay in the history", async () => {
    const dir = await makeTempDir("lw-race-delta-");
    dirs.push(dir);
    const figures = await raceWritersAndMaintenance(deltaTable(dir), {
      rounds: 3,
      commitsPerRound: 6,
      cleanupFlags: SHORT_RACE_CLEANUP_FLAGS,
      retainVersions: 2,
      workDir: dir,
      env: { LAKEWARDEN_DELTA_AGE_LOG_SECONDS: "86400" },
      settleMs: 3000,
    });
    console.log(figuresLine(figures));
    expect(figures.problems).toEqual([]);
    expect(figures.runErrors).toEqual([]);
    expect(figures.rowsLost).toBe(0);
    expect(figures.unreadableKept).toBe(0);
    // Cleanup had work and did it: the race is not a quiet table.
    expect(figures.versionsRemoved).toBeGreaterThan(0);
    expect(figures.filesDeleted).toBeGreaterThan(0);
    expect(figures.cleanupsDuringWrites).toBeGreaterThan(0);
  });
});
