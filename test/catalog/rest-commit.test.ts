/**
 * Snapshot expiry through an Iceberg REST catalog: the Iceberg project's own REST catalog server
 * (test/support/iceberg-rest.ts, a JVM on this machine) owns the table, pyiceberg's RestCatalog
 * writes it (test/catalog/catalog_table.py), lakewarden loads it, sends a table commit with
 * requirements (assert-table-uuid, assert-ref-snapshot-id) and updates (remove-snapshots), and
 * deletes only what the expired snapshots alone reached once a fresh load shows the commit.
 * pyiceberg reads the result back through the same catalog.
 */
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RestCatalogTable } from "../../lib/catalog/iceberg-rest.ts";
import { formatAtCatalogPointer } from "../../lib/formats/catalog.ts";
import { CatalogCommitError, MaintenanceOptOutError } from "../../lib/formats/errors.ts";
import { runCleanupThroughCatalog } from "../../lib/maintenance/catalog-cleanup.ts";
import { openStore } from "../../lib/store/open-store.ts";
import { readTimeline } from "../../lib/versions/timeline.ts";
import { startIcebergRestServer, type IcebergRestServer } from "../support/iceberg-rest.ts";
import { startCatalogPython, type CatalogPython } from "../support/catalog-python.ts";

/** pyiceberg through the recording pass-through, and straight to the server (`direct`), each one long-lived process. */
const workers: { recorded?: CatalogPython; direct?: CatalogPython } = {};
const RETAIN_MS = 1500;

let dir: string;
let server: IcebergRestServer;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "lakewarden-rest-"));
  server = await startIcebergRestServer(dir);
}, 120_000);

afterAll(async () => {
  await Promise.all([workers.recorded?.stop(), workers.direct?.stop()]);
  await server?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

interface Snapshot {
  version: string;
  rows: number;
  checksum: string;
}

async function py<T>(args: string[], options: { direct?: boolean } = {}): Promise<T> {
  const which = options.direct ? "direct" : "recorded";
  workers[which] ??= startCatalogPython({ ...process.env, ICEBERG_REST_URI: options.direct ? server.directUri : server.uri });
  return workers[which].run<T>(args);
}
const tableDir = (table: string) => join(dir, "warehouse", ...table.split("."));
const write = (table: string, commits: number, options: { direct?: boolean } = {}) =>
  py<{ snapshots: Snapshot[]; retries: number }>(
    ["write", table, `${server.warehouse}/${table.replace(".", "/")}`, "--commits", String(commits), "--retain-ms", String(RETAIN_MS)],
    options,
  );
const read = (table: string, versions: readonly string[] = []) =>
  py<{ versions: Snapshot[]; current: string; snapshots: string[]; refs: Record<string, string>; metadata_location: string }>([
    "read",
    table,
    ...versions.flatMap((v) => ["--version", v]),
  ]);
const filesOf = (table: string) => py<Record<string, string[]>>(["files", table]);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function restTable(table: string, auth?: ConstructorParameters<typeof RestCatalogTable>[0]["auth"]): RestCatalogTable {
  const [namespace, name] = table.split(".") as [string, string];
  return new RestCatalogTable({ uri: server.uri, namespace: [namespace], table: name, ...(auth ? { auth } : {}) });
}

async function filesUnder(table: string): Promise<Set<string>> {
  const root = tableDir(table);
  const out = new Set<string>();
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) out.add(`file:${join(entry.parentPath, entry.name)}`);
  }
  return out;
}

/** pyiceberg names files `file:/…` or `file:///…`: one spelling to compare. */
const plain = (path: string) => path.replace(/^file:\/\/(?=\/)/, "file:");

async function checkFiles(table: string, before: Record<string, string[]>, kept: readonly string[]): Promise<string[]> {
  const present = await filesUnder(table);
  const keptFiles = new Set(kept.flatMap((id) => before[id] ?? []).map(plain));
  const onlyExpired = Object.entries(before)
    .filter(([id]) => !kept.includes(id))
    .flatMap(([, files]) => files.map(plain))
    .filter((f) => !keptFiles.has(f));
  for (const file of keptFiles) expect(present.has(file), `kept ${file}`).toBe(true);
  for (const file of onlyExpired) expect(present.has(file), `expired-only ${file}`).toBe(false);
  return onlyExpired;
}

describe("Iceberg expiry through a REST catalog (the Iceberg project's server; pyiceberg writes, lakewarden expires)", () => {
  it("expires by history.expire.* with a table commit (requirements and updates, exact ids), authenticated by OAuth2 client credentials; pyiceberg reads what is kept", async () => {
    const table = "ns.orders";
    const written = await write(table, 4);
    await sleep(RETAIN_MS + 300);
    const before = await filesOf(table);
    const catalog = restTable(table, { type: "oauth2", clientId: "lakewarden", clientSecret: "not-a-secret" });
    const store = openStore(tableDir(table));
    const seen = server.requests.length;

    const report = await runCleanupThroughCatalog(store, catalog);
    expect(report.status).toBe("completed");
    expect(report.catalog_replans).toEqual([]);

    const requests = server.requests.slice(seen);
    const token = requests.find((r) => r.path === "/v1/oauth/tokens");
    expect(token?.body).toMatch(/grant_type=client_credentials/);
    expect(token?.body).toMatch(/client_id=lakewarden/);
    const commits = requests.filter((r) => r.method === "POST" && r.path === "/v1/namespaces/ns/tables/orders");
    expect(commits).toHaveLength(1);
    expect(commits[0]!.authorization).toMatch(/^Bearer \S+$/);
    const body = commits[0]!.body;
    const newest = written.snapshots.at(-1)!;
    // 64-bit ids exactly as the metadata has them (JSON numbers, not rounded).
    expect(body).toContain(`{"type":"assert-ref-snapshot-id","ref":"main","snapshot-id":${newest.version}}`);
    expect(body).toMatch(/"type":"assert-table-uuid","uuid":"[0-9a-f-]{36}"/);
    expect(body).toContain(
      `{"action":"remove-snapshots","snapshot-ids":[${written.snapshots
        .slice(0, 3)
        .map((s) => s.version)
        .join(",")}]}`,
    );

    const after = await read(table);
    expect(after.snapshots).toEqual([newest.version]);
    expect(after.versions).toEqual([newest]);
    const onlyExpired = await checkFiles(table, before, after.snapshots);
    expect(onlyExpired).toHaveLength(3);

    const entry = await catalog.load();
    const timeline = await readTimeline(store, formatAtCatalogPointer(store, entry).format);
    expect(timeline.records.map((r) => r.version_id)).toEqual(written.snapshots.map((s) => s.version));
  }, 180_000);

  it("a pyiceberg commit landing right before lakewarden's: the catalog answers 409, lakewarden re-plans, both commits survive", async () => {
    const table = "ns.raced";
    const written = await write(table, 3);
    await sleep(RETAIN_MS + 300);
    let racer: Snapshot[] = [];
    let raced = false;
    server.beforeCommit(async (request) => {
      if (raced || !request.path.endsWith("/tables/raced") || !request.body.includes("remove-snapshots")) return;
      raced = true;
      racer = (await write(table, 1, { direct: true })).snapshots;
    });
    try {
      const before = await filesOf(table);
      const report = await runCleanupThroughCatalog(openStore(tableDir(table)), restTable(table));
      expect(report.status).toBe("completed");
      expect(report.catalog_replans).toHaveLength(1);
      expect(report.catalog_replans[0]).toMatch(/refused \(409: CommitFailedException: Requirement failed: branch main/);
      const after = await read(table);
      expect(after.current).toBe(racer[0]!.version);
      expect(after.versions.at(-1)!.rows).toBe(written.snapshots.at(-1)!.rows + 3);
      expect(after.snapshots).not.toContain(written.snapshots[0]!.version);
      await checkFiles(table, { ...before, ...(await filesOf(table)) }, after.snapshots);
    } finally {
      server.beforeCommit(null);
    }
  }, 180_000);

  it("a pyiceberg commit right after lakewarden's (applied, its answer not yet back): the fresh load shows lakewarden's under it, the expiry's deletes go ahead, both commits survive", async () => {
    const table = "ns.after_commit";
    const written = await write(table, 3);
    await sleep(RETAIN_MS + 300);
    const before = await filesOf(table);
    let racer: Snapshot[] = [];
    let raced = false;
    server.afterCommit(async (request) => {
      if (raced || !request.path.endsWith("/tables/after_commit") || !request.body.includes("remove-snapshots")) return;
      raced = true;
      racer = (await write(table, 1, { direct: true })).snapshots;
    });
    try {
      const report = await runCleanupThroughCatalog(openStore(tableDir(table)), restTable(table));
      expect(report.status).toBe("completed");
      expect(report.catalog_replans).toEqual([]);
      expect(racer).toHaveLength(1);
      const after = await read(table);
      expect(after.current).toBe(racer[0]!.version);
      expect(after.snapshots.sort()).toEqual([written.snapshots.at(-1)!.version, racer[0]!.version].sort());
      expect(after.versions.at(-1)!.rows).toBe(written.snapshots.at(-1)!.rows + 3);
      await checkFiles(table, before, after.snapshots);
    } finally {
      server.afterCommit(null);
    }
  }, 180_000);

  it("a commit whose answer is lost (the catalog applied it, then answered nothing): stopped with every file in place; the next run finishes the job", async () => {
    const table = "ns.lost";
    const written = await write(table, 3);
    await sleep(RETAIN_MS + 300);
    const before = await filesOf(table);
    const filesBefore = await filesUnder(table);
    const store = openStore(tableDir(table));
    server.loseNextCommitAnswer();
    const error = await runCleanupThroughCatalog(store, restTable(table)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CatalogCommitError);
    expect((error as CatalogCommitError).outcome).toBe("unknown");
    expect((error as Error).message).toMatch(/got no answer .*: it may or may not have applied; stopped with nothing deleted/);
    const filesAfter = await filesUnder(table);
    for (const file of filesBefore) expect(filesAfter.has(file), file).toBe(true);
    // The catalog took it: it serves one snapshot now.
    expect((await read(table)).snapshots).toEqual([written.snapshots.at(-1)!.version]);

    const next = await runCleanupThroughCatalog(store, restTable(table));
    expect(next.status).toBe("completed");
    await checkFiles(table, before, [written.snapshots.at(-1)!.version]);
  }, 180_000);

  it("SigV4: every request is signed for the service and region given (S3 Tables: s3tables)", async () => {
    const table = "ns.orders";
    const seen = server.requests.length;
    const catalog = restTable(table, {
      type: "sigv4",
      region: "us-east-1",
      service: "s3tables",
      credentials: async () => ({ accessKeyId: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY" }),
    });
    const entry = await catalog.load();
    expect(entry.parameters.metadata_location).toMatch(/\/metadata\/\d{5}-[0-9a-f-]{36}\.metadata\.json$/);
    const signed = server.requests.slice(seen);
    expect(signed.map((r) => r.path)).toEqual(["/v1/config", "/v1/namespaces/ns/tables/orders"]);
    for (const request of signed) {
      expect(request.authorization).toMatch(
        /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/us-east-1\/s3tables\/aws4_request, SignedHeaders=[a-z0-9;-]*host[a-z0-9;-]*, Signature=[0-9a-f]{64}$/,
      );
    }
  }, 60_000);

  it("an expired tag (max-ref-age-ms) is dropped in the same table commit (remove-snapshot-ref), and the snapshot only it kept expires with the others", async () => {
    const table = "ns.tagged";
    const written = await write(table, 3);
    const [oldest, , newest] = written.snapshots as [Snapshot, Snapshot, Snapshot];
    await py(["tag", table, "before-migration", "--snapshot", oldest.version, "--max-ref-age-ms", String(RETAIN_MS)]);
    expect((await read(table)).refs).toEqual({ main: newest.version, "before-migration": oldest.version });
    await sleep(RETAIN_MS + 300);
    const before = await filesOf(table);
    const seen = server.requests.length;

    const report = await runCleanupThroughCatalog(openStore(tableDir(table)), restTable(table));
    expect(report.status).toBe("completed");
    const commits = server.requests.slice(seen).filter((r) => r.method === "POST" && r.path === "/v1/namespaces/ns/tables/tagged");
    expect(commits).toHaveLength(1);
    expect(commits[0]!.body).toContain('{"action":"remove-snapshot-ref","ref-name":"before-migration"}');

    const after = await read(table);
    expect(after.refs).toEqual({ main: newest.version });
    expect(after.snapshots).toEqual([newest.version]);
    expect(after.versions).toEqual([newest]);
    await checkFiles(table, before, after.snapshots);
  }, 180_000);

  it("a table whose catalog says gc.enabled=false is left alone with one line: no commit sent, no file touched", async () => {
    const table = "ns.no_gc";
    await write(table, 3);
    const { metadata_location: pointer } = await py<{ metadata_location: string }>(["set-property", table, "gc.enabled", "false"]);
    await sleep(RETAIN_MS + 300);
    const tableFiles = async () => [...(await filesUnder(table))].filter((file) => !file.includes("/_lakewarden/"));
    const filesBefore = await tableFiles();
    const seen = server.requests.length;
    const error = await runCleanupThroughCatalog(openStore(tableDir(table)), restTable(table)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MaintenanceOptOutError);
    expect((error as Error).message.split("\n")).toHaveLength(1);
    expect((error as Error).message).toMatch(/gc\.enabled is false/);
    expect(server.requests.slice(seen).filter((r) => r.method === "POST" && r.path === "/v1/namespaces/ns/tables/no_gc")).toEqual([]);
    // The run's own lease and receipt aside (under _lakewarden/), the table is as it was.
    expect(await tableFiles()).toEqual(filesBefore);
    expect((await read(table)).metadata_location).toBe(pointer);
  }, 180_000);

  it("a 5xx answer to a commit the catalog applied: the commit state is unknown, every file stays; the next run reads the table back and finishes the job", async () => {
    const table = "ns.gateway";
    const written = await write(table, 3);
    await sleep(RETAIN_MS + 300);
    const before = await filesOf(table);
    const filesBefore = await filesUnder(table);
    const store = openStore(tableDir(table));
    server.loseNextCommitAnswer(503);
    const error = await runCleanupThroughCatalog(store, restTable(table)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CatalogCommitError);
    expect((error as CatalogCommitError).outcome).toBe("unknown");
    expect((error as Error).message).toMatch(/503/);
    const filesAfter = await filesUnder(table);
    for (const file of filesBefore) expect(filesAfter.has(file), file).toBe(true);
    expect((await read(table)).snapshots).toEqual([written.snapshots.at(-1)!.version]);

    const next = await runCleanupThroughCatalog(store, restTable(table));
    expect(next.status).toBe("completed");
    await checkFiles(table, before, [written.snapshots.at(-1)!.version]);
  }, 180_000);
});
