/**
 * Every table command on an Iceberg table whose metadata files are all catalog-named
 * (`NNNNN-uuid.metadata.json`): without the catalog's word each refuses in one line that names
 * the newest file and the ways to give that word, and touches nothing; with
 * `--metadata-location` or `--glue-table` (moto's Glue through the real SDK) each reads the file
 * the catalog names, never the newer commits it has not taken. The table: a copy of the
 * athena-example fixture (written by Athena) with two commits appended and named as a catalog
 * writer names them before it swaps the catalog's pointer.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { BufferIO } from "../../lib/cli/io.ts";
import { runCli } from "../../lib/cli/run-cli.ts";
import { appendCatalogCommits, athenaCatalogFiles, type AthenaCatalogFiles } from "../support/catalog-commits.ts";
import { startGlueServer, type GlueServer } from "../support/glue-server.ts";
import { copyIcebergFixture, icebirdLiveFiles, listFiles } from "../support/iceberg-fixtures.ts";
import { startMotoServer, type MotoHandle } from "../support/moto.ts";

let moto: MotoHandle;
let glue: GlueServer;
const savedEnv = { ...process.env };

beforeAll(async () => {
  moto = await startMotoServer();
  glue = await startGlueServer(moto);
  Object.assign(process.env, { AWS_ENDPOINT_URL_GLUE: glue.endpoint, AWS_REGION: "us-east-1", AWS_ACCESS_KEY_ID: "test", AWS_SECRET_ACCESS_KEY: "test" });
});

afterAll(async () => {
  process.env = savedEnv;
  await glue?.stop();
  await moto?.stop();
});

async function cli(...argv: string[]) {
  const io = new BufferIO();
  const code = await runCli(argv, io);
  return { code, stdout: io.stdout, stderr: io.stderr };
}

async function table(): Promise<{ dir: string; files: AthenaCatalogFiles }> {
  const copy = await copyIcebergFixture("athena-example");
  onTestFinished(copy.remove);
  const files = athenaCatalogFiles();
  // ACCEPTED is the catalog's pointer; SECOND and THIRD are commits written and never swapped in.
  await appendCatalogCommits(copy.dir, files);
  return { dir: copy.dir, files };
}

/**
 * Every command that reads the table's current version, with the flags given: `report` writes to
 * `out`. (`storage` too, but it plans as cleanup does: below.)
 */
function readerCommands(dir: string, out: string, version: string): [string, (flags: string[]) => string[]][] {
  return [
    ["versions", (flags) => ["versions", dir, ...flags]],
    ["head write", (flags) => ["head", "write", dir, ...flags]],
    ["head show", (flags) => ["head", "show", dir, ...flags]],
    ["files", (flags) => ["files", dir, ...flags]],
    ["scan", (flags) => ["scan", dir, "--limit", "1", ...flags]],
    ["report", (flags) => ["report", dir, "-o", out, ...flags]],
    ["version-at", (flags) => ["version-at", dir, "now", ...flags]],
    ["checkpoint", (flags) => ["checkpoint", dir, ...flags]],
    ["pin", (flags) => ["pin", dir, version, "--ttl", "1h", ...flags]],
  ];
}

describe("table commands on a table whose metadata files a catalog names", () => {
  it("each refuses without the catalog's word: one line naming the newest file and the flags, exit 1, nothing written", async () => {
    const { dir, files } = await table();
    const out = join(dir, "..", "report.html");
    const before = await listFiles(dir);
    for (const [name, argv] of [...readerCommands(dir, out, "1"), ["storage", (flags: string[]) => ["storage", dir, ...flags]] as const]) {
      const run = await cli(...argv([]));
      expect(run.code, `${name}: ${run.stderr}`).toBe(1);
      expect(run.stdout, name).toBe("");
      expect(run.stderr.trim().split("\n"), name).toHaveLength(1);
      expect(run.stderr, name).toContain(`metadata files are named NNNNN-uuid (newest metadata/${files.THIRD}): a catalog owns which one is current`);
      for (const flag of ["--glue-table", "--catalog", "--catalog-table", "--metadata-location"]) expect(run.stderr, `${name}: ${flag}`).toContain(flag);
      expect(await listFiles(dir), name).toEqual(before);
    }
    expect(existsSync(out)).toBe(false);
  });

  it("each reads the file --metadata-location names: none of the data only the commits the catalog never took added", async () => {
    const { dir, files } = await table();
    const pointer = ["--metadata-location", `metadata/${files.ACCEPTED}`];
    const accepted = (await icebirdLiveFiles(dir, files.ACCEPTED)).filter((f) => f.content === 0).map((f) => f.key);
    const versions = await cli("versions", dir, "--json", ...pointer);
    expect(versions.code, versions.stderr).toBe(0);
    const listed = JSON.parse(versions.stdout) as { version: number }[];
    expect(listed.length).toBeGreaterThan(0);
    const listedFiles = await cli("files", dir, "--json", ...pointer);
    expect(listedFiles.code, listedFiles.stderr).toBe(0);
    expect(JSON.stringify(JSON.parse(listedFiles.stdout))).not.toContain("appended");
    for (const key of accepted) expect(listedFiles.stdout).toContain(key);
    const out = join(dir, "..", "report.html");
    for (const [name, argv] of readerCommands(dir, out, String(listed.at(-1)!.version))) {
      const run = await cli(...argv(pointer));
      expect(run.code, `${name}: ${run.stderr}`).toBe(0);
    }
    const show = await cli("head", "show", dir, "--json", ...pointer);
    expect(JSON.parse(show.stdout)).toMatchObject({ source: "head", version_file: { key: `metadata/${files.ACCEPTED}` } });
    expect(existsSync(out)).toBe(true);
    // storage plans as cleanup does, which refuses a pointer a newer commit on top of it supersedes (the catalog may lag it).
    const storage = await cli("storage", dir, ...pointer);
    expect(storage.code).toBe(1);
    expect(storage.stderr).toContain(`the pointer metadata/${files.ACCEPTED} is superseded by metadata/${files.SECOND}`);
    // A head, a checkpoint and a pin made at the catalog's file do not let a reader without it through.
    for (const [name, argv] of readerCommands(dir, join(dir, "..", "again.html"), String(listed.at(-1)!.version))) {
      const run = await cli(...argv([]));
      expect(run.code, `${name} without the pointer, after: ${run.stdout}`).toBe(1);
      expect(run.stderr, name).toContain(`metadata files are named NNNNN-uuid (newest metadata/${files.THIRD})`);
    }
  });

  it("each takes --glue-table: the file the Glue entry names", async () => {
    const { dir, files } = await table();
    await glue.setTable("sales", "readers", {
      tableType: "EXTERNAL_TABLE",
      parameters: { table_type: "ICEBERG", metadata_location: pathToFileURL(join(dir, "metadata", files.SECOND)).href },
    });
    const out = join(dir, "..", "report.html");
    for (const [name, argv] of readerCommands(dir, out, "2")) {
      const run = await cli(...argv(["--glue-table", "sales.readers"]));
      expect(run.code, `${name}: ${run.stderr}`).toBe(0);
    }
    const show = await cli("head", "show", dir, "--json", "--glue-table", "sales.readers");
    expect(JSON.parse(show.stdout)).toMatchObject({ version: 2, source: "head", version_file: { key: `metadata/${files.SECOND}` } });
    // storage plans as cleanup does, and cleanup through the catalog takes the catalog's word over a
    // newer file it never took (THIRD): a commit landing meanwhile makes the catalog refuse the run's.
    const storage = await cli("storage", dir, "--json", "--glue-table", "sales.readers");
    expect(storage.code, storage.stderr).toBe(0);
    const plan = await cli("cleanup", dir, "--dry-run", "--json", "--glue-table", "sales.readers");
    expect(plan.code, plan.stderr).toBe(0);
    expect(JSON.parse(storage.stdout).version).toBe(JSON.parse(plan.stdout).latest_version);
  });
});
