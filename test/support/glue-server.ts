/**
 * A small local server that speaks the AWS Glue API's GetTable as the AWS SDK sends it (AWS JSON
 * 1.1: `POST /` with `X-Amz-Target: AWSGlue.GetTable`, SigV4-signed for service "glue") and
 * answers in Glue's documented shapes: `{"Table": {...}}`, or a 400 with the error's `__type`
 * and `Message` (EntityNotFoundException, AccessDeniedException). The SDK under test is real;
 * only its endpoint is local. Tests set entries and errors per table and read the requests made.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface GlueEntry {
  /** Glue's TableType (Athena and iceberg-java write EXTERNAL_TABLE). */
  tableType?: string;
  parameters: Record<string, string>;
  location?: string;
}

export interface GlueRequest {
  target: string;
  body: { DatabaseName?: string; Name?: string; CatalogId?: string };
  /** The SigV4 credential scope's service (from the Authorization header). */
  signedFor: string | null;
}

export interface GlueServer {
  endpoint: string;
  /** The client settings that point a GlueClient here. */
  clientConfig: { endpoint: string; region: string; credentials: { accessKeyId: string; secretAccessKey: string } };
  /** Sets (or replaces) the entry of `database.table`. */
  setTable(database: string, table: string, entry: GlueEntry): void;
  /** Removes the entry of `database.table` (GetTable then answers EntityNotFoundException). */
  dropTable(database: string, table: string): void;
  /** Answers GetTable on `database.table` with this error instead (null: clear it). */
  failTable(database: string, table: string, error: "AccessDeniedException" | null): void;
  requests: GlueRequest[];
  stop(): Promise<void>;
}

const REGION = "us-east-1";
const ACCOUNT = "123456789012";

export async function startGlueServer(): Promise<GlueServer> {
  const tables = new Map<string, GlueEntry>();
  const failures = new Map<string, string>();
  const requests: GlueRequest[] = [];

  const answer = (response: ServerResponse, status: number, body: unknown, errorType?: string): void => {
    response.writeHead(status, {
      "content-type": "application/x-amz-json-1.1",
      "x-amzn-requestid": `req-${requests.length}`,
      ...(errorType ? { "x-amzn-errortype": errorType } : {}),
    });
    response.end(JSON.stringify(body));
  };

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const target = String(request.headers["x-amz-target"] ?? "");
    const scope = /Credential=[^/]+\/\d{8}\/[^/]+\/([^/]+)\/aws4_request/.exec(String(request.headers.authorization ?? ""));
    let body: GlueRequest["body"] = {};
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}") as GlueRequest["body"];
    } catch {
      return answer(response, 400, { __type: "SerializationException", Message: "body is not JSON" }, "SerializationException");
    }
    requests.push({ target, body, signedFor: scope?.[1] ?? null });
    if (request.method !== "POST" || request.url !== "/" || !String(request.headers["content-type"]).startsWith("application/x-amz-json-1.1")) {
      return answer(response, 400, { __type: "SerializationException", Message: "expected POST / with application/x-amz-json-1.1" }, "SerializationException");
    }
    if (scope?.[1] !== "glue") {
      return answer(response, 403, { __type: "IncompleteSignatureException", Message: "request not signed for glue" }, "IncompleteSignatureException");
    }
    if (target !== "AWSGlue.GetTable") {
      return answer(response, 400, { __type: "UnknownOperationException", Message: `unknown operation ${target}` }, "UnknownOperationException");
    }
    const database = body.DatabaseName ?? "";
    const name = body.Name ?? "";
    const key = `${database}.${name}`;
    const failure = failures.get(key);
    if (failure === "AccessDeniedException") {
      const resource = `arn:aws:glue:${REGION}:${body.CatalogId ?? ACCOUNT}:table/${database}/${name}`;
      return answer(response, 400, { __type: failure, Message: `User: arn:aws:sts::${ACCOUNT}:assumed-role/cleanup/fn is not authorized to perform: glue:GetTable on resource: ${resource} because no identity-based policy allows the glue:GetTable action` }, failure);
    }
    const entry = tables.get(key);
    if (!entry) {
      return answer(response, 400, { __type: "EntityNotFoundException", Message: `Table ${name} not found.`, FromFederationSource: false }, "EntityNotFoundException");
    }
    answer(response, 200, {
      Table: {
        Name: name,
        DatabaseName: database,
        CatalogId: body.CatalogId ?? ACCOUNT,
        CreateTime: 1_743_474_980.94,
        UpdateTime: 1_743_475_012.5,
        Retention: 0,
        ...(entry.tableType ? { TableType: entry.tableType } : {}),
        Parameters: entry.parameters,
        StorageDescriptor: { Columns: [{ Name: "id", Type: "bigint" }], ...(entry.location ? { Location: entry.location } : {}), Compressed: false, NumberOfBuckets: 0, StoredAsSubDirectories: false },
        PartitionKeys: [],
        IsRegisteredWithLakeFormation: false,
        VersionId: "1",
      },
    });
  };

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => answer(response, 500, { __type: "InternalServiceException", Message: String(error) }, "InternalServiceException"));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    endpoint,
    clientConfig: { endpoint, region: REGION, credentials: { accessKeyId: "test", secretAccessKey: "test" } },
    setTable: (database, table, entry) => void tables.set(`${database}.${table}`, entry),
    dropTable: (database, table) => void tables.delete(`${database}.${table}`),
    failTable: (database, table, error) => void (error === null ? failures.delete(`${database}.${table}`) : failures.set(`${database}.${table}`, error)),
    requests,
    stop: () => new Promise<void>((resolve, reject) => {
      server.closeAllConnections();
      server.close((error) => (error ? reject(error) : resolve()));
    }),
  };
}
