/**
 * The engine races (race.ts) on S3: moto's server is the endpoint of the writers (delta-rs, Lance,
 * pyiceberg), their readers and lakewarden alike, and enforces the conditional writes every
 * commit and lakewarden's lease and head rely on. Shorter than the local races (moto answers
 * slower). On S3 the Delta writer cannot date its log back (delta_table.py), so Delta's log
 * cleanup has no work here: VACUUM and the writer's own log cleanup do.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTempDir, removeDir } from "../support/lance-datasets.ts";
import { deltaTable, icebergFolderTable, icebergSqlTable, lanceTable } from "./engine-tables.ts";
import { startMotoS3, type MotoS3 } from "./moto-endpoint.ts";
import type { EngineTable } from "./race.ts";
import { figuresLine, raceWritersAndMaintenance } from "./race.ts";
import { SHORT_RACE_CLEANUP_FLAGS } from "./race-flags.ts";

const BUCKET = "lake";
let moto: MotoS3;
let localDir: string;
const saved: Record<string, string | undefined> = {};

beforeAll(async () => {
  moto = await startMotoS3();
  await moto.createBucket(BUCKET);
  localDir = await makeTempDir("lw-race-s3-");
  // lakewarden runs in this process: its S3 store reads the endpoint from the environment.
  for (const [name, value] of Object.entries(moto.env)) {
    saved[name] = process.env[name];
    process.env[name] = value;
  }
});

afterAll(async () => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  await moto?.stop();
  if (localDir) await removeDir(localDir);
});

// pyiceberg makes many requests a commit, and moto answers one at a time: fewer commits there.
describe.each<[string, (root: string, local: string) => EngineTable, boolean, number]>([
  ["pylance", lanceTable, true, 5],
  ["delta-rs", deltaTable, false, 5],
  ["pyiceberg, catalog-less", icebergFolderTable, true, 2],
  ["pyiceberg, SQL catalog", icebergSqlTable, false, 2],
])("%s on moto's S3 while lakewarden maintains", (_name, makeTable, removesVersions, commitsPerRound) => {
  it("every kept version reads back with the rows the writer wrote; removed ones stay in the history", async () => {
    const root = `s3://${BUCKET}/${randomUUID()}`;
    const figures = await raceWritersAndMaintenance(makeTable(root, localDir), {
      rounds: 2,
      commitsPerRound,
      cleanupFlags: SHORT_RACE_CLEANUP_FLAGS,
      retainVersions: 2,
      workDir: localDir,
      env: moto.env,
      pauseMs: 1000,
      settleMs: 2500,
    });
    console.log(figuresLine(figures));
    expect(figures.problems).toEqual([]);
    expect(figures.runErrors).toEqual([]);
    expect(figures.rowsLost).toBe(0);
    expect(figures.unreadableKept).toBe(0);
    expect(figures.cleanups).toBeGreaterThan(0);
    if (removesVersions) expect(figures.versionsRemoved).toBeGreaterThan(0);
  });
});
