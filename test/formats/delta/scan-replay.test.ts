/**
 * A cleanup scan's versions, replayed one after the other (scan-replay.ts), read exactly as each
 * version read alone by its own snapshot: the same record, references and config, or the same
 * error, on every fixture table, on a delta-rs table made here (appends, deletes, merges,
 * optimize, overwrites, checkpoints), and on that table damaged (a checkpoint, a commit, a gap).
 * And the scan reads the log once: one listing and each commit once, not a replay per version.
 */
import { cp, mkdtemp, readdir, rm, truncate, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deltaFormat } from "../../../lib/formats/delta/delta-format.ts";
import type { VersionFile } from "../../../lib/formats/table-format.ts";
import { mapConcurrent } from "../../../lib/store/map-concurrent.ts";
import { LocalStore } from "../../../lib/store/local-store.ts";
import { deltaTable } from "../../engines/engine-tables.ts";
import { runScript } from "../../engines/race.ts";
import { copyFixtureDir, fixtureNames } from "../../support/fixtures.ts";
import { commitPath } from "./log-surgery.ts";

type Outcome = { view: Awaited<ReturnType<typeof deltaFormat.readForCleanup>> } | { error: string };

async function outcome(read: () => Promise<Awaited<ReturnType<typeof deltaFormat.readForCleanup>>>): Promise<Outcome> {
  try {
    return { view: await read() };
  } catch (error) {
    return { error: `${(error as Error).constructor.name}: ${(error as Error).message}` };
  }
}

/** Each version read alone, then all of them in one scan as the pipeline reads them (16 at a time, in order). */
async function bothWays(dir: string): Promise<{ alone: Outcome[]; scanned: Outcome[]; files: VersionFile[] }> {
  // Two stores: the log's parse cache is by URI and ETag, and each way must read for itself.
  const files = await deltaFormat.listVersionFiles(new LocalStore(dir));
  const aloneStore = new LocalStore(dir);
  const alone = await mapConcurrent(files, 1, (file) => outcome(() => deltaFormat.readForCleanup(aloneStore, file)));
  const scanStore = new LocalStore(dir);
  const scan = {};
  const scanned = await mapConcurrent(files, 16, (file) => outcome(() => deltaFormat.readForCleanup(scanStore, file, scan)));
  return { alone, scanned, files };
}

function expectSame(result: { alone: Outcome[]; scanned: Outcome[]; files: VersionFile[] }, label: string): void {
  for (const [i, file] of result.files.entries()) expect(result.scanned[i], `${label}, version ${file.version}`).toEqual(result.alone[i]);
}

const fixtures = await fixtureNames("delta");

describe("a cleanup scan replays its versions in order, with each version's own answer", () => {
  it.each(fixtures)("fixture %s: every version as read alone", async (name) => {
    const copy = await copyFixtureDir("delta", name);
    try {
      const result = await bothWays(copy.dir);
      expect(result.files.length).toBeGreaterThan(0);
      expectSame(result, name);
    } finally {
      await copy.remove();
    }
  });

  describe("a delta-rs table with checkpoints", () => {
    let root: string;
    let uri: string;

    beforeAll(async () => {
      root = await mkdtemp(join(tmpdir(), "lakewarden-scan-replay-"));
      const table = deltaTable(root);
      uri = table.uri;
      // 14 commits through the writer's cycle (append, delete, merge, optimize, overwrite...), a checkpoint every 4.
      await runScript(table, ["write", uri, "--state", join(root, "state.json"), "--commits", "14"]);
    }, 120_000);

    afterAll(async () => {
      await rm(root, { recursive: true, force: true });
    });

    const copyOf = async (name: string): Promise<string> => {
      const dir = join(root, name);
      await cp(uri, dir, { recursive: true, preserveTimestamps: true });
      return dir;
    };
    const checkpoints = async (dir: string): Promise<string[]> => (await readdir(join(dir, "_delta_log"))).filter((n) => n.includes(".checkpoint.")).sort();

    it("every version as read alone", async () => {
      const dir = await copyOf("whole");
      expect((await checkpoints(dir)).length, "the writer made checkpoints").toBeGreaterThanOrEqual(2);
      const result = await bothWays(dir);
      expect(result.files.length).toBeGreaterThanOrEqual(14);
      expect(result.alone.every((o) => "view" in o)).toBe(true);
      expectSame(result, "whole");
    });

    it("the scan lists the log once and reads each commit and checkpoint once", async () => {
      const dir = await copyOf("counted");
      const store = new LocalStore(dir);
      const files = await deltaFormat.listVersionFiles(store);
      const before = store.stats.snapshot();
      const scan = {};
      await mapConcurrent(files, 16, (file) => deltaFormat.readForCleanup(store, file, scan));
      const used = store.stats.snapshot();
      expect(used.list - before.list).toBe(1);
      // A replay per version read the checkpoint and every commit after it again, and `_last_checkpoint` each time.
      expect(used.get - before.get).toBeLessThanOrEqual(files.length + (await checkpoints(dir)).length);
    });

    it("a damaged checkpoint: every version as read alone", async () => {
      const dir = await copyOf("damaged-checkpoint");
      const [first] = await checkpoints(dir);
      await truncate(join(dir, "_delta_log", first!), 100);
      expectSame(await bothWays(dir), "damaged checkpoint");
    });

    it("a damaged commit: every version as read alone", async () => {
      const dir = await copyOf("damaged-commit");
      await writeFile(commitPath(dir, 1), '{"add": {"path": "x.parquet"\n');
      const result = await bothWays(dir);
      expect(result.alone.filter((o) => "error" in o).length, "versions that replay through it fail").toBeGreaterThanOrEqual(2);
      expectSame(result, "damaged commit");
    });

    it("a commit missing in the middle: every version as read alone", async () => {
      const dir = await copyOf("gap");
      await unlink(commitPath(dir, 5));
      const result = await bothWays(dir);
      expect(
        result.alone.some((o) => "error" in o && o.error.includes("gap")),
        "a version after it fails",
      ).toBe(true);
      expectSame(result, "gap");
    });
  });
});
