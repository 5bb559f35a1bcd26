/** `lakewarden head write|show` run in-process on a real LanceDB table. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BufferIO } from "../../lib/cli/io.ts";
import { runCli } from "../../lib/cli/run-cli.ts";
import { lanceFormat } from "../../lib/formats/lance/lance-format.ts";
import { LocalStore } from "../../lib/store/local-store.ts";
import { buildLanceDataset, makeTempDir, removeDir } from "../support/lance-datasets.ts";
import type { LanceDataset } from "../support/lance-datasets.ts";

let dir: string;
let dataset: LanceDataset;

beforeAll(async () => {
  dir = await makeTempDir("lw-head-cli-");
  dataset = await buildLanceDataset({
    dbUri: dir,
    steps: [
      { op: "create", rows: 10 },
      { op: "append", rows: 5 },
      { op: "delete", where: "id < 2" },
    ],
  });
});
afterAll(async () => {
  dataset?.close();
  await removeDir(dir);
});

async function run(...argv: string[]): Promise<{ code: number; io: BufferIO }> {
  const io = new BufferIO();
  const code = await runCli(argv, io);
  return { code, io };
}

function statsLine(io: BufferIO): Record<string, number> {
  const last = io.stderr.trimEnd().split("\n").at(-1)!;
  return JSON.parse(last).requests;
}

describe("lakewarden head", () => {
  it("head show falls back to the manifest before any head is written, and says so", async () => {
    const { code, io } = await run("head", "show", dataset.tableUri, "--json");
    expect(code).toBe(0);
    const shown = JSON.parse(io.stdout);
    expect(shown).toMatchObject({ version: 3, source: "manifest", codec: null, warning: { reason: "head-missing" } });
    expect(io.stderr).toMatch(/^lakewarden: warning: .*_lakewarden\/head: no head object/);
  });

  it("head write creates the head; a second write skips; --stats counts the requests", async () => {
    const first = await run("head", "write", dataset.tableUri, "--json", "--stats");
    expect(first.code).toBe(0);
    expect(JSON.parse(first.io.stdout)).toMatchObject({ action: "created", version: 3, stored_version: null, built: { codec: "arrow" } });
    // The head, and the detected format remembered in _lakewarden/format (once per table).
    expect(statsLine(first.io).put).toBe(2);

    const second = await run("head", "write", dataset.tableUri, "--json", "--stats");
    expect(JSON.parse(second.io.stdout)).toMatchObject({ action: "skipped-same-version", version: 3, stored_version: 3, built: null });
    // The stored head read, the latest version listed, the checkpoints listed: no manifest read, no put.
    expect(statsLine(second.io)).toMatchObject({ get: 1, put: 0 });

    const text = await run("head", "write", dataset.tableUri);
    expect(text.io.stdout).toBe("head for version 3: already current, nothing written (stored head before: version 3)\n");
  });

  it("head show --json reads the current head with one GET and one LIST and prints the live files", async () => {
    const { code, io } = await run("head", "show", dataset.tableUri, "--json", "--stats");
    expect(code).toBe(0);
    const shown = JSON.parse(io.stdout);
    expect(shown).toMatchObject({ version: 3, source: "head", codec: "arrow", warning: null });
    const store = new LocalStore(dataset.tableUri);
    const manifest = await lanceFormat.readSnapshot(store, (await lanceFormat.latestVersionFile(store))!);
    expect(shown.files).toEqual(
      manifest.liveFiles.map((f) => ({
        fragment_id: f.fragmentId,
        paths: f.paths,
        size: f.size,
        physical_rows: f.physicalRows,
        deletion_file: f.deletionFile,
        deleted_rows: f.deletedRows,
      })),
    );
    expect(shown.files.some((f: { deletion_file: string | null }) => f.deletion_file !== null)).toBe(true);
    expect(shown.schema.map((f: { name: string }) => f.name)).toEqual(["id", "name", "score"]);
    expect(statsLine(io)).toEqual({ get: 1, head: 0, list: 1, put: 0, delete: 0 });
  });

  it("head write --codec json rewrites the same version in the other codec", async () => {
    const { io } = await run("head", "write", dataset.tableUri, "--codec", "json", "--json");
    expect(JSON.parse(io.stdout)).toMatchObject({ action: "replaced", version: 3, stored_version: 3, built: { codec: "json" } });
    const shown = await run("head", "show", dataset.tableUri);
    expect(shown.io.stdout).toMatch(/^version 3 from the head \(head codec json\)\n/);
    expect(shown.io.stdout).toContain("13 rows in 2 fragments");
  });

  it("a newer version makes the head stale until it is written again", async () => {
    await dataset.apply([{ op: "append", rows: 1 }]);
    const stale = await run("head", "show", dataset.tableUri, "--json");
    expect(JSON.parse(stale.io.stdout)).toMatchObject({ version: 4, source: "manifest", warning: { reason: "head-stale" } });
    await run("head", "write", dataset.tableUri);
    const fresh = await run("head", "show", dataset.tableUri, "--json");
    // The codec is the table's setting (none here: arrow), not whatever the previous head used.
    expect(JSON.parse(fresh.io.stdout)).toMatchObject({ version: 4, source: "head", codec: "arrow" });
  });

  it("rejects an unknown codec in one line, and --help works on each subcommand", async () => {
    const bad = await run("head", "write", dataset.tableUri, "--codec", "avro");
    expect(bad.code).toBe(2);
    expect(bad.io.stderr).toBe('lakewarden: unknown head codec "avro" (known: arrow, json)\n');
    for (const sub of [["head"], ["head", "write"], ["head", "show"]]) {
      const help = await run(...sub, "--help");
      expect(help.code).toBe(0);
      expect(help.io.stdout).toContain(`Usage: lakewarden ${sub.join(" ")}`);
    }
    const { io } = await run("head", "write", "--help");
    expect(io.stdout).toContain("--codec <codec>");
    expect(io.stdout).toContain("--stats");
  });

  it("names the location when it holds no table", async () => {
    const empty = await makeTempDir("lw-head-cli-empty-");
    try {
      const { code, io } = await run("head", "show", empty);
      expect(code).toBe(1);
      expect(io.stderr).toMatch(/^lakewarden: file:\/\/.*lw-head-cli-empty-.*: not a table: no version files under _versions\/ \(lance\)/);
    } finally {
      await removeDir(empty);
    }
  });
});
