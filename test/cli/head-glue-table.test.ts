/**
 * `head write --glue-table` and `head show --glue-table`: the head of the metadata file an AWS
 * Glue entry names (read through the real SDK pointed at moto's Glue by
 * AWS_ENDPOINT_URL_GLUE), on a copy of the athena-example fixture with two commits appended and
 * named as a catalog writer names them; the newest of them is one the catalog has not taken.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { BufferIO } from "../../lib/cli/io.ts";
import { runCli } from "../../lib/cli/run-cli.ts";
import { readStoredHead } from "../../lib/head/stored-head.ts";
import { LocalStore } from "../../lib/store/local-store.ts";
import { appendCatalogCommits, athenaCatalogFiles } from "../support/catalog-commits.ts";
import { startGlueServer, type GlueServer } from "../support/glue-server.ts";
import { startMotoServer, type MotoHandle } from "../support/moto.ts";
import { copyIcebergFixture, listFiles } from "../support/iceberg-fixtures.ts";

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

async function table() {
  const copy = await copyIcebergFixture("athena-example");
  onTestFinished(copy.remove);
  const files = athenaCatalogFiles();
  await appendCatalogCommits(copy.dir, files);
  const point = (name: string) =>
    glue.setTable("sales", "head_cli", {
      tableType: "EXTERNAL_TABLE",
      parameters: { table_type: "ICEBERG", metadata_location: pathToFileURL(join(copy.dir, "metadata", name)).href },
    });
  return { dir: copy.dir, files, point };
}

async function storedHead(dir: string): Promise<{ key: string; raw: Buffer } | null> {
  const stored = await readStoredHead(new LocalStore(dir));
  if (stored.state === "missing") return null;
  if (stored.state !== "readable") throw new Error(stored.problem);
  return { key: stored.content.snapshot.versionFile.key, raw: Buffer.from(stored.content.snapshot.raw) };
}

describe("head write --glue-table", () => {
  it("writes the head of the file the Glue entry names, not the newest file, and follows the entry when it moves", async () => {
    const { dir, files, point } = await table();
    await point(files.SECOND);
    const asked = glue.requests.length;
    const write = await cli("head", "write", dir, "--glue-table", "Sales.Head_CLI", "--json");
    expect(write.code, write.stderr).toBe(0);
    expect(glue.requests.slice(asked)).toEqual([{ target: "AWSGlue.GetTable", body: { DatabaseName: "sales", Name: "head_cli" }, signedFor: "glue" }]);
    expect(JSON.parse(write.stdout)).toMatchObject({ action: "created", version: 2 });
    const head = await storedHead(dir);
    expect(head?.key).toBe(`metadata/${files.SECOND}`);
    expect(head?.raw.equals(await readFile(join(dir, "metadata", files.SECOND)))).toBe(true);

    // A reader given the catalog's file loads from that head.
    const show = await cli("head", "show", dir, "--glue-table", "sales.head_cli", "--json");
    expect(show.code, show.stderr).toBe(0);
    expect(JSON.parse(show.stdout)).toMatchObject({ version: 2, source: "head", warning: null, version_file: { key: `metadata/${files.SECOND}` } });

    await point(files.THIRD);
    const moved = await cli("head", "write", dir, "--glue-table", "sales.head_cli", "--json");
    expect(moved.code, moved.stderr).toBe(0);
    expect(JSON.parse(moved.stdout)).toMatchObject({ action: "replaced", version: 3, stored_version: 2 });
    expect((await storedHead(dir))?.key).toBe(`metadata/${files.THIRD}`);
  });

  it("--metadata-location does the same from a laptop without Glue", async () => {
    const { dir, files } = await table();
    const write = await cli("head", "write", dir, "--metadata-location", `metadata/${files.ACCEPTED}`, "--json");
    expect(write.code, write.stderr).toBe(0);
    expect(JSON.parse(write.stdout)).toMatchObject({ action: "created", version: 1 });
    expect((await storedHead(dir))?.key).toBe(`metadata/${files.ACCEPTED}`);
  });

  it("writes nothing when the entry cannot be used: one line, exit 1, no _lakewarden/", async () => {
    const { dir, files } = await table();
    const before = await listFiles(dir);
    await glue.setTable("sales", "hive_head", { tableType: "EXTERNAL_TABLE", parameters: { classification: "parquet" } });
    await glue.setTable("sales", "elsewhere_head", { parameters: { table_type: "ICEBERG", metadata_location: `s3://lake/warehouse/orders/metadata/${files.SECOND}` } });
    for (const [name, said] of [
      ["sales.missing_head", 'Glue table "missing_head" in database "sales": not found in the Glue Data Catalog (EntityNotFoundException'],
      ["sales.hive_head", 'Glue table "hive_head" in database "sales": is not a table lakewarden'],
      ["sales.elsewhere_head", 'Glue table "elsewhere_head" in database "sales": metadata_location "s3://lake/warehouse/orders/metadata/'],
    ] as const) {
      const run = await cli("head", "write", dir, "--glue-table", name);
      expect(run.code, name).toBe(1);
      expect(run.stderr.trim().split("\n"), name).toHaveLength(1);
      expect(run.stderr, name).toContain(said);
      expect(await listFiles(dir)).toEqual(before);
    }
    const help = await cli("head", "write", "--help");
    expect(help.stdout).toContain("--glue-table <database.table>");
  });
});
