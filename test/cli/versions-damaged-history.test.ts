/**
 * lakewarden's own history, damaged (issue 20): a checkpoint under `_lakewarden/checkpoints/` or
 * an archive segment that cannot be read is never silent, never overwritten with fewer rows and
 * never deleted, and what still holds history serves meanwhile. A real LanceDB table of 31
 * versions cleaned twice (checkpoints 20 and 31, versions 1-28 removed, a head written), copied
 * for each damage: missing, zero length, truncated, random bytes, an Arrow file of another schema.
 */
import { cp, readdir, readFile, rm, truncate, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { tableFromArrays, tableToIPC } from "apache-arrow";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BufferIO } from "../../lib/cli/io.ts";
import { runCli } from "../../lib/cli/run-cli.ts";
import { EXIT_CODES } from "../../lib/cli/exit-codes.ts";
import { checkpointKey } from "../../lib/model/layout.ts";
import { listCheckpointFiles, loadNewestCheckpoint } from "../../lib/checkpoint/load.ts";
import { listSegments } from "../../lib/checkpoint/segments.ts";
import { runCheckpoint } from "../../lib/maintenance/run-checkpoint.ts";
import { DAMAGED_PREFIX } from "../../lib/model/layout.ts";
import { LocalStore } from "../../lib/store/local-store.ts";
import { buildLanceDataset, makeTempDir, removeDir, type DatasetStep } from "../support/lance-datasets.ts";

const appends = (n: number): DatasetStep[] => Array.from({ length: n }, () => ({ op: "append", rows: 1 }) as const);
const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

const CLEANUP = ["--older-than", "0s", "--retain-versions", "3", "--allow-short-retention"];

type Damage = "missing" | "zero length" | "truncated" | "random bytes" | "another schema";
const DAMAGES: readonly Damage[] = ["missing", "zero length", "truncated", "random bytes", "another schema"];

async function damage(path: string, how: Damage): Promise<void> {
  switch (how) {
    case "missing":
      return rm(path);
    case "zero length":
      return truncate(path, 0);
    case "truncated":
      return truncate(path, 2000);
    case "random bytes": {
      const size = (await readFile(path)).length;
      return writeFile(
        path,
        Uint8Array.from({ length: size }, (_, i) => (i * 7919 + 13) % 251),
      );
    }
    case "another schema":
      // A whole, valid Arrow IPC file: just not a checkpoint.
      return writeFile(path, tableToIPC(tableFromArrays({ version: Int32Array.from([1, 2, 3]) }), "file"));
  }
}

async function cli(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const io = new BufferIO();
  const code = await runCli(args, io);
  return { code, stdout: io.stdout, stderr: io.stderr };
}

interface DamagedJson {
  versions: { version: number }[];
  history_problems: { file: string; role: string; problem: string; covered: { from: number | null; through: number }; set_aside: string | null }[];
}

async function damagedFiles(table: string): Promise<string[]> {
  try {
    return (await readdir(join(table, DAMAGED_PREFIX))).sort();
  } catch {
    return [];
  }
}

let root: string;
/** The table after two cleanups: checkpoints 20 (versions 1-20) and 31 (1-31), versions 29-31 live. */
let template: string;
let copies = 0;

async function copyOfTemplate(): Promise<string> {
  const dir = join(root, `copy-${++copies}`);
  await cp(template, dir, { recursive: true });
  return dir;
}

beforeAll(async () => {
  root = await makeTempDir("lw-damaged-history-");
  const ds = await buildLanceDataset({ dbUri: join(root, "db"), steps: [{ op: "create", rows: 3 }, ...appends(19)] });
  const first = await cli(["cleanup", ds.tableUri, ...CLEANUP]);
  expect(first.code, first.stderr).toBe(0);
  await ds.apply(appends(11));
  ds.close();
  const second = await cli(["cleanup", ds.tableUri, ...CLEANUP]);
  expect(second.code, second.stderr).toBe(0);
  const head = await cli(["head", "write", ds.tableUri]);
  expect(head.code, head.stderr).toBe(0);
  template = ds.tableUri;
  const store = new LocalStore(template);
  expect((await listCheckpointFiles(store)).map((f) => f.version)).toEqual([20, 31]);
  expect((await loadNewestCheckpoint(store)).checkpoint?.records.map((r) => r.version)).toEqual(range(1, 31));
});
afterAll(() => removeDir(root));

describe("the healthy table", () => {
  it("lists all 31 versions, exit 0, nothing on stderr", async () => {
    const result = await cli(["versions", template, "--json"]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect((JSON.parse(result.stdout) as { version: number }[]).map((r) => r.version)).toEqual(range(1, 31));
  });
});

describe.each(DAMAGES)("the newest checkpoint (31) %s", (how) => {
  let table: string;
  /** The damaged file's bytes, as the writer must keep them. */
  let damaged: Uint8Array | null;
  const newest = checkpointKey(31);

  beforeAll(async () => {
    table = await copyOfTemplate();
    await damage(join(table, newest), how);
    damaged = how === "missing" ? null : new Uint8Array(await readFile(join(table, newest)));
  });

  it("versions says so on stderr, names the file and the versions it covered, exits 4, and lists every version the previous checkpoint holds", async () => {
    const text = await cli(["versions", table]);
    expect(text.code).toBe(EXIT_CODES.historyIncomplete);
    expect(text.stderr).toContain(newest);
    expect(text.stderr).toMatch(/it covered versions 1-31; not listed now: 21-28;/);
    expect(text.stderr).toMatch(/21-28/);
    // The fallback: checkpoint 20 holds 1-20, the version files 29-31.
    const listed = text.stdout
      .trimEnd()
      .split("\n")
      .slice(1)
      .map((line) => Number(line.split(/\s+/)[0]));
    expect(listed).toEqual([...range(1, 20), 29, 30, 31]);

    const json = await cli(["versions", table, "--json"]);
    expect(json.code).toBe(EXIT_CODES.historyIncomplete);
    const parsed = JSON.parse(json.stdout) as DamagedJson;
    expect(parsed.versions.map((r) => r.version)).toEqual([...range(1, 20), 29, 30, 31]);
    // version-at answers from the same history, and says so too.
    const at = await cli(["version-at", table, "now", "--json"]);
    expect(at.code).toBe(EXIT_CODES.historyIncomplete);
    expect(at.stderr).toContain(newest);
    expect(JSON.parse(at.stdout)).toMatchObject({ version: 31, history_problems: [expect.objectContaining({ file: newest })] });
    expect(parsed.history_problems).toEqual([
      // From version 1: checkpoint 20 knows the table began there.
      expect.objectContaining({ file: newest, role: "checkpoint", covered: { from: 1, through: 31 }, unlisted: [{ from: 21, through: 28 }] }),
    ]);
  });

  it("checkpoint sets the damaged file aside (never fewer rows, never deleted), writes one that holds every row left, and says so", async () => {
    const result = await cli(["checkpoint", table]);
    expect(result.code).toBe(EXIT_CODES.historyIncomplete);
    expect(result.stderr).toContain(newest);
    const store = new LocalStore(table);
    const set = await damagedFiles(table);
    expect(set).toHaveLength(1);
    expect(set[0]).toMatch(/^00000000000000000031\.arrow\./);
    const keptBytes = await readFile(join(table, DAMAGED_PREFIX, set[0]!));
    // A missing file leaves a note there instead: restore the file into it, or delete it to accept the loss.
    if (damaged === null) expect(keptBytes.toString("utf8")).toContain(newest);
    else expect(new Uint8Array(keptBytes)).toEqual(damaged);
    const loaded = await loadNewestCheckpoint(store);
    expect(loaded.skipped).toEqual([]);
    expect(loaded.checkpoint?.records.map((r) => r.version)).toEqual([...range(1, 20), 29, 30, 31]);

    // Still loud afterwards: the new checkpoint remembers what was set aside.
    const after = await cli(["versions", table, "--json"]);
    expect(after.code).toBe(EXIT_CODES.historyIncomplete);
    const parsed = JSON.parse(after.stdout) as DamagedJson;
    expect(parsed.versions.map((r) => r.version)).toEqual([...range(1, 20), 29, 30, 31]);
    expect(parsed.history_problems).toEqual([
      expect.objectContaining({ file: newest, set_aside: `${DAMAGED_PREFIX}${set[0]}`, covered: { from: 1, through: 31 }, unlisted: [{ from: 21, through: 28 }] }),
    ]);

    // A cleanup afterwards keeps it so: nothing set aside is deleted.
    const cleaned = await cli(["cleanup", table, ...CLEANUP]);
    expect(cleaned.code, cleaned.stderr).toBe(0);
    expect(await damagedFiles(table)).toEqual(set);
    const again = await cli(["versions", table]);
    expect(again.code).toBe(EXIT_CODES.historyIncomplete);
    expect(again.stderr).toContain(newest);
  });
});

describe("every checkpoint truncated (the demo's report)", () => {
  let table: string;
  const files = [checkpointKey(20), checkpointKey(31)];

  beforeAll(async () => {
    table = await copyOfTemplate();
    for (const key of files) await truncate(join(table, key), 2000);
  });

  it("versions names both files and exits 4; checkpoint keeps both files' bytes and stays loud", async () => {
    const before = await cli(["versions", table]);
    expect(before.code).toBe(EXIT_CODES.historyIncomplete);
    for (const key of files) expect(before.stderr).toContain(key);
    // Nothing says where the history began: what is missing is "before 29".
    expect(before.stderr).toContain("not listed now: before 29");

    const originals = await Promise.all(files.map((key) => readFile(join(table, key))));
    const result = await cli(["checkpoint", table]);
    expect(result.code).toBe(EXIT_CODES.historyIncomplete);
    const set = await damagedFiles(table);
    expect(set).toHaveLength(2);
    const kept = await Promise.all(set.map((name) => readFile(join(table, DAMAGED_PREFIX, name))));
    expect(kept.map((b) => b.length).sort()).toEqual(originals.map((b) => b.length).sort());

    const after = await cli(["versions", table]);
    expect(after.code).toBe(EXIT_CODES.historyIncomplete);
    expect(after.stderr).toContain(checkpointKey(31));
    // The new checkpoint knows only 29-31: that is not taken for where the history began.
    expect(after.stderr).toContain("not listed now: before 29");
  });

  it("a file set aside that is repaired in place has its rows merged back by the next checkpoint, and versions is quiet again", async () => {
    const set = await damagedFiles(table);
    const newestSetAside = set.find((name) => name.startsWith("00000000000000000031.arrow."))!;
    await cp(join(template, checkpointKey(31)), join(table, DAMAGED_PREFIX, newestSetAside));
    const older = set.find((name) => name !== newestSetAside)!;
    await rm(join(table, DAMAGED_PREFIX, older)); // the user accepts that one's loss
    const result = await cli(["checkpoint", table]);
    expect(result.code, result.stderr).toBe(0);
    const after = await cli(["versions", table, "--json"]);
    expect(after.stderr).toBe("");
    expect(after.code).toBe(0);
    expect((JSON.parse(after.stdout) as { version: number }[]).map((r) => r.version)).toEqual(range(1, 31));
  });
});

describe.each(DAMAGES.filter((d) => d !== "another schema"))("an archive segment %s", (how) => {
  let table: string;
  let segment: { key: string; first: number; last: number };

  beforeAll(async () => {
    table = await copyOfTemplate();
    const store = new LocalStore(table);
    // A low max_entries moves the oldest rows into a segment.
    await runCheckpoint(store, { maxCheckpointEntries: 10 });
    const segments = await listSegments(store);
    expect(segments.length).toBeGreaterThan(0);
    segment = segments[0]!;
    await damage(join(table, segment.key), how);
  });

  it("versions lists every other version, names the segment and its versions, and exits 4", async () => {
    const result = await cli(["versions", table, "--json"]);
    expect(result.code).toBe(EXIT_CODES.historyIncomplete);
    expect(result.stderr).toContain(segment.key);
    const parsed = JSON.parse(result.stdout) as DamagedJson;
    const expected = range(1, 31).filter((v) => v < segment.first || v > segment.last);
    expect(parsed.versions.map((r) => r.version)).toEqual(expected);
    expect(parsed.history_problems).toEqual([expect.objectContaining({ file: segment.key, role: "archive segment", covered: { from: segment.first, through: segment.last } })]);
  });
});

describe.each(["truncated", "random bytes"] as const)("cleanup meets the newest checkpoint %s", (how) => {
  it("sets it aside through its archive step, keeps every row left, and versions stays loud", async () => {
    const table = await copyOfTemplate();
    await damage(join(table, checkpointKey(31)), how);
    const damagedBytes = new Uint8Array(await readFile(join(table, checkpointKey(31))));
    const cleaned = await cli(["cleanup", table, ...CLEANUP]);
    expect(cleaned.code, cleaned.stderr).toBe(0);
    expect(cleaned.stderr).toContain(checkpointKey(31));
    const set = await damagedFiles(table);
    expect(set).toHaveLength(1);
    expect(new Uint8Array(await readFile(join(table, DAMAGED_PREFIX, set[0]!)))).toEqual(damagedBytes);
    const store = new LocalStore(table);
    expect((await loadNewestCheckpoint(store)).checkpoint?.records.map((r) => r.version)).toEqual([...range(1, 20), 29, 30, 31]);
    // Checkpoint 20 holds rows the new one has too: only then may a prune delete it.
    const after = await cli(["versions", table]);
    expect(after.code).toBe(EXIT_CODES.historyIncomplete);
    expect(after.stderr).toContain(checkpointKey(31));
    expect(after.stderr).toContain(`${DAMAGED_PREFIX}${set[0]}`);
  });
});
