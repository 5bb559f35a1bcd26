/**
 * The Glue Data Catalog of the tests is moto's (test/support/moto.ts): entries are made with the
 * real Glue API (CreateDatabase, CreateTable, UpdateTable, DeleteTable) and GetTable is answered
 * by moto. In front of it sits a pass-through on another loopback port, for the two things moto
 * does not do: it records each request (the operation, its body and the SigV4 scope's service, so
 * a test can count lookups and see them signed for "glue"), and it answers GetTable of a table
 * set to fail with an AccessDeniedException (moto does not enforce IAM on Glue). Everything else
 * is forwarded byte for byte and moto's answer returned as it is.
 *
 * moto's Glue ignores UpdateTable's VersionId (moto 5.2.5: any UpdateTable replaces the entry),
 * where real Glue refuses one whose VersionId is not the entry's with a
 * ConcurrentModificationException: the optimistic lock iceberg-java, pyiceberg and lakewarden
 * commit by. With `enforceVersionId`, the pass-through does what Glue does: UpdateTables of one
 * table are taken one at a time, and one naming another VersionId than the entry's (read from
 * moto right then) is refused as Glue refuses it. Two more things for the commit tests: a hook
 * run before an UpdateTable is forwarded (a writer's commit forced into that moment), and a kill
 * switch that applies the next UpdateTable and then answers nothing at all until revived (the
 * server lost right after it applied a commit).
 */
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { CreateDatabaseCommand, CreateTableCommand, DeleteTableCommand, GetTableCommand, UpdateTableCommand, type TableInput } from "@aws-sdk/client-glue";
import { MOTO_ACCOUNT, MOTO_REGION, type MotoHandle } from "./moto.ts";

export interface GlueEntry {
  /** Glue's TableType (Athena and iceberg-java write EXTERNAL_TABLE). */
  tableType?: string;
  parameters: Record<string, string>;
  location?: string;
}

export interface GlueRequest {
  target: string;
  body: { DatabaseName?: string; Name?: string; CatalogId?: string; VersionId?: string; TableInput?: { Name?: string; Parameters?: Record<string, string> } };
  /** The SigV4 credential scope's service (from the Authorization header). */
  signedFor: string | null;
}

export interface GlueServer {
  /** The recording endpoint: point the code under test here (AWS_ENDPOINT_URL_GLUE). */
  endpoint: string;
  /** The client settings that point a GlueClient here. */
  clientConfig: { endpoint: string; region: string; credentials: { accessKeyId: string; secretAccessKey: string } };
  /** Creates (or replaces) the entry of `database.table` in moto's Glue, making the database when needed. */
  setTable(database: string, table: string, entry: GlueEntry): Promise<void>;
  /** Deletes the entry of `database.table` (GetTable then answers EntityNotFoundException). */
  dropTable(database: string, table: string): Promise<void>;
  /** Answers GetTable on `database.table` with this error instead (null: clear it). */
  failTable(database: string, table: string, error: "AccessDeniedException" | null): void;
  /** Runs `hook` before each UpdateTable is forwarded (null: none); it may commit through moto itself. */
  beforeUpdate(hook: ((request: GlueRequest) => Promise<void>) | null): void;
  /** The next UpdateTable is applied, then no request gets an answer (connections dropped) until revive(). */
  killAfterNextUpdate(): void;
  revive(): void;
  requests: GlueRequest[];
  stop(): Promise<void>;
}

export interface GlueServerOptions {
  /** Refuse an UpdateTable whose VersionId is not the entry's, as real Glue does (moto does not). */
  enforceVersionId?: boolean;
}

/** Glue on `moto`, behind a recording pass-through. Stopping it leaves moto running. */
export async function startGlueServer(moto: MotoHandle, options: GlueServerOptions = {}): Promise<GlueServer> {
  const failures = new Map<string, string>();
  let updateHook: ((request: GlueRequest) => Promise<void>) | null = null;
  let killNext = false;
  let dead = false;
  /** UpdateTables one at a time: the VersionId check and the update are one step, as in Glue. */
  let updates: Promise<unknown> = Promise.resolve();
  const requests: GlueRequest[] = [];
  const upstream = new URL(moto.endpoint);

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const payload = Buffer.concat(chunks);
    const target = String(request.headers["x-amz-target"] ?? "");
    const scope = /Credential=[^/]+\/\d{8}\/[^/]+\/([^/]+)\/aws4_request/.exec(String(request.headers.authorization ?? ""));
    let body: GlueRequest["body"] = {};
    try {
      body = JSON.parse(payload.toString("utf8") || "{}") as GlueRequest["body"];
    } catch {
      // Not JSON: moto says so.
    }
    const recorded = { target, body, signedFor: scope?.[1] ?? null };
    requests.push(recorded);
    if (dead) return void response.destroy();
    if (target === "AWSGlue.GetTable" && failures.get(`${body.DatabaseName}.${body.Name}`) === "AccessDeniedException") return deny(response, body);
    if (target === "AWSGlue.UpdateTable") {
      const turn = updates.then(() => update(recorded, payload, request, response));
      updates = turn.catch(() => undefined);
      return turn;
    }
    return forward(payload, request, response);
  };
  const update = async (recorded: GlueRequest, payload: Buffer, request: IncomingMessage, response: ServerResponse): Promise<void> => {
    await updateHook?.(recorded);
    const { body } = recorded;
    if (options.enforceVersionId && body.VersionId !== undefined) {
      const current = await moto.glueClient.send(new GetTableCommand({ DatabaseName: body.DatabaseName, Name: body.TableInput?.Name }));
      if (current.Table?.VersionId !== body.VersionId) {
        response.writeHead(400, { "content-type": "application/x-amz-json-1.1", "x-amzn-errortype": "ConcurrentModificationException" });
        return void response.end(
          JSON.stringify({
            __type: "ConcurrentModificationException",
            Message: `Update table failed due to concurrent modifications. (version ${body.VersionId}, the entry is at ${current.Table?.VersionId})`,
          }),
        );
      }
    }
    if (killNext) {
      killNext = false;
      await forward(payload, request, null);
      dead = true;
      return void response.destroy();
    }
    return forward(payload, request, response);
  };
  /** Sends the request to moto and its answer back (`response` null: the answer is read and dropped). */
  const forward = async (payload: Buffer, request: IncomingMessage, response: ServerResponse | null): Promise<void> => {
    await new Promise<void>((resolve, reject) => {
      const forwarded = httpRequest({ host: upstream.hostname, port: upstream.port, method: request.method, path: request.url, headers: request.headers }, (answer) => {
        if (response === null) answer.resume();
        else {
          response.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(response);
        }
        answer.once("end", resolve);
        answer.once("error", reject);
      });
      forwarded.once("error", reject);
      forwarded.end(payload);
    });
  };

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(502, { "content-type": "application/x-amz-json-1.1" });
      response.end(JSON.stringify({ __type: "InternalServiceException", Message: `the pass-through to moto failed: ${String(error)}` }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const { setTable, dropTable } = glueEntries(moto);

  return {
    endpoint,
    clientConfig: { endpoint, region: MOTO_REGION, credentials: { ...moto.credentials } },
    setTable,
    dropTable,
    beforeUpdate: (hook) => void (updateHook = hook),
    killAfterNextUpdate: () => void (killNext = true),
    revive: () => void (dead = false),
    failTable: (database, table, error) => void (error === null ? failures.delete(`${database}.${table}`) : failures.set(`${database}.${table}`, error)),
    requests,
    stop: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

/** GetTable's answer for a table set to fail: an AccessDeniedException as Glue words it. */
function deny(response: ServerResponse, body: GlueRequest["body"]): void {
  const resource = `arn:aws:glue:${MOTO_REGION}:${body.CatalogId ?? MOTO_ACCOUNT}:table/${body.DatabaseName}/${body.Name}`;
  response.writeHead(400, { "content-type": "application/x-amz-json-1.1", "x-amzn-errortype": "AccessDeniedException" });
  response.end(
    JSON.stringify({
      __type: "AccessDeniedException",
      Message: `User: arn:aws:sts::${MOTO_ACCOUNT}:assumed-role/cleanup/fn is not authorized to perform: glue:GetTable on resource: ${resource} because no identity-based policy allows the glue:GetTable action`,
    }),
  );
}

/** Entries made with the real Glue API on moto (CreateDatabase, CreateTable, UpdateTable, DeleteTable). */
function glueEntries(moto: MotoHandle): Pick<GlueServer, "setTable" | "dropTable"> {
  const databases = new Set<string>();
  const tables = new Set<string>();
  async function setTable(database: string, table: string, entry: GlueEntry): Promise<void> {
    if (!databases.has(database)) {
      await moto.glueClient.send(new CreateDatabaseCommand({ DatabaseInput: { Name: database } }));
      databases.add(database);
    }
    const input: TableInput = {
      Name: table,
      ...(entry.tableType ? { TableType: entry.tableType } : {}),
      Parameters: entry.parameters,
      StorageDescriptor: { Columns: [{ Name: "id", Type: "bigint" }], ...(entry.location ? { Location: entry.location } : {}) },
    };
    const key = `${database}.${table}`;
    // UpdateTable replaces the whole entry, as a catalog commit does (Athena, iceberg-java).
    if (tables.has(key)) await moto.glueClient.send(new UpdateTableCommand({ DatabaseName: database, TableInput: input }));
    else await moto.glueClient.send(new CreateTableCommand({ DatabaseName: database, TableInput: input }));
    tables.add(key);
  }

  async function dropTable(database: string, table: string): Promise<void> {
    const key = `${database}.${table}`;
    if (!tables.has(key)) return;
    await moto.glueClient.send(new DeleteTableCommand({ DatabaseName: database, Name: table }));
    tables.delete(key);
  }
  return { setTable, dropTable };
}
