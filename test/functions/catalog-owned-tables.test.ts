/**
 * The functions, as deployed (created from their environment), on Iceberg tables a catalog owns.
 * cleanup-table expires snapshots through the catalog's own commit:
 *   - an AWS Glue table pyiceberg wrote on moto's S3 through moto's Glue (behind
 *     test/support/glue-server.ts, which enforces VersionId): the run's UpdateTable moves the
 *     entry's metadata_location to the new metadata file;
 *   - a table in the Iceberg project's REST catalog server (a JVM on this machine), the function's
 *     OAuth2 client credentials read at run time from a secret in moto's Secrets Manager, which the
 *     environment names by id only.
 * Each table has four snapshots, the second tagged: the run expires the first and the third by the
 * table's own history.expire.* (the tag keeps the second). pyiceberg then loads each table through
 * its catalog, reads the current snapshot and time-travels to the tagged one, with the rows each
 * had before; every file only the expired snapshots reached is gone.
 * on-commit writes a REST catalog table's head at the file the catalog names, not at a newer file
 * an event names that the catalog never took.
 */
import { randomUUID } from "node:crypto";
import { copyFile, mkdtemp, readdir, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CreateSecretCommand, PutSecretValueCommand, SecretsManagerClient } from "@aws-sdk/client-secrets-manager";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCleanupTableLambda } from "../../functions/cleanup-table/lambda.ts";
import { createOnCommitLambda } from "../../functions/on-commit/lambda.ts";
import { readStoredHead } from "../../lib/head/stored-head.ts";
import { openStore } from "../../lib/store/open-store.ts";
import { encodeCleanupRequest } from "../../functions/shared/cleanup-request.ts";
import type { HandlerLog } from "../../functions/shared/observability.ts";
import { GlueCatalog } from "../../lib/catalog/glue.ts";
import { startGlueServer, type GlueServer } from "../support/glue-server.ts";
import { startIcebergRestServer, type IcebergRestServer } from "../support/iceberg-rest.ts";
import { startMotoServer, type MotoHandle } from "../support/moto.ts";
import { startCatalogPython, type CatalogPython } from "../support/catalog-python.ts";
import { lambdaContext } from "./lambda-context.ts";
import { listObjects, s3EventBody } from "./s3-events.ts";
import { pollOnce, sendBodies, type SqsHandler } from "./sqs-lambda.ts";

const BUCKET = "catalog-lake";
const GLUE_ROOT = "warehouse/glued";
const SECRET = "lakewarden/rest-catalog";
const RETAIN_MS = 1500;
const savedEnv = { ...process.env };
/** One long-lived pyiceberg process per catalog (Glue on moto, the REST server). */
const workers = new Map<string, CatalogPython>();

let dir: string;
let moto: MotoHandle;
let glue: GlueServer;
let rest: IcebergRestServer;
let secrets: SecretsManagerClient;
const logged: { level: string; message: string; attributes: Record<string, unknown> }[] = [];
const recorder: HandlerLog = {
  info: (message, ...attributes) => void logged.push({ level: "info", message, attributes: Object.assign({}, ...attributes) }),
  warn: (message, ...attributes) => void logged.push({ level: "warn", message, attributes: Object.assign({}, ...attributes) }),
  error: (message, ...attributes) => void logged.push({ level: "error", message, attributes: Object.assign({}, ...attributes) }),
};

const glueUri = `s3://${BUCKET}/${GLUE_ROOT}`;
const restTableDir = () => join(dir, "warehouse", "ns", "lambda");

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "lw-catalog-lambda-"));
  [moto, rest] = await Promise.all([startMotoServer({ buckets: [BUCKET] }), startIcebergRestServer(dir)]);
  glue = await startGlueServer(moto);
  secrets = new SecretsManagerClient(moto.clientConfig);
  await secrets.send(new CreateSecretCommand({ Name: SECRET, SecretString: JSON.stringify({ clientId: "lakewarden-lambda", clientSecret: "from-secrets-manager" }) }));
  for (const key of ["LAKEWARDEN_OLDER_THAN", "LAKEWARDEN_RETAIN_VERSIONS", "LAKEWARDEN_PROTECT_BEFORE", "LAKEWARDEN_SAFETY_WINDOW"]) delete process.env[key];
  Object.assign(process.env, moto.awsEnv, {
    AWS_ENDPOINT_URL_GLUE: glue.endpoint,
    AWS_ENDPOINT_URL_SECRETS_MANAGER: moto.endpoint,
    POWERTOOLS_LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "CRITICAL",
    POWERTOOLS_METRICS_DISABLED: "true",
  });
}, 180_000);

afterAll(async () => {
  await Promise.all([...workers.values()].map((worker) => worker.stop()));
  process.env = savedEnv;
  secrets?.destroy();
  await rest?.stop();
  await glue?.stop();
  await moto?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

interface Snapshot {
  version: string;
  rows: number;
  checksum: string;
}

async function py<T>(args: string[], env: Record<string, string> = {}): Promise<T> {
  const key = JSON.stringify(env);
  if (!workers.has(key)) workers.set(key, startCatalogPython({ ...process.env, ...env }));
  return workers.get(key)!.run<T>(args);
}

/** Four appends, the second tagged; once the table's max snapshot age has passed, the first and third are expired by its own retention. */
async function writeTaggedTable(table: string, location: string, env: Record<string, string>): Promise<{ snapshots: Snapshot[]; files: Record<string, string[]> }> {
  const written = await py<{ snapshots: Snapshot[] }>(["write", table, location, "--commits", "4", "--retain-ms", String(RETAIN_MS)], env);
  await py(["tag", table, "kept", "--snapshot", written.snapshots[1]!.version], env);
  await new Promise((resolve) => setTimeout(resolve, RETAIN_MS + 300));
  return { snapshots: written.snapshots, files: await py<Record<string, string[]>>(["files", table], env) };
}

/** One request for `table` through a moto queue into the deployed handler; the ids of the messages that failed. */
async function cleanOnce(handler: SqsHandler, table: string): Promise<string[]> {
  const queue = await moto.createQueue(`catalogs-${Math.random().toString(36).slice(2, 10)}`);
  await sendBodies(moto.sqsClient, queue, [encodeCleanupRequest({ table, requestedAt: new Date().toISOString() })]);
  const poll = await pollOnce(
    moto.sqsClient,
    queue,
    handler,
    lambdaContext("cleanup-table", () => 15 * 60_000),
  );
  return poll!.failedMessageIds;
}

/** The expired snapshots' files no kept snapshot reaches, and the kept snapshots' files. */
function partition(files: Record<string, string[]>, expired: Snapshot[], kept: Snapshot[]): { gone: string[]; stay: string[] } {
  const stay = new Set(kept.flatMap((s) => files[s.version]!));
  const gone = [...new Set(expired.flatMap((s) => files[s.version]!))].filter((file) => !stay.has(file));
  return { gone, stay: [...stay] };
}

describe("cleanup-table on catalog-owned Iceberg tables expires through the catalog's own commit", () => {
  it("Glue: UpdateTable moves the entry to the expired metadata (previous_metadata_location the base); pyiceberg reads the current and the tagged snapshot; the expired ones' files are gone", async () => {
    const env = { AWS_ENDPOINT_URL_S3: moto.endpoint };
    const { snapshots, files } = await writeTaggedTable("sales.glued", glueUri, env);
    const base = (await new GlueCatalog().table({ database: "sales", table: "glued" })).parameters.metadata_location!;
    const handler = createCleanupTableLambda(
      {
        ...process.env,
        LAKEWARDEN_TABLES: JSON.stringify([glueUri]),
        LAKEWARDEN_GLUE_TABLES: JSON.stringify({ [glueUri]: { database: "sales", table: "glued" } }),
      },
      { log: recorder },
    ) as unknown as SqsHandler;
    const asked = glue.requests.length;
    const from = logged.length;

    expect(await cleanOnce(handler, glueUri)).toEqual([]);

    expect(logged.slice(from).filter((l) => l.level !== "info")).toEqual([]);
    expect(glue.requests.slice(asked).filter((r) => r.target === "AWSGlue.UpdateTable")).toHaveLength(1);
    const entry = (await new GlueCatalog().table({ database: "sales", table: "glued" })).parameters;
    expect(entry.previous_metadata_location).toBe(base);
    expect(entry.metadata_location).toMatch(new RegExp(`^${glueUri}/metadata/\\d{5}-[0-9a-f-]{36}\\.metadata\\.json$`));
    const completed = logged.slice(from).find((l) => l.message === "cleanup completed")!.attributes;
    // By sequence number: the first and the third snapshots.
    expect(completed.versionsRemoved).toEqual([1, 3]);

    const [first, tagged, third, current] = snapshots as [Snapshot, Snapshot, Snapshot, Snapshot];
    const read = await py<{ versions: Snapshot[]; snapshots: string[]; metadata_location: string }>(["read", "sales.glued", "--version", tagged.version], env);
    expect(read.metadata_location).toBe(entry.metadata_location);
    expect(read.snapshots).toEqual([tagged.version, current.version]);
    expect(read.versions).toEqual([tagged, current]);
    const present = new Set((await listObjects(moto.s3Client, BUCKET, `${GLUE_ROOT}/`)).map((o) => `s3://${BUCKET}/${o.key}`));
    const { gone, stay } = partition(files, [first, third], [tagged, current]);
    expect(gone.length).toBeGreaterThan(0);
    for (const file of gone) expect(present.has(file), file).toBe(false);
    for (const file of stay) expect(present.has(file), file).toBe(true);
  }, 240_000);

  it("REST: the OAuth2 credentials come from the secret the environment names (read at run time); the table commit removes the expired snapshots; pyiceberg reads the current and the tagged snapshot", async () => {
    const env = { ICEBERG_REST_URI: rest.uri };
    const { snapshots, files } = await writeTaggedTable("ns.lambda", `${rest.warehouse}/ns/lambda`, env);
    const table = restTableDir();
    const environment = {
      ...process.env,
      LAKEWARDEN_TABLES: JSON.stringify([table]),
      LAKEWARDEN_CATALOG_TABLES: JSON.stringify({ [table]: { uri: rest.uri, namespace: ["ns"], table: "lambda", credentialsSecret: SECRET } }),
    };
    expect(JSON.stringify(environment)).not.toContain("from-secrets-manager");
    const handler = createCleanupTableLambda(environment, { log: recorder }) as unknown as SqsHandler;
    // Rotated after the function was made: the run reads the secret's current value.
    await secrets.send(new PutSecretValueCommand({ SecretId: SECRET, SecretString: JSON.stringify({ clientId: "lakewarden-rotated", clientSecret: "from-secrets-manager" }) }));
    const seen = rest.requests.length;
    const from = logged.length;

    expect(await cleanOnce(handler, table)).toEqual([]);

    expect(logged.slice(from).filter((l) => l.level !== "info")).toEqual([]);
    const requests = rest.requests.slice(seen);
    const tokens = requests.filter((r) => r.path === "/v1/oauth/tokens");
    expect(tokens.length).toBeGreaterThan(0);
    for (const token of tokens) expect(token.body).toMatch(/client_id=lakewarden-rotated&client_secret=from-secrets-manager/);
    for (const request of requests.filter((r) => r.path !== "/v1/oauth/tokens")) expect(request.authorization, request.path).toMatch(/^Bearer \S+/);
    const commits = requests.filter((r) => r.method === "POST" && r.path === "/v1/namespaces/ns/tables/lambda");
    expect(commits).toHaveLength(1);
    const [first, tagged, third, current] = snapshots as [Snapshot, Snapshot, Snapshot, Snapshot];
    expect(commits[0]!.body).toContain(`"remove-snapshots","snapshot-ids":[${first.version},${third.version}]`);
    expect(commits[0]!.body).toContain(`{"type":"assert-ref-snapshot-id","ref":"kept","snapshot-id":${tagged.version}}`);

    const read = await py<{ versions: Snapshot[]; snapshots: string[] }>(["read", "ns.lambda", "--version", tagged.version], env);
    expect(read.snapshots).toEqual([tagged.version, current.version]);
    expect(read.versions).toEqual([tagged, current]);
    const present = new Set<string>();
    for (const entry of await readdir(table, { recursive: true, withFileTypes: true })) if (entry.isFile()) present.add(join(entry.parentPath, entry.name));
    const plain = (file: string) => file.replace(/^file:(\/\/)?(?=\/)/, "");
    const { gone, stay } = partition(files, [first, third], [tagged, current]);
    expect(gone.length).toBeGreaterThan(0);
    for (const file of gone.map(plain)) expect(present.has(file), file).toBe(false);
    for (const file of stay.map(plain)) expect(present.has(file), file).toBe(true);
  }, 240_000);

  it("REST: a secret the function cannot use fails the message with one line naming the secret (never its value); the table is untouched", async () => {
    await secrets.send(new PutSecretValueCommand({ SecretId: SECRET, SecretString: JSON.stringify({ clientId: "only-an-id", password: "hunter2" }) }));
    const table = restTableDir();
    const before = await readdir(table, { recursive: true });
    const handler = createCleanupTableLambda(
      {
        ...process.env,
        LAKEWARDEN_TABLES: JSON.stringify([table]),
        LAKEWARDEN_CATALOG_TABLES: JSON.stringify({ [table]: { uri: rest.uri, namespace: ["ns"], table: "lambda", credentialsSecret: SECRET } }),
      },
      { log: recorder },
    ) as unknown as SqsHandler;
    const seen = rest.requests.length;
    const from = logged.length;
    expect(await cleanOnce(handler, table)).toHaveLength(1);
    const errors = logged.slice(from).filter((l) => l.level === "error");
    expect(errors).toHaveLength(1);
    const line = String(errors[0]!.attributes.error);
    expect(line).toBe(
      `CatalogSecretError: catalog credentials secret ${SECRET}: its value has no usable credentials (keys: clientId, password; expected clientId and clientSecret, or token); nothing read, written or deleted`,
    );
    expect(line).not.toContain("hunter2");
    expect(rest.requests.slice(seen)).toEqual([]);
    expect((await readdir(table, { recursive: true })).sort()).toEqual(before.sort());
  }, 60_000);
});

describe("on-commit on a REST catalog table", () => {
  it("writes the head at the metadata the catalog names (loadTable with the secret's credentials), not at a newer file an event names that the catalog never took", async () => {
    await secrets.send(new PutSecretValueCommand({ SecretId: SECRET, SecretString: JSON.stringify({ clientId: "lakewarden-heads", clientSecret: "from-secrets-manager" }) }));
    const env = { ICEBERG_REST_URI: rest.uri };
    const written = await py<{ snapshots: Snapshot[]; metadata_location: string }>(["write", "ns.heads", `${rest.warehouse}/ns/heads`, "--commits", "2"], env);
    const local = join(dir, "warehouse", "ns", "heads");
    const accepted = written.metadata_location.slice(written.metadata_location.lastIndexOf("/") + 1);
    const sequence = Number(accepted.slice(0, 5));
    // A commit written beside the catalog's file and never swapped in (a writer that lost its race).
    const unaccepted = `${String(sequence + 1).padStart(5, "0")}-${randomUUID()}.metadata.json`;
    await copyFile(join(local, "metadata", accepted), join(local, "metadata", unaccepted));
    // The deployment's table is an s3:// URI; its store is the REST catalog's local warehouse folder.
    const tableUri = "s3://rest-heads/ns/heads";
    const handler = createOnCommitLambda(
      {
        ...process.env,
        LAKEWARDEN_TABLES: JSON.stringify([tableUri]),
        LAKEWARDEN_CATALOG_TABLES: JSON.stringify({ [tableUri]: { uri: rest.uri, namespace: ["ns"], table: "heads", credentialsSecret: SECRET } }),
      },
      {
        openStore: (uri) => (uri === tableUri ? openStore(local) : openStore(uri)),
        log: recorder,
        // A minute on: the unaccepted file is past the time a commit in flight takes to reach the catalog.
        now: () => Date.now() + 60_000,
      },
    ) as unknown as SqsHandler;
    const events = await Promise.all(
      [accepted, unaccepted].map(async (name) => ({
        bucket: "rest-heads",
        key: `ns/heads/metadata/${name}`,
        size: (await stat(join(local, "metadata", name))).size,
        eTag: "0123456789abcdef0123456789abcdef",
        lastModified: new Date(),
      })),
    );
    const queue = await moto.createQueue(`rest-heads-${randomUUID().slice(0, 8)}`);
    await sendBodies(moto.sqsClient, queue, [s3EventBody(events)]);
    const seen = rest.requests.length;
    const from = logged.length;

    const poll = await pollOnce(moto.sqsClient, queue, handler, lambdaContext("on-commit"));
    expect(poll!.failedMessageIds).toEqual([]);

    const stored = await readStoredHead(openStore(local));
    expect(stored.state).toBe("readable");
    if (stored.state !== "readable") return;
    expect(stored.content.snapshot.versionFile.key).toBe(`metadata/${accepted}`);
    expect(logged.slice(from).filter((l) => l.level === "warn")).toEqual([
      expect.objectContaining({ message: expect.stringMatching(/^not the catalog's current metadata/), attributes: expect.objectContaining({ newerThanCatalog: true }) }),
    ]);
    const requests = rest.requests.slice(seen);
    expect(requests.find((r) => r.path === "/v1/oauth/tokens")?.body).toMatch(/client_id=lakewarden-heads/);
    expect(requests.filter((r) => r.method === "GET" && r.path === "/v1/namespaces/ns/tables/heads").length).toBeGreaterThan(0);
    expect(requests.filter((r) => r.method === "POST" && r.path !== "/v1/oauth/tokens")).toEqual([]);
  }, 120_000);
});
