/**
 * `cleanup --catalog` on a table reached through S3 Tables (requests signed with SigV4 for
 * "s3tables"): S3 Tables' own snapshot management is asked first (GetTableMaintenanceConfiguration,
 * `icebergSnapshotManagement.status`, through the real @aws-sdk/client-s3tables), and an enabled one
 * leaves the table alone with one line. moto 5.2.5 serves s3tables but not that call, so the S3
 * Tables API here is a small HTTP server in this file that speaks exactly that one call (the path
 * and answer shape of the s3tables API) and passes every Iceberg REST request on to the Iceberg
 * project's REST catalog server, where pyiceberg wrote the table: the disabled case expires through
 * the same signed requests, and pyiceberg reads the result back.
 */
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BufferIO } from "../../lib/cli/io.ts";
import { runCli } from "../../lib/cli/run-cli.ts";
import { startIcebergRestServer, type IcebergRestServer } from "../support/iceberg-rest.ts";
import { startCatalogPython, type CatalogPython } from "../support/catalog-python.ts";

const TABLE_BUCKET = "arn:aws:s3tables:us-east-1:123456789012:bucket/lake";
const RETAIN_MS = 1500;
const savedEnv = { ...process.env };

interface Seen {
  method: string;
  path: string;
  authorization: string;
}

let dir: string;
let rest: IcebergRestServer;
let front: Server;
let frontUri: string;
/** What the S3 Tables call answers next: a status, or an HTTP error. */
let maintenance: { status: "enabled" | "disabled" } | { error: number; type: string } = { status: "enabled" };
const seen: Seen[] = [];

/** GET /tables/{tableBucketARN}/{namespace}/{name}/maintenance, as the s3tables API serves it; anything else goes to the REST catalog. */
async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const url = request.url ?? "/";
  seen.push({ method: request.method ?? "GET", path: decodeURIComponent(url.split("?")[0]!), authorization: String(request.headers.authorization ?? "") });
  const match = /^\/tables\/([^/]+)\/([^/]+)\/([^/]+)\/maintenance$/.exec(url.split("?")[0]!);
  if (match) {
    const [tableBucket, namespace, name] = match.slice(1).map(decodeURIComponent) as [string, string, string];
    if ("error" in maintenance) {
      response.writeHead(maintenance.error, { "content-type": "application/json", "x-amzn-errortype": maintenance.type });
      response.end(JSON.stringify({ message: `${maintenance.type} for ${namespace}.${name}` }));
      return;
    }
    response.writeHead(200, { "content-type": "application/json" });
    response.end(
      JSON.stringify({
        tableARN: `${tableBucket}/table/${namespace}-${name}`,
        configuration: { icebergSnapshotManagement: { status: maintenance.status, settings: { icebergSnapshotManagement: { minSnapshotsToKeep: 1, maxSnapshotAgeHours: 120 } } } },
      }),
    );
    return;
  }
  const target = new URL(url.replace(/^\/iceberg/, ""), `${rest.uri}/`);
  await new Promise<void>((resolve) => {
    const forwarded = httpRequest(target, { method: request.method, headers: { ...request.headers, host: target.host } }, (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(response);
      answer.once("end", resolve);
    });
    forwarded.end(Buffer.concat(chunks));
  });
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "lakewarden-s3tables-"));
  rest = await startIcebergRestServer(dir);
  front = createServer((request, response) => void handle(request, response));
  await new Promise<void>((resolve) => front.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(front.address() as AddressInfo).port}`;
  frontUri = `${origin}/iceberg`;
  Object.assign(process.env, {
    // Sign for S3 Tables as its endpoint is signed; its API at this server.
    LAKEWARDEN_CATALOG_SIGV4_SERVICE: "s3tables",
    LAKEWARDEN_CATALOG_SIGV4_REGION: "us-east-1",
    AWS_ENDPOINT_URL_S3TABLES: origin,
    AWS_REGION: "us-east-1",
    AWS_ACCESS_KEY_ID: "AKIDEXAMPLE",
    AWS_SECRET_ACCESS_KEY: "test",
  });
}, 180_000);

afterAll(async () => {
  await worker?.stop();
  process.env = savedEnv;
  await new Promise((resolve) => front?.close(resolve));
  await rest?.stop();
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

async function listing(root: string): Promise<string[]> {
  return (await readdir(root, { recursive: true, withFileTypes: true }))
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
}

let written: { snapshots: Snapshot[] };
const tableDir = () => join(dir, "warehouse", "ns", "managed");
const cleanup = () => cli("cleanup", tableDir(), "--catalog", frontUri, "--catalog-table", "ns.managed", "--warehouse", TABLE_BUCKET, "--json");
const maintenanceCalls = (from: number) => seen.slice(from).filter((r) => r.path.startsWith("/tables/"));

describe("cleanup --catalog on an S3 Tables table", () => {
  beforeAll(async () => {
    written = await py<{ snapshots: Snapshot[] }>(["write", "ns.managed", `${rest.warehouse}/ns/managed`, "--commits", "3", "--retain-ms", String(RETAIN_MS)]);
    await new Promise((resolve) => setTimeout(resolve, RETAIN_MS + 300));
  }, 120_000);

  it("leaves the table alone with one line while S3 Tables' own snapshot management is enabled: asked first (signed for s3tables), no commit, no file touched", async () => {
    maintenance = { status: "enabled" };
    const before = await listing(tableDir());
    const from = seen.length;
    const result = await cleanup();
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
    expect(result.stderr).toMatch(/S3 Tables' own snapshot management is enabled for this table \(icebergSnapshotManagement\).*nothing read, written or deleted/);
    const calls = maintenanceCalls(from);
    expect(calls).toEqual([
      {
        method: "GET",
        path: `/tables/${TABLE_BUCKET}/ns/managed/maintenance`,
        authorization: expect.stringMatching(/Credential=AKIDEXAMPLE\/\d{8}\/us-east-1\/s3tables\/aws4_request/),
      },
    ]);
    expect(seen.slice(from).filter((r) => r.method === "POST")).toEqual([]);
    expect(await listing(tableDir())).toEqual(before);
  });

  it("an unreadable status (access denied) is one line and nothing touched: whether S3 Tables maintains the table is unknown", async () => {
    maintenance = { error: 403, type: "AccessDeniedException" };
    const before = await listing(tableDir());
    const from = seen.length;
    const result = await cleanup();
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
    expect(result.stderr).toMatch(
      /access denied \(AccessDeniedException: .*\): the role needs s3tables:GetTableMaintenanceConfiguration on the table: whether S3 Tables maintains it is unknown; nothing read, written or deleted/,
    );
    expect(seen.slice(from).filter((r) => r.method === "POST")).toEqual([]);
    expect(await listing(tableDir())).toEqual(before);
  });

  it("with S3 Tables' snapshot management disabled, expires through the same signed REST requests; pyiceberg reads the kept snapshot", async () => {
    maintenance = { status: "disabled" };
    const from = seen.length;
    const result = await cleanup();
    expect(result.code, result.stderr).toBe(0);
    expect(maintenanceCalls(from)).toHaveLength(1);
    const commits = seen.slice(from).filter((r) => r.method === "POST" && r.path === "/iceberg/v1/namespaces/ns/tables/managed");
    expect(commits).toHaveLength(1);
    expect(commits[0]!.authorization).toMatch(/\/s3tables\/aws4_request/);
    const newest = written.snapshots.at(-1)!;
    const after = await py<{ versions: Snapshot[]; snapshots: string[] }>(["read", "ns.managed"]);
    expect(after.snapshots).toEqual([newest.version]);
    expect(after.versions).toEqual([newest]);
  });
});
