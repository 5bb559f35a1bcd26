/**
 * Damaged or unsupported tables give one clear line naming the object and the problem, and a
 * `_last_checkpoint` that cannot be trusted is only a hint: the reader lists the log instead.
 */
import { appendFile, copyFile, readFile, rm, truncate, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { LocalStore } from "../../../lib/store/local-store.ts";
import { CorruptFileError, TableFormatError, UnsupportedFeatureError } from "../../../lib/formats/errors.ts";
import { deltaFormat } from "../../../lib/formats/delta/delta-format.ts";
import { runCleanup } from "../../../lib/maintenance/run-cleanup.ts";
import { loadSnapshot } from "../../../lib/formats/delta/snapshot.ts";
import { runDeltaCleanup } from "./run-planners.ts";
import { copyFixture } from "../../support/fixtures.ts";
import { oracleCommits, oracleLiveFiles } from "./duckdb-oracle.ts";
import { appendCommit, latestProtocolAndMetadata, listKeys, setAllTimes } from "./log-surgery.ts";

async function failure(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected a failure");
}

function livePaths(snapshot: Awaited<ReturnType<typeof loadSnapshot>>): string[] {
  return snapshot.adds.map((a) => a.path).sort();
}

describe("Delta bad input", () => {
  it("an unknown reader feature: one line naming the table and the feature", async () => {
    const dir = await copyFixture("delta", "simple_table_features");
    const error = await failure(loadSnapshot(new LocalStore(dir)));
    expect(error).toBeInstanceOf(UnsupportedFeatureError);
    expect(error.message).not.toContain("\n");
    expect(error.message).toContain(dir);
    expect(error.message).toMatch(/reader version 5|blahabl/);
  });

  it("a catalog-managed table is refused", async () => {
    const dir = await copyFixture("delta", "table-with-dv-small");
    await writeFile(
      join(dir, "_delta_log", "00000000000000000002.json"),
      `${JSON.stringify({ commitInfo: { operation: "UPGRADE" } })}\n${JSON.stringify({
        protocol: { minReaderVersion: 3, minWriterVersion: 7, readerFeatures: ["deletionVectors", "catalogManaged"], writerFeatures: ["deletionVectors", "catalogManaged"] },
      })}\n`,
    );
    const error = await failure(loadSnapshot(new LocalStore(dir)));
    expect(error).toBeInstanceOf(UnsupportedFeatureError);
    expect(error.message).toMatch(/catalog-managed/);
  });

  it("a truncated commit: one line naming the commit file and the line", async () => {
    const dir = await copyFixture("delta", "simple_table");
    const path = join(dir, "_delta_log", "00000000000000000004.json");
    const size = (await readFile(path)).length;
    await truncate(path, size - 40);
    const error = await failure(loadSnapshot(new LocalStore(dir)));
    expect(error).toBeInstanceOf(CorruptFileError);
    expect(error.message).not.toContain("\n");
    expect(error.message).toContain("00000000000000000004.json");
    expect(error.message).toMatch(/line \d+ is not valid JSON/);
  });

  it("a missing checkpoint part makes that checkpoint incomplete: the replay starts from the commits instead", async () => {
    const dir = await copyFixture("delta", "multi-part-checkpoint");
    const before = livePaths(await loadSnapshot(new LocalStore(dir)));
    await rm(join(dir, "_delta_log", "00000000000000000001.checkpoint.0000000002.0000000002.parquet"));
    const snapshot = await loadSnapshot(new LocalStore(dir));
    expect(snapshot.checkpoint).toBeNull();
    expect(livePaths(snapshot)).toEqual(before);
    expect(before.length).toBe((await oracleLiveFiles(dir)).files.length);
  });

  it("a missing checkpoint part with the commits before it gone: one line, nothing rebuilt", async () => {
    const dir = await copyFixture("delta", "multi-part-checkpoint");
    await rm(join(dir, "_delta_log", "00000000000000000001.checkpoint.0000000002.0000000002.parquet"));
    await rm(join(dir, "_delta_log", "00000000000000000000.json"));
    const error = await failure(loadSnapshot(new LocalStore(dir)));
    expect(error).toBeInstanceOf(CorruptFileError);
    expect(error.message).not.toContain("\n");
    expect(error.message).toMatch(/no complete checkpoint at or below version 1 and no commit 0/);
  });

  it("a corrupt _last_checkpoint (empty, bad JSON, wrong checksum, or a version with no checkpoint) falls back to listing", async () => {
    // Empty (how Spark's golden table corrupted-last-checkpoint-kernel corrupts it), truncated, wrong checksum, a version with no checkpoint.
    for (const content of [
      "",
      '{"version":20,"si',
      JSON.stringify({ version: 20, size: 5, checksum: "00000000000000000000000000000000" }),
      JSON.stringify({ version: 15, size: 5 }),
    ]) {
      const dir = await copyFixture("delta", "table_with_deletion_logs");
      const before = livePaths(await loadSnapshot(new LocalStore(dir)));
      await writeFile(join(dir, "_delta_log", "_last_checkpoint"), content);
      const snapshot = await loadSnapshot(new LocalStore(dir));
      expect(snapshot.version).toBe(20);
      expect(snapshot.checkpoint?.version).toBe(20);
      expect(livePaths(snapshot)).toEqual(before);
    }
  });

  it("a damaged checkpoint Parquet file: the replay falls back to an older checkpoint", async () => {
    const dir = await copyFixture("delta", "table_with_deletion_logs");
    const before = livePaths(await loadSnapshot(new LocalStore(dir)));
    await writeFile(join(dir, "_delta_log", "00000000000000000020.checkpoint.parquet"), "PAR1 not really");
    const snapshot = await loadSnapshot(new LocalStore(dir));
    expect(snapshot.checkpoint?.version).toBe(10);
    expect(livePaths(snapshot)).toEqual(before);
  });

  it("a gap in the log: one line naming the missing commit", async () => {
    const dir = await copyFixture("delta", "simple_table");
    await rm(join(dir, "_delta_log", "00000000000000000002.json"));
    const error = await failure(loadSnapshot(new LocalStore(dir)));
    expect(error).toBeInstanceOf(CorruptFileError);
    expect(error.message).toMatch(/commit 2 is missing/);
  });

  it("a commit line that is not an object, and an add without a path", async () => {
    const dir = await copyFixture("delta", "simple_commit");
    await appendFile(join(dir, "_delta_log", "00000000000000000000.json"), `\n${JSON.stringify({ add: { size: 3 } })}\n`);
    const error = await failure(loadSnapshot(new LocalStore(dir)));
    expect(error).toBeInstanceOf(CorruptFileError);
    expect(error.message).toMatch(/add action has no string "path"/);
  });

  it("a V2 checkpoint whose sidecar is missing is not used: the replay falls back to the older checkpoint", async () => {
    const dir = await copyFixture("delta", "checkpoint-v2-table");
    const before = livePaths(await loadSnapshot(new LocalStore(dir)));
    await rm(join(dir, "_delta_log", "_sidecars", "00000000000000000008.checkpoint.0000000001.0000000001.d55fb2cb-b8d3-4362-8572-c52142a9da1f.parquet"));
    const snapshot = await loadSnapshot(new LocalStore(dir));
    expect(snapshot.checkpoint?.version).toBe(6);
    expect(livePaths(snapshot)).toEqual(before);
  });

  describe("wired to cleanup: nothing is deleted", () => {
    const NOW = new Date("2030-01-01T00:00:00Z");
    const OLD = new Date("2029-01-01T00:00:00Z");

    it.each([
      ["an unknown reader feature", "simple_table_features", async (_dir: string) => {}, UnsupportedFeatureError, /reader version 5|blahabl/],
      [
        "a truncated commit",
        "simple_table",
        async (dir: string) => {
          const path = join(dir, "_delta_log", "00000000000000000004.json");
          await truncate(path, (await readFile(path)).length - 40);
        },
        CorruptFileError,
        /00000000000000000004\.json: line \d+ is not valid JSON/,
      ],
      [
        "a missing checkpoint part with the commits before it gone",
        "multi-part-checkpoint",
        async (dir: string) => {
          await rm(join(dir, "_delta_log", "00000000000000000001.checkpoint.0000000002.0000000002.parquet"));
          await rm(join(dir, "_delta_log", "00000000000000000000.json"));
        },
        CorruptFileError,
        /no complete checkpoint at or below version 1/,
      ],
    ] as const)("%s", async (_what, fixture, damage, type, message) => {
      const dir = await copyFixture("delta", fixture);
      await damage(dir);
      await setAllTimes(dir, OLD);
      const keys = await listKeys(dir);
      const error = await runDeltaCleanup(new LocalStore(dir), { now: NOW }).catch((e: unknown) => e as Error);
      expect(error).toBeInstanceOf(type);
      expect((error as Error).message).toMatch(message);
      expect((error as Error).message).not.toContain("\n");
      expect(await listKeys(dir)).toEqual(keys);
    });

    it.each(["off", "no", "0", ""])("delta.enableExpiredLogCleanup = %j (not a boolean, as Spark refuses it): runCleanup stops with one line, nothing deleted", async (value) => {
      const dir = await copyFixture("delta", "table_with_deletion_logs");
      const { metaData } = await latestProtocolAndMetadata(dir);
      await appendCommit(dir, 21, [
        { commitInfo: { operation: "SET TBLPROPERTIES" } },
        { metaData: { ...metaData, configuration: { ...(metaData.configuration as Record<string, string>), "delta.enableExpiredLogCleanup": value } } },
      ]);
      await setAllTimes(dir, OLD);
      const keys = await listKeys(dir);
      const error = await runCleanup(new LocalStore(dir), { format: deltaFormat, now: () => NOW }).catch((e: unknown) => e as Error);
      expect(error).toBeInstanceOf(TableFormatError);
      expect((error as Error).message).toMatch(/delta\.enableExpiredLogCleanup/);
      expect((error as Error).message).not.toContain("\n");
      expect((await listKeys(dir)).filter((k) => !k.startsWith("_lakewarden/"))).toEqual(keys);
    });

    it.each(["", " ", "1e1", "0x15"])(
      "checkpointProtection with delta.requireCheckpointProtectionBeforeVersion = %j (not a version, as Spark's toLong refuses it): runCleanup stops with one line, nothing deleted",
      async (value) => {
        const dir = await copyFixture("delta", "table_with_deletion_logs");
        const { protocol, metaData } = await latestProtocolAndMetadata(dir);
        await appendCommit(dir, 21, [
          { commitInfo: { operation: "DROP FEATURE" } },
          { protocol: { ...protocol, writerFeatures: [...(protocol.writerFeatures as string[]), "checkpointProtection"] } },
          { metaData: { ...metaData, configuration: { ...(metaData.configuration as Record<string, string>), "delta.requireCheckpointProtectionBeforeVersion": value } } },
        ]);
        await setAllTimes(dir, OLD);
        const keys = await listKeys(dir);
        const error = await runCleanup(new LocalStore(dir), { format: deltaFormat, now: () => NOW }).catch((e: unknown) => e as Error);
        expect(error).toBeInstanceOf(TableFormatError);
        expect((error as Error).message).toMatch(/delta\.requireCheckpointProtectionBeforeVersion/);
        expect((await listKeys(dir)).filter((k) => !k.startsWith("_lakewarden/"))).toEqual(keys);
      },
    );

    it("the latest version names a file the store does not hold (written under its undecoded name): runCleanup stops with one line, nothing deleted", async () => {
      const dir = await copyFixture("delta", "simple_table");
      const live = await oracleLiveFiles(dir);
      const latest = Math.max(...(await oracleCommits(dir)).map((c) => c.version));
      // A writer that did not URI-encode: the action says "x%20y.parquet" (the file "x y.parquet"), the file is named "x%20y.parquet".
      await copyFile(join(dir, live.files[0]!.path), join(dir, "x%20y.parquet"));
      await appendCommit(dir, latest + 1, [
        { commitInfo: { operation: "WRITE" } },
        { add: { path: "x%20y.parquet", size: 262, modificationTime: OLD.getTime(), dataChange: true, partitionValues: {} } },
      ]);
      await setAllTimes(dir, OLD);
      const keys = await listKeys(dir);
      const error = await runCleanup(new LocalStore(dir), { format: deltaFormat, now: () => NOW }).catch((e: unknown) => e as Error);
      expect(error).toBeInstanceOf(TableFormatError);
      expect((error as Error).message).toContain('"x y.parquet"');
      expect((error as Error).message).not.toContain("\n");
      expect((await listKeys(dir)).filter((k) => !k.startsWith("_lakewarden/"))).toEqual(keys);
    });

    it("a corrupt _last_checkpoint is only a hint: cleanup plans from the listing and keeps every live file", async () => {
      const dir = await copyFixture("delta", "table_with_deletion_logs");
      await writeFile(join(dir, "_delta_log", "_last_checkpoint"), '{"version":20,"si');
      await setAllTimes(dir, OLD);
      const before = await oracleLiveFiles(dir);
      const result = await runDeltaCleanup(new LocalStore(dir), { now: NOW });
      expect(result.log!.keptCheckpoint).toBe(20);
      expect((await oracleLiveFiles(dir)).files).toEqual(before.files);
      for (const file of before.files) expect((await listKeys(dir)).includes(file.path)).toBe(true);
    });

    it("a missing checkpoint part: that checkpoint is never the kept one, and the table stays readable", async () => {
      const dir = await copyFixture("delta", "multi-part-checkpoint");
      await rm(join(dir, "_delta_log", "00000000000000000001.checkpoint.0000000002.0000000002.parquet"));
      await setAllTimes(dir, OLD);
      const before = livePaths(await loadSnapshot(new LocalStore(dir)));
      const result = await runDeltaCleanup(new LocalStore(dir), { now: NOW });
      expect(result.log!.keptCheckpoint).toBeNull();
      expect(result.deleted.filter((k) => k.startsWith("_delta_log/"))).toEqual([]);
      expect(livePaths(await loadSnapshot(new LocalStore(dir)))).toEqual(before);
    });
  });
});
