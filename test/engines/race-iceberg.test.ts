/**
 * pyiceberg commits while lakewarden cleans and writes heads (race.ts says what is checked), on
 * both kinds of Iceberg table: catalog-less, where lakewarden's expiry commit races the writer's
 * commits for the next v<N>.metadata.json, and in the SQL catalog, where pyiceberg expires
 * snapshots and lakewarden, given the catalog's pointer, removes what no snapshot reaches.
 */
import { afterAll, describe, expect, it } from "vitest";
import { makeTempDir, removeDir } from "../support/lance-datasets.ts";
import { icebergFolderTable, icebergSqlTable } from "./engine-tables.ts";
import type { EngineTable } from "./race.ts";
import { figuresLine, raceWritersAndMaintenance } from "./race.ts";
import { SHORT_RACE_CLEANUP_FLAGS } from "./race-flags.ts";

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await removeDir(dir);
});

describe.each<[string, (dir: string) => EngineTable]>([
  ["catalog-less", icebergFolderTable],
  ["SQL catalog", icebergSqlTable],
])("pyiceberg writes a %s table while lakewarden maintains", (kind, makeTable) => {
  // settleMs: the cleanup after each round waits until the round's snapshots are past the table's 2-second max-snapshot-age-ms.
  it("every kept snapshot reads back with the rows the writer wrote; removed ones stay in the history", async () => {
    const dir = await makeTempDir("lw-race-iceberg-");
    dirs.push(dir);
    const figures = await raceWritersAndMaintenance(makeTable(dir), {
      rounds: 3,
      commitsPerRound: 5,
      cleanupFlags: SHORT_RACE_CLEANUP_FLAGS,
      retainVersions: 2,
      workDir: dir,
      settleMs: 2500,
    });
    console.log(figuresLine(figures));
    expect(figures.problems).toEqual([]);
    expect(figures.runErrors).toEqual([]);
    expect(figures.rowsLost).toBe(0);
    expect(figures.unreadableKept).toBe(0);
    if (kind === "catalog-less") expect(figures.versionsRemoved).toBeGreaterThan(0);
    // Given the catalog's pointer, lakewarden commits nothing: pyiceberg's own expiry removes snapshots, lakewarden keeps their history.
    else expect(figures.versionsRemoved).toBe(0);
    expect(figures.cleanedUp).toBeGreaterThan(0);
    expect(figures.filesDeleted).toBeGreaterThan(0);
    expect(figures.cleanupsDuringWrites).toBeGreaterThan(0);
  });
});
