/**
 * An Iceberg table pyiceberg created with no append: a metadata file, no snapshot. It is a table
 * (not "not an iceberg table: no version files under metadata/", the old words), with nothing to
 * maintain: a scheduled cleanup succeeds in one line and touches nothing, `versions` lists an
 * empty history in one line (`[]` with --json), and `head write` refuses in one line that says
 * what the table is (a head caches a version; there is none yet). A folder with no table still
 * gets the not-a-table words.
 */
import { mkdir, readdir, readFile, stat } from "node:fs/promises";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BufferIO } from "../../lib/cli/io.ts";
import { runCli } from "../../lib/cli/run-cli.ts";
import { makeTempDir, removeDir } from "../support/lance-datasets.ts";
import { icebergFolderTable } from "./engine-tables.ts";
import { runScript } from "./race.ts";

const EMPTY_LINE = "an iceberg table with no snapshot yet: nothing to maintain";
const dirs: string[] = [];
let uri = "";

async function cli(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const io = new BufferIO();
  const code = await runCli(argv, io);
  return { code, stdout: io.stdout, stderr: io.stderr };
}

/** Every file under `root` with its bytes, lakewarden's own folder aside. */
async function tableFiles(root: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    const path = join(entry.parentPath, entry.name);
    const key = relative(root, path);
    if (entry.isFile() && !key.startsWith("_lakewarden")) out.set(key, (await readFile(path)).toString("base64"));
  }
  return out;
}

beforeAll(async () => {
  const dir = await makeTempDir("lw-iceberg-empty-");
  dirs.push(dir);
  const table = icebergFolderTable(dir);
  const created = JSON.parse(await runScript(table, ["create", table.uri])) as { snapshots: number };
  expect(created.snapshots).toBe(0);
  uri = table.uri;
});

afterAll(async () => {
  for (const dir of dirs) await removeDir(dir);
});

describe("an Iceberg table created with no snapshot yet", () => {
  it("cleanup (and its dry run) exits 0 with one line and changes no file of the table", async () => {
    const before = await tableFiles(uri);
    expect([...before.keys()].some((key) => key.startsWith("metadata/") && key.endsWith(".metadata.json"))).toBe(true);
    for (const flags of [[], ["--dry-run"]]) {
      const run = await cli("cleanup", uri, ...flags);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toBe("");
      expect(run.stdout.trimEnd().split("\n")).toHaveLength(1);
      expect(run.stdout).toContain(`nothing to do: ${EMPTY_LINE}`);
      expect(run.stdout).not.toContain("not an iceberg table");
    }
    const json = await cli("cleanup", uri, "--json");
    expect(json.code, json.stderr).toBe(0);
    const report = JSON.parse(json.stdout) as { status: string; nothing_to_do: string | null; versions: unknown[]; files_planned: number };
    expect(report).toMatchObject({ status: "completed", nothing_to_do: EMPTY_LINE, versions: [], files_planned: 0 });
    expect(await tableFiles(uri)).toEqual(before);
  });

  it("versions lists an empty history: one line, [] with --json, exit 0", async () => {
    const text = await cli("versions", uri);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout.trimEnd().split("\n")).toHaveLength(1);
    expect(text.stdout).toMatch(new RegExp(`iceberg-folder: ${EMPTY_LINE}\n$`));
    const json = await cli("versions", uri, "--json");
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual([]);
  });

  it("head write refuses in one line that says what the table is", async () => {
    const run = await cli("head", "write", uri);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(EMPTY_LINE);
    expect(run.stderr).not.toContain("not an iceberg table");
    await expect(stat(join(uri, "_lakewarden", "head"))).rejects.toThrow();
  });

  it("a folder with no table keeps the not-a-table words", async () => {
    const dir = await makeTempDir("lw-iceberg-none-");
    dirs.push(dir);
    await mkdir(join(dir, "metadata"));
    const run = await cli("cleanup", dir, "--format", "iceberg");
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("not an iceberg table: no version files under metadata/");
  });
});
