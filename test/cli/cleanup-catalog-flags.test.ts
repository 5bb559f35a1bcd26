/**
 * `cleanup --glue-table` (the current metadata read from an AWS Glue entry, through the real SDK
 * pointed at moto's Glue by AWS_ENDPOINT_URL_GLUE) and `cleanup --min-work`
 * (RunCleanupOptions.minWorkPerRun), on copies of the athena-example fixture, whose metadata
 * files are catalog-named.
 */
import { randomUUID } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { BufferIO } from "../../lib/cli/io.ts";
import { runCli } from "../../lib/cli/run-cli.ts";
import { DAY_MS } from "../../lib/formats/iceberg/retention.ts";
import type { CleanupReport } from "../../lib/maintenance/cleanup-report.ts";
import { startGlueServer, type GlueServer } from "../support/glue-server.ts";
import { startMotoServer, type MotoHandle } from "../support/moto.ts";
import { copyIcebergFixture, fileExists, icebirdLiveFiles, listFiles } from "../support/iceberg-fixtures.ts";

const CURRENT = "00001-aaf0d033-d06b-43c7-be60-67f83abd4aca.metadata.json";
const STRAYS = ["data/sNoYhg/stray-orphan.parquet", "metadata/stray-m0.avro"];
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

/** An athena-example copy, 30 days old, with an old stray data file and a stray manifest, and a newer commit the catalog never took. */
async function athena(): Promise<{ dir: string; unaccepted: string }> {
  const copy = await copyIcebergFixture("athena-example", { ageMs: 30 * DAY_MS });
  onTestFinished(copy.remove);
  const unaccepted = `metadata/00002-${randomUUID()}.metadata.json`;
  await writeFile(join(copy.dir, unaccepted), await readFile(join(copy.dir, "metadata", CURRENT)));
  await writeFile(join(copy.dir, STRAYS[0]!), "not a file any snapshot names");
  await writeFile(join(copy.dir, STRAYS[1]!), await readFile(join(copy.dir, "metadata/3d82674b-df1e-49b5-a7a9-05b61567065a-m0.avro")));
  const { utimes } = await import("node:fs/promises");
  const old = new Date(Date.now() - 30 * DAY_MS);
  for (const key of [unaccepted, ...STRAYS]) await utimes(join(copy.dir, key), old, old);
  return { dir: copy.dir, unaccepted };
}

const tableFiles = async (dir: string) => (await listFiles(dir)).filter((k) => !k.startsWith("_lakewarden/"));

describe("cleanup --glue-table", () => {
  it("cleans at the metadata file the Glue entry names now, as --metadata-location would", async () => {
    const { dir, unaccepted } = await athena();
    await glue.setTable("sales", "athena_cli", {
      tableType: "EXTERNAL_TABLE",
      parameters: { table_type: "ICEBERG", metadata_location: pathToFileURL(join(dir, "metadata", CURRENT)).href },
    });
    const live = await icebirdLiveFiles(dir, CURRENT);
    const before = await tableFiles(dir);
    const asked = glue.requests.length;
    const run = await cli("cleanup", dir, "--glue-table", "Sales.Athena_CLI", "--json");
    expect(run.code, run.stderr).toBe(0);
    expect(glue.requests.slice(asked)).toEqual([{ target: "AWSGlue.GetTable", body: { DatabaseName: "sales", Name: "athena_cli" }, signedFor: "glue" }]);
    expect((JSON.parse(run.stdout) as CleanupReport).status).toBe("completed");
    expect(before.filter((k) => !STRAYS.includes(k))).toEqual(await tableFiles(dir));
    expect(await fileExists(dir, unaccepted)).toBe(true);
    expect(await icebirdLiveFiles(dir, CURRENT)).toEqual(live);
  });

  it("storage takes it too: the plan it measures is the catalog's", async () => {
    const { dir } = await athena();
    await glue.setTable("sales", "athena_storage", { parameters: { table_type: "ICEBERG", metadata_location: pathToFileURL(join(dir, "metadata", CURRENT)).href } });
    const refused = await cli("storage", dir, "--json");
    expect(refused.code).toBe(1);
    const run = await cli("storage", dir, "--glue-table", "sales.athena_storage", "--json");
    expect(run.code, run.stderr).toBe(0);
    expect((JSON.parse(run.stdout) as { parts: { reclaimable: { files: number } } }).parts.reclaimable.files).toBe(STRAYS.length);
  });

  it("refuses in one line, the table untouched: a missing entry, a non-Iceberg entry, a pointer elsewhere; bad flags are usage errors", async () => {
    const { dir } = await athena();
    const before = await tableFiles(dir);
    await glue.setTable("sales", "hive_cli", { tableType: "EXTERNAL_TABLE", parameters: { classification: "parquet" } });
    await glue.setTable("sales", "elsewhere_cli", { parameters: { table_type: "ICEBERG", metadata_location: `s3://lake/warehouse/orders/metadata/${CURRENT}` } });
    for (const [name, said] of [
      ["sales.missing_cli", 'Glue table "missing_cli" in database "sales": not found in the Glue Data Catalog (EntityNotFoundException'],
      ["sales.hive_cli", 'Glue table "hive_cli" in database "sales": is not a table lakewarden reads through a catalog (iceberg: has no table_type parameter'],
      ["sales.elsewhere_cli", 'Glue table "elsewhere_cli" in database "sales": metadata_location "s3://lake/warehouse/orders/metadata/'],
    ] as const) {
      const run = await cli("cleanup", dir, "--glue-table", name);
      expect(run.code, name).toBe(1);
      expect(run.stderr.trim().split("\n"), name).toHaveLength(1);
      expect(run.stderr, name).toContain(said);
      expect(await tableFiles(dir)).toEqual(before);
    }
    await glue.setTable("sales", "here_cli", { parameters: { table_type: "ICEBERG", metadata_location: pathToFileURL(join(dir, "metadata", CURRENT)).href } });
    for (const [args, said] of [
      [["--glue-table", "orders"], 'lakewarden: --glue-table "orders": expected database.table'],
      [
        ["--glue-table", "sales.here_cli", "--metadata-location", `metadata/${CURRENT}`],
        "lakewarden: --glue-table and --metadata-location both name the current metadata: give one",
      ],
      [["--glue-table", "sales.here_cli", "--format", "delta"], "lakewarden: --format delta: the Glue entry sales.here_cli is an iceberg table"],
    ] as const) {
      const run = await cli("cleanup", dir, ...args);
      expect(run.code, args.join(" ")).toBe(2);
      expect(run.stderr, args.join(" ")).toBe(`${said}\n`);
      expect(await tableFiles(dir)).toEqual(before);
    }
    const help = await cli("cleanup", "--help");
    expect(help.stdout).toContain("--glue-table <database.table>");
  });
});

describe("cleanup --min-work", () => {
  it("is the new work a budgeted run does before its budget may stop it", async () => {
    const args = (dir: string) => ["cleanup", dir, "--metadata-location", `metadata/${CURRENT}`, "--max-duration", "1ms", "--json"];
    // With the default (1 object) a 1 ms budget stops the run early; with a minimum larger than the table's whole work it finishes.
    const short = await athena();
    const stopped = await cli(...args(short.dir));
    expect(stopped.code, stopped.stderr).toBe(0);
    expect((JSON.parse(stopped.stdout) as CleanupReport).status).toBe("stopped");
    for (const key of STRAYS) expect(await fileExists(short.dir, key), key).toBe(true);

    const long = await athena();
    const finished = await cli(...args(long.dir), "--min-work", "1000000");
    expect(finished.code, finished.stderr).toBe(0);
    expect((JSON.parse(finished.stdout) as CleanupReport).status).toBe("completed");
    for (const key of STRAYS) expect(await fileExists(long.dir, key), key).toBe(false);
  });

  it("takes a whole number of at least 1, and says so", async () => {
    const { dir } = await athena();
    for (const value of ["0", "-3", "many", "1.5"]) {
      const run = await cli("cleanup", dir, "--metadata-location", `metadata/${CURRENT}`, "--min-work", value);
      expect(run.code, value).toBe(2);
      expect(run.stderr, value).toBe(`lakewarden: --min-work = ${JSON.stringify(value)} is not a whole number of objects of at least 1\n`);
    }
    const help = await cli("cleanup", "--help");
    expect(help.stdout.replace(/\s+/g, " ")).toContain("--min-work <objects> with --max-duration: objects of new work");
  });
});
