/** Lance from Python (pylance) commits while lakewarden cleans and writes heads: race.ts says what is checked. */
import { afterAll, describe, expect, it } from "vitest";
import { makeTempDir, removeDir } from "../support/lance-datasets.ts";
import { lanceTable } from "./engine-tables.ts";
import { figuresLine, raceWritersAndMaintenance } from "./race.ts";
import { SHORT_RACE_CLEANUP_FLAGS } from "./race-flags.ts";

// The cleanup after each round waits until the round's versions are past --older-than 1s: on an idle machine a round takes less.
const SETTLE_MS = 1500;
const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await removeDir(dir);
});

describe("pylance writes while lakewarden maintains", () => {
  it("every kept version reads back with the rows the writer wrote; removed ones stay in the history", async () => {
    const dir = await makeTempDir("lw-race-lance-");
    dirs.push(dir);
    const figures = await raceWritersAndMaintenance(lanceTable(dir), {
      rounds: 3,
      commitsPerRound: 6,
      cleanupFlags: SHORT_RACE_CLEANUP_FLAGS,
      retainVersions: 2,
      workDir: dir,
      settleMs: SETTLE_MS,
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

describe("pylance's newest format (data storage 2.3, stable row ids) while lakewarden maintains", () => {
  it("is read and cleaned like the default, every kept version readable by pylance", async () => {
    const dir = await makeTempDir("lw-race-lance-next-");
    dirs.push(dir);
    const figures = await raceWritersAndMaintenance(lanceTable(dir), {
      rounds: 2,
      commitsPerRound: 6,
      cleanupFlags: SHORT_RACE_CLEANUP_FLAGS,
      retainVersions: 2,
      workDir: dir,
      settleMs: SETTLE_MS,
      env: { LAKEWARDEN_LANCE_DATA_STORAGE_VERSION: "2.3", LAKEWARDEN_LANCE_STABLE_ROW_IDS: "1" },
    });
    console.log(figuresLine(figures));
    expect(figures.problems).toEqual([]);
    expect(figures.runErrors).toEqual([]);
    expect(figures.versionsRemoved).toBeGreaterThan(0);
  });
});
