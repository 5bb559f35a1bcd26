/**
 * An S3 endpoint that accepts the connection and never answers (a hung proxy, a stuck
 * emulator): `versions` must fail within the configured request timeout with one line naming
 * the endpoint, instead of waiting forever. And the whole command takes one request's time
 * (timeout x attempts), not that for every request it makes one after another: issue 22 found
 * over three minutes with the defaults (30 s x 3 attempts x 2 rounds of requests).
 */
import { createServer, type Server, type Socket } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import { DEFAULT_REQUEST_TIMEOUT_MS } from "../../lib/store/s3-client.ts";
import { runLakewarden } from "./run-executable.ts";

let server: Server;
let endpoint: string;
const sockets = new Set<Socket>();
let accepted = 0;
/** Each request's arrival (ms) and request line, as the silent server read it. */
let requests: { at: number; line: string }[] = [];

beforeAll(async () => {
  // Accepts, reads whatever comes, answers nothing.
  server = createServer((socket) => {
    accepted++;
    sockets.add(socket);
    socket.on("data", (chunk: Buffer) => {
      const line = chunk.toString("latin1").split("\r\n", 1)[0]!;
      if (/^[A-Z]+ \//.test(line)) requests.push({ at: Date.now(), line });
    });
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no TCP address");
  endpoint = `http://127.0.0.1:${address.port}`;
});

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => server.close(resolve));
});

const S3_ENV = { AWS_ACCESS_KEY_ID: "test", AWS_SECRET_ACCESS_KEY: "test", AWS_REGION: "us-east-1", AWS_MAX_ATTEMPTS: "1" };

it("versions on an endpoint that never answers fails within LAKEWARDEN_S3_REQUEST_TIMEOUT, naming the endpoint", async () => {
  const started = Date.now();
  const result = await runLakewarden(["versions", "s3://silent-bucket/lake/t.lance"], {
    ...S3_ENV,
    AWS_ENDPOINT_URL_S3: endpoint,
    LAKEWARDEN_S3_REQUEST_TIMEOUT: "1500ms",
  });
  const elapsed = Date.now() - started;

  expect(accepted).toBeGreaterThan(0); // the requests did reach the silent server
  expect(result.code).toBe(1);
  expect(result.stdout).toBe("");
  const lines = result.stderr.trimEnd().split("\n");
  expect(lines, result.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^lakewarden: s3:\/\/silent-bucket\/lake\/t\.lance\//);
  expect(lines[0]).toContain(`no answer from S3 endpoint ${endpoint} within the timeout`);
  // 1.5 s of timeout plus the process's own start (Node 22 and the SDK load in about a second here).
  expect(elapsed).toBeGreaterThanOrEqual(1500);
  expect(elapsed).toBeLessThan(1500 + 8000);
});

it("with the SDK's default 3 attempts, the command takes one request's time: later requests fail at once, naming the endpoint", async () => {
  requests = [];
  const timeoutMs = 1000;
  const { AWS_MAX_ATTEMPTS: _one, ...env } = S3_ENV; // the SDK's default: 3 attempts
  const result = await runLakewarden(["versions", "s3://silent-bucket/lake/t.lance"], {
    ...env,
    AWS_ENDPOINT_URL_S3: endpoint,
    LAKEWARDEN_S3_REQUEST_TIMEOUT: `${timeoutMs}ms`,
  });
  expect(result.code).toBe(1);
  const lines = result.stderr.trimEnd().split("\n");
  expect(lines, result.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^lakewarden: s3:\/\/silent-bucket\/lake\/t\.lance\//);
  expect(lines[0]).toMatch(/no answer/);
  expect(lines[0]).toContain(`S3 endpoint ${endpoint}`);

  // The first round (the head GET and the version LIST, in parallel) is tried 3 times each, and
  // the requests that would follow fail at once, unsent. Before: another round of 3 attempts each.
  expect(requests.length, requests.map((r) => r.line).join("\n")).toBeLessThanOrEqual(6);
  // The last attempt starts after two timeouts (plus the SDK's sub-second backoff); a second round's would after three.
  expect(requests.at(-1)!.at - requests[0]!.at).toBeLessThan(3 * timeoutMs);

  // The same bound with the defaults: one request's 3 attempts of the default timeout, within a minute.
  expect(3 * DEFAULT_REQUEST_TIMEOUT_MS).toBeLessThanOrEqual(60_000);
});

it("a malformed LAKEWARDEN_S3_REQUEST_TIMEOUT is refused by name", async () => {
  const result = await runLakewarden(["versions", "s3://silent-bucket/lake/t.lance"], {
    ...S3_ENV,
    AWS_ENDPOINT_URL_S3: endpoint,
    LAKEWARDEN_S3_REQUEST_TIMEOUT: "soon",
  });
  expect(result.code).not.toBe(0);
  expect(result.stderr.trimEnd()).toBe('lakewarden: LAKEWARDEN_S3_REQUEST_TIMEOUT = "soon" is not a duration (e.g. 30s, 500ms, 2m)');
});
