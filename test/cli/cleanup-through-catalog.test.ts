/**
 * `lakewarden cleanup --catalog <uri> --catalog-table ns.t` and `--glue-table db.t` expire
 * snapshots through the catalog's own commit (runCleanupThroughCatalog), credentials from the
 * environment; `versions`, `head show`, `storage` and `files` take the same flags and read the
 * catalog's pointer. The REST catalog is the Iceberg project's own server (a JVM on this
 * machine), pyiceberg writes and reads through it (test/catalog/catalog_table.py); the Glue
 * catalog is moto's behind test/support/glue-server.ts (which enforces VersionId).
 */
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { GlueCatalog } from "../../lib/catalog/glue.ts";
import { restAuthFromEnvironment } from "../../lib/cli/catalog-options.ts";
import { BufferIO } from "../../lib/cli/io.ts";
import { runCli } from "../../lib/cli/run-cli.ts";
import type { CleanupReport } from "../../lib/maintenance/cleanup-report.ts";
import { startGlueServer, type GlueServer } from "../support/glue-server.ts";
import { startIcebergRestServer, type IcebergRestServer } from "../support/iceberg-rest.ts";
import { startMotoServer, type MotoHandle } from "../support/moto.ts";
import { startCatalogPython, type CatalogPython } from "../support/catalog-python.ts";

const RETAIN_MS = 1500;
const savedEnv = { ...process.env };

let dir: string;
let rest: IcebergRestServer;
let moto: MotoHandle;
let glue: GlueServer;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "lakewarden-cli-catalog-"));
  rest = await startIcebergRestServer(dir);
  moto = await startMotoServer();
  glue = await startGlueServer(moto);
  Object.assign(process.env, { AWS_ENDPOINT_URL_GLUE: glue.endpoint, AWS_REGION: "us-east-1", AWS_ACCESS_KEY_ID: "test", AWS_SECRET_ACCESS_KEY: "test" });
}, 180_000);

afterAll(async () => {
  await worker?.stop();
  process.env = savedEnv;
  await rest?.stop();
  await glue?.stop();
  await moto?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function cli(...argv: string[]) {
  const io = new BufferIO();
  const code = await runCli(argv, io);
  return { code, stdout: io.stdout, stderr: io.stderr };
}

interface Snapshot {
  version: string;
  rows: number;
  checksum: string;
}

/** pyiceberg through the REST catalog, one long-lived process for the file. */
let worker: CatalogPython | undefined;
async function py<T>(args: string[]): Promise<T> {
  worker ??= startCatalogPython({ ...process.env, ICEBERG_REST_URI: rest.uri });
  return worker.run<T>(args);
}
const tableDir = (table: string) => join(dir, "warehouse", ...table.split("."));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function filesUnder(root: string): Promise<Set<string>> {
  const out = new Set<string>();
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) if (entry.isFile()) out.add(`file:${join(entry.parentPath, entry.name)}`);
  return out;
}
const plain = (path: string) => path.replace(/^file:\/\/(?=\/)/, "file:");

describe("cleanup --catalog (an Iceberg REST catalog)", () => {
  it("expires through the catalog with OAuth2 credentials from the environment; pyiceberg reads every kept snapshot; versions --catalog lists the expired ones", async () => {
    const table = "ns.cli";
    const written = await py<{ snapshots: Snapshot[] }>(["write", table, `${rest.warehouse}/ns/cli`, "--commits", "3", "--retain-ms", String(RETAIN_MS)]);
    await sleep(RETAIN_MS + 300);
    const before = await py<Record<string, string[]>>(["files", table]);
    Object.assign(process.env, { LAKEWARDEN_CATALOG_CLIENT_ID: "lakewarden", LAKEWARDEN_CATALOG_CLIENT_SECRET: "not-a-secret" });
    onTestFinished(() => {
      delete process.env.LAKEWARDEN_CATALOG_CLIENT_ID;
      delete process.env.LAKEWARDEN_CATALOG_CLIENT_SECRET;
    });
    const seen = rest.requests.length;
    const flags = ["--catalog", rest.uri, "--catalog-table", table];

    const cleanup = await cli("cleanup", tableDir(table), ...flags, "--json");
    expect(cleanup.code, cleanup.stderr).toBe(0);
    const report = JSON.parse(cleanup.stdout) as CleanupReport & { catalog_replans: string[] };
    expect(report.status).toBe("completed");
    expect(report.catalog_replans).toEqual([]);
    const requests = rest.requests.slice(seen);
    expect(requests.find((r) => r.path === "/v1/oauth/tokens")?.body).toMatch(/client_id=lakewarden/);
    const commits = requests.filter((r) => r.method === "POST" && r.path === "/v1/namespaces/ns/tables/cli");
    expect(commits).toHaveLength(1);
    expect(commits[0]!.body).toContain(
      `"remove-snapshots","snapshot-ids":[${written.snapshots
        .slice(0, 2)
        .map((s) => s.version)
        .join(",")}]`,
    );

    const newest = written.snapshots.at(-1)!;
    const after = await py<{ versions: Snapshot[]; snapshots: string[] }>(["read", table]);
    expect(after.snapshots).toEqual([newest.version]);
    expect(after.versions).toEqual([newest]);
    const present = await filesUnder(tableDir(table));
    for (const file of before[newest.version]!.map(plain)) expect(present.has(file), file).toBe(true);
    const kept = new Set(before[newest.version]!.map(plain));
    const onlyExpired = written.snapshots
      .slice(0, 2)
      .flatMap((s) => before[s.version]!.map(plain))
      .filter((f) => !kept.has(f));
    expect(onlyExpired.length).toBeGreaterThan(0);
    for (const file of onlyExpired) expect(present.has(file), file).toBe(false);

    // Readers take the catalog's pointer too: every snapshot, the expired ones from the checkpoint.
    const versions = await cli("versions", tableDir(table), ...flags, "--json");
    expect(versions.code, versions.stderr).toBe(0);
    const listed = JSON.parse(versions.stdout) as { version_id?: string; is_cleaned_up: boolean }[];
    expect(listed.map((v) => v.version_id)).toEqual(written.snapshots.map((s) => s.version));
    expect(listed.map((v) => v.is_cleaned_up)).toEqual([true, true, false]);
    for (const command of [["head", "show"], ["storage"], ["files"]]) {
      const read = await cli(...command, tableDir(table), ...flags, "--json");
      expect(read.code, `${command.join(" ")}: ${read.stderr}`).toBe(0);
    }
  }, 240_000);

  it("half-named or doubly-named catalogs and credentials are usage errors; nothing read", async () => {
    const where = tableDir("ns.cli");
    for (const [args, said] of [
      [["--catalog", rest.uri], "--catalog needs --catalog-table <namespace.table>"],
      [["--catalog-table", "ns.cli"], "--catalog-table needs --catalog <uri>"],
      [["--catalog", rest.uri, "--catalog-table", "cli"], '--catalog-table "cli": expected namespace.table'],
      [["--catalog", "catalog.example.com", "--catalog-table", "ns.cli"], '--catalog "catalog.example.com": expected an http:// or https:// URI'],
      [["--catalog", rest.uri, "--catalog-table", "ns.cli", "--glue-table", "sales.orders"], "--glue-table and --catalog both name the table's catalog: give one"],
      [
        ["--catalog", rest.uri, "--catalog-table", "ns.cli", "--metadata-location", "metadata/x.metadata.json"],
        "--catalog and --metadata-location both name the current metadata: give one",
      ],
    ] as const) {
      const result = await cli("cleanup", where, ...args);
      expect(result.code, args.join(" ")).toBe(2);
      expect(result.stderr, args.join(" ")).toBe(`lakewarden: ${said}\n`);
    }
    expect(restAuthFromEnvironment("https://s3tables.eu-west-1.amazonaws.com/iceberg", {})).toEqual({ type: "sigv4", service: "s3tables", region: "eu-west-1" });
    expect(restAuthFromEnvironment("https://catalog.example.com", { LAKEWARDEN_CATALOG_TOKEN: "t" })).toEqual({ type: "bearer", token: "t" });
    expect(() => restAuthFromEnvironment("https://catalog.example.com", { LAKEWARDEN_CATALOG_CLIENT_ID: "a" })).toThrow(/go together: set both/);
    expect(() =>
      restAuthFromEnvironment("https://catalog.example.com", { LAKEWARDEN_CATALOG_CLIENT_ID: "a", LAKEWARDEN_CATALOG_CLIENT_SECRET: "b", LAKEWARDEN_CATALOG_TOKEN: "t" }),
    ).toThrow(/both set/);
    const help = await cli("cleanup", "--help");
    expect(help.stdout).toContain("--catalog-table <namespace.table>");
  });
});

describe("cleanup --glue-table", () => {
  it("expires through Glue (UpdateTable guarded by VersionId): the entry moves to the new metadata file, the old snapshots' files go", async () => {
    // A table pyiceberg wrote (its location is where its files are), registered in Glue at the REST catalog's pointer.
    const table = "ns.glued";
    const written = await py<{ snapshots: Snapshot[]; metadata_location: string }>([
      "write",
      table,
      `${rest.warehouse}/ns/glued`,
      "--commits",
      "3",
      "--retain-ms",
      String(RETAIN_MS),
    ]);
    await sleep(RETAIN_MS + 300);
    const pointer = written.metadata_location;
    await glue.setTable("sales", "expire_cli", { tableType: "EXTERNAL_TABLE", parameters: { table_type: "ICEBERG", metadata_location: pointer } });
    const before = await py<Record<string, string[]>>(["files", table]);
    const asked = glue.requests.length;
    const cleanup = await cli("cleanup", tableDir(table), "--glue-table", "sales.expire_cli", "--json");
    expect(cleanup.code, cleanup.stderr).toBe(0);
    const report = JSON.parse(cleanup.stdout) as CleanupReport;
    expect(report.status).toBe("completed");
    expect(report.versions_removed).toHaveLength(2);
    expect(glue.requests.slice(asked).filter((r) => r.target === "AWSGlue.UpdateTable")).toHaveLength(1);
    const entry = (await new GlueCatalog().table({ database: "sales", table: "expire_cli" })).parameters;
    expect(entry.previous_metadata_location).toBe(pointer);
    expect(entry.metadata_location).toMatch(/\/metadata\/00004-[0-9a-f-]{36}\.metadata\.json$/);
    const newest = written.snapshots.at(-1)!;
    const present = await filesUnder(tableDir(table));
    const kept = new Set(before[newest.version]!.map(plain));
    for (const file of kept) expect(present.has(file), file).toBe(true);
    const onlyExpired = written.snapshots
      .slice(0, 2)
      .flatMap((s) => before[s.version]!.map(plain))
      .filter((f) => !kept.has(f));
    expect(onlyExpired.length).toBeGreaterThan(0);
    for (const file of onlyExpired) expect(present.has(file), file).toBe(false);

    const versions = await cli("versions", tableDir(table), "--glue-table", "sales.expire_cli", "--json");
    expect(versions.code, versions.stderr).toBe(0);
    expect((JSON.parse(versions.stdout) as { is_cleaned_up: boolean }[]).map((v) => v.is_cleaned_up)).toEqual([true, true, false]);
  }, 120_000);
});
