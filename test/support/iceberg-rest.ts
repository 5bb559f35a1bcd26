/**
 * The Iceberg project's REST catalog server (RESTCatalogServer from iceberg-open-api's test
 * fixtures, test/tools/iceberg-rest/pom.xml) on a free loopback port, for one test file: start it
 * in beforeAll, stop it in afterAll. Its catalog is a JDBC catalog on a SQLite file in `dir`, its
 * warehouse a local folder there (Hadoop's local file system): pyiceberg and lakewarden read and
 * write the same files. The JVM runs under nice and dies with the test process.
 *
 * In front of it, a pass-through on another loopback port records every request (method, path,
 * Authorization header) and can lose the answer of the next table commit: the commit is forwarded
 * and applied, then the connection is dropped unanswered (a server lost right after it applied a
 * commit). Point clients at `uri`.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer as createNetServer, type AddressInfo } from "node:net";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { icebergRestClassPath } from "../tools/iceberg-rest-env.ts";

const START_TIMEOUT_MS = 90_000;

export interface RestRequest {
  method: string;
  path: string;
  authorization: string | null;
  body: string;
}

export interface IcebergRestServer {
  /** The pass-through's base URI (the catalog's `uri`, without /v1). */
  uri: string;
  /** The server itself (pyiceberg from inside a hook, so its commit is not recorded or held). */
  directUri: string;
  /** The warehouse folder (`file://…`): tables live under `<warehouse>/<namespace>/<table>`. */
  warehouse: string;
  requests: RestRequest[];
  /**
   * The next table commit (POST …/tables/{table}) is applied and its answer never sent; with
   * `status`, answered with that server error instead (a gateway failing after the catalog applied it).
   */
  loseNextCommitAnswer(status?: number): void;
  /** Runs `hook` before each table commit is forwarded (null: none). */
  beforeCommit(hook: ((request: RestRequest) => Promise<void>) | null): void;
  /** Runs `hook` once the server applied a table commit, before its answer goes back (null: none). */
  afterCommit(hook: ((request: RestRequest) => Promise<void>) | null): void;
  stop(): Promise<void>;
}

/** What the pass-through does with a commit's answer: relay it, run a hook first, or lose it (dropped, or a status sent instead). */
type AnswerHandling = { kind: "relay" } | { kind: "after"; hook: () => Promise<void> } | { kind: "lose"; status: number | null };

/** Sends the server's `answer` on as `handling` says; resolves once it is done. */
function relayAnswer(answer: IncomingMessage, response: ServerResponse, handling: AnswerHandling): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    answer.once("error", reject);
    if (handling.kind === "relay") {
      response.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(response);
      answer.once("end", resolve);
      return;
    }
    const chunks: Buffer[] = [];
    answer.on("data", (chunk: Buffer) => chunks.push(chunk));
    answer.once("end", () => {
      const send = async () => {
        if (handling.kind === "after") {
          await handling.hook();
          response.writeHead(answer.statusCode ?? 502, answer.headers);
          response.end(Buffer.concat(chunks));
        } else if (handling.kind === "lose" && handling.status !== null) {
          response.writeHead(handling.status, { "content-type": "application/json" });
          response.end(JSON.stringify({ error: { message: "the gateway timed out", type: "ServiceUnavailableException", code: handling.status } }));
        } else response.destroy();
      };
      send().then(resolve, reject);
    });
  });
}

async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export async function startIcebergRestServer(dir: string): Promise<IcebergRestServer> {
  const warehouseDir = join(dir, "warehouse");
  await mkdir(warehouseDir, { recursive: true });
  const port = await freePort();
  const child: ChildProcess = spawn(
    "nice",
    ["-n", "10", "java", "-Xmx384m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp", icebergRestClassPath(), "org.apache.iceberg.rest.RESTCatalogServer"],
    {
      env: {
        ...process.env,
        CATALOG_WAREHOUSE: `file://${warehouseDir}`,
        CATALOG_URI: `jdbc:sqlite:file:${join(dir, "catalog.db")}`,
        CATALOG_REST_PORT: String(port),
      },
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  const killChild = () => child.kill("SIGKILL");
  process.once("exit", killChild);
  const directUri = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the Iceberg REST catalog server exited ${child.exitCode}: ${stderr.trim().split("\n").at(-1) ?? ""}`);
    try {
      if ((await fetch(`${directUri}/v1/config`)).ok) break;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) {
      killChild();
      throw new Error(`the Iceberg REST catalog server did not answer on ${directUri} within ${START_TIMEOUT_MS / 1000} s`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }

  const requests: RestRequest[] = [];
  /** Whether the next commit's answer is lost, and the status sent instead (null: none, the connection dropped). */
  let loseNext: { status: number | null } | null = null;
  let hook: ((request: RestRequest) => Promise<void>) | null = null;
  let afterHook: ((request: RestRequest) => Promise<void>) | null = null;
  const isCommit = (request: RestRequest) => request.method === "POST" && /\/namespaces\/[^/]+\/tables\/[^/]+$/.test(request.path);

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const payload = Buffer.concat(chunks);
    const recorded: RestRequest = {
      method: request.method ?? "GET",
      path: (request.url ?? "").split("?")[0]!,
      authorization: request.headers.authorization ?? null,
      body: payload.toString("utf8"),
    };
    requests.push(recorded);
    const commit = isCommit(recorded);
    if (commit) await hook?.(recorded);
    const lose = commit ? loseNext : null;
    if (lose) loseNext = null;
    const after = commit ? afterHook : null;
    const handling: AnswerHandling = lose ? { kind: "lose", ...lose } : after ? { kind: "after", hook: () => after(recorded) } : { kind: "relay" };
    await new Promise<void>((resolve, reject) => {
      const forwarded = httpRequest({ host: "127.0.0.1", port, method: request.method, path: request.url, headers: request.headers }, (answer) => {
        relayAnswer(answer, response, handling).then(resolve, reject);
      });
      forwarded.once("error", reject);
      forwarded.end(payload);
    });
  };
  const proxy = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(502, { "content-type": "application/json" });
      response.end(JSON.stringify({ error: { message: `the pass-through failed: ${String(error)}`, type: "PassThroughError", code: 502 } }));
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));

  return {
    uri: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    directUri,
    warehouse: `file://${warehouseDir}`,
    requests,
    loseNextCommitAnswer: (status) => void (loseNext = { status: status ?? null }),
    beforeCommit: (next) => void (hook = next),
    afterCommit: (next) => void (afterHook = next),
    stop: async () => {
      proxy.closeAllConnections();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
      process.removeListener("exit", killChild);
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGTERM");
        await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5000))]);
        if (child.exitCode === null) child.kill("SIGKILL");
      }
    },
  };
}
