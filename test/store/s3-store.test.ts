/**
 * S3Store behaviour beyond the conformance suite: how failures surface. fauxqs provides real
 * missing buckets; a closed port and an unresolvable host provide real network failures; and
 * a small HTTP server answers with S3's documented error bodies (403, 409, 412, 503, per-key
 * DeleteObjects errors) that the emulator never produces, so the real SDK parses real responses.
 */
import { createServer } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { AccessDeniedError, ConflictError, NotFoundError, PreconditionFailedError, StoreUnavailableError, ThrottledError } from "../../lib/store/errors.ts";
import { openStore } from "../../lib/store/open-store.ts";
import { S3Store } from "../../lib/store/s3-store.ts";
import { startFauxqsServer } from "../support/fauxqs.ts";
import type { FauxqsHandle } from "../support/fauxqs.ts";

const bytes = (text: string) => new TextEncoder().encode(text);
const credentials = { accessKeyId: "test", secretAccessKey: "test" };

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as AddressInfo).port;
}

async function closedPort(): Promise<number> {
  const server = createServer();
  const port = await listen(server);
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe("S3Store against fauxqs", () => {
  let fauxqs: FauxqsHandle;

  beforeAll(async () => {
    fauxqs = await startFauxqsServer({ buckets: ["present"] });
  });

  afterAll(async () => {
    await fauxqs?.stop();
  });

  test("a missing bucket is NotFoundError naming the bucket", async () => {
    const store = new S3Store({ client: fauxqs.s3Client, bucket: "absent-bucket", prefix: "t", endpoint: fauxqs.endpoint });
    await expect(store.get("k")).rejects.toSatisfy((err) => err instanceof NotFoundError && err.uri === "s3://absent-bucket" && err.message.includes("bucket does not exist"));
    const listing = async () => {
      for await (const _ of store.list("")) return;
    };
    await expect(listing()).rejects.toSatisfy((err) => err instanceof NotFoundError && err.uri === "s3://absent-bucket");
  });

  test("keys live under the store prefix in the bucket", async () => {
    const store = new S3Store({ client: fauxqs.s3Client, bucket: "present", prefix: "lake/table.lance", endpoint: fauxqs.endpoint });
    expect(store.uri).toBe("s3://present/lake/table.lance");
    await store.put("_versions/1.manifest", bytes("m"));
    const bucketRoot = new S3Store({ client: fauxqs.s3Client, bucket: "present", endpoint: fauxqs.endpoint });
    expect(bucketRoot.uri).toBe("s3://present");
    const keys: string[] = [];
    for await (const info of bucketRoot.list("lake/")) keys.push(info.key);
    expect(keys).toEqual(["lake/table.lance/_versions/1.manifest"]);
    // A sibling whose name merely starts with the prefix is not inside the store.
    await bucketRoot.put("lake/table.lance-other/x", bytes("x"));
    const inside: string[] = [];
    for await (const info of store.list("")) inside.push(info.key);
    expect(inside).toEqual(["_versions/1.manifest"]);
  });
});

describe("S3Store network failures", () => {
  test("an endpoint nobody listens on is StoreUnavailableError naming the endpoint, within seconds", { timeout: 20_000 }, async () => {
    const endpoint = `http://127.0.0.1:${await closedPort()}`;
    const store = openStore("s3://some-bucket/table", {
      s3: { endpoint, region: "us-east-1", credentials, maxAttempts: 2, connectionTimeoutMs: 2_000 },
    });
    for (const attempt of [() => store.head("k"), () => store.get("k"), () => store.put("k", bytes("x"))]) {
      await expect(attempt()).rejects.toSatisfy(
        (err) => err instanceof StoreUnavailableError && err.message.includes(endpoint) && err.message.includes("ECONNREFUSED") && err.uri === "s3://some-bucket/table/k",
      );
    }
    const result = await store.deleteMany(["a", "b"]);
    expect(result.deleted).toEqual([]);
    expect(result.failed.map((f) => f.key)).toEqual(["a", "b"]);
    expect(result.failed[0]?.message).toContain(endpoint);
  });

  test("a host that does not resolve is StoreUnavailableError naming the endpoint", { timeout: 20_000 }, async () => {
    const endpoint = "http://lakewarden-no-such-host.invalid:9000";
    const store = openStore("s3://some-bucket", { s3: { endpoint, credentials, maxAttempts: 1, connectionTimeoutMs: 2_000 } });
    await expect(store.head("k")).rejects.toSatisfy((err) => err instanceof StoreUnavailableError && err.message.includes(endpoint));
  });
});

describe("S3Store error responses", () => {
  let server: Server;
  let store: S3Store;
  let endpoint: string;
  const deleteRequests: string[] = [];

  /** Answers like S3 would for a few chosen keys. */
  function answer(req: IncomingMessage, res: ServerResponse, body: string): void {
    const url = new URL(req.url ?? "/", "http://localhost");
    const key = decodeURIComponent(url.pathname.split("/").slice(2).join("/"));
    const error = (status: number, code: string) => {
      res.writeHead(status, { "content-type": "application/xml" });
      // HEAD responses carry no body: the SDK then has only the status to go by.
      res.end(req.method === "HEAD" ? undefined : `<?xml version="1.0"?><Error><Code>${code}</Code><Message>${code} says the test server</Message></Error>`);
    };
    if (req.method === "POST" && url.searchParams.has("delete")) {
      deleteRequests.push(body);
      if (body.includes("whole-slow")) return error(503, "SlowDown");
      const keys = [...body.matchAll(/<Key>([^<]*)<\/Key>/g)].map((m) => m[1] ?? "");
      const errors = keys
        .filter((k) => k.includes("protected") || k.includes("throttle"))
        .map((k) =>
          k.includes("throttle")
            ? `<Error><Key>${k}</Key><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>`
            : `<Error><Key>${k}</Key><Code>AccessDenied</Code><Message>Access Denied</Message></Error>`,
        )
        .join("");
      res.writeHead(200, { "content-type": "application/xml" });
      res.end(`<?xml version="1.0"?><DeleteResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">${errors}</DeleteResult>`);
      return;
    }
    if (key.endsWith("denied")) return error(403, "AccessDenied");
    if (key.endsWith("conflict")) return error(409, "ConditionalRequestConflict");
    if (key.endsWith("precondition")) return error(412, "PreconditionFailed");
    if (key.endsWith("slow")) return error(503, "SlowDown");
    return error(404, "NoSuchKey");
  }

  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => answer(req, res, Buffer.concat(chunks).toString("utf8")));
    });
    endpoint = `http://127.0.0.1:${await listen(server)}`;
    store = openStore("s3://errors-bucket/t", { s3: { endpoint, credentials, maxAttempts: 1 } }) as S3Store;
  });

  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
  });

  test("403 AccessDenied is AccessDeniedError, by code and by bare status", async () => {
    await expect(store.get("denied")).rejects.toSatisfy((err) => err instanceof AccessDeniedError && err.uri === "s3://errors-bucket/t/denied");
    await expect(store.head("denied")).rejects.toBeInstanceOf(AccessDeniedError);
  });

  test("409 ConditionalRequestConflict is ConflictError", async () => {
    await expect(store.put("conflict", bytes("x"), { ifNoneMatch: "*" })).rejects.toBeInstanceOf(ConflictError);
    await expect(store.head("conflict")).rejects.toBeInstanceOf(ConflictError);
  });

  test("412 PreconditionFailed is PreconditionFailedError", async () => {
    await expect(store.put("precondition", bytes("x"), { ifMatch: '"abc"' })).rejects.toSatisfy(
      (err) => err instanceof PreconditionFailedError && err.message.includes("s3://errors-bucket/t/precondition"),
    );
    await expect(store.head("precondition")).rejects.toBeInstanceOf(PreconditionFailedError);
  });

  test("404 NoSuchKey is NotFoundError", async () => {
    await expect(store.get("missing")).rejects.toBeInstanceOf(NotFoundError);
    await expect(store.head("missing")).rejects.toBeInstanceOf(NotFoundError);
  });

  test("503 SlowDown after the retries is ThrottledError (a StoreUnavailableError) naming the endpoint", async () => {
    await expect(store.get("slow")).rejects.toSatisfy((err) => err instanceof ThrottledError && err instanceof StoreUnavailableError && err.message.includes(endpoint));
  });

  test("SlowDown on DeleteObjects, per key or for the whole request, is a throttled failure, not thrown", async () => {
    const perKey = await store.deleteMany(["gone-a", "throttle-b", "protected-c"]);
    expect(perKey.deleted).toEqual(["gone-a"]);
    expect(perKey.failed.map((f) => [f.key, f.throttled ?? false])).toEqual([
      ["throttle-b", true],
      ["protected-c", false],
    ]);
    const whole = await store.deleteMany(["whole-slow-1", "whole-slow-2"]);
    expect(whole.deleted).toEqual([]);
    expect(whole.failed.map((f) => f.throttled)).toEqual([true, true]);
  });

  test("per-key DeleteObjects errors are returned, not thrown; one request per 1,000 keys", async () => {
    deleteRequests.length = 0;
    const keys = Array.from({ length: 1500 }, (_, i) => (i % 500 === 7 ? `protected-${i}` : `gone-${i}`));
    store.stats.reset();
    const result = await store.deleteMany(keys);
    expect(deleteRequests).toHaveLength(2);
    expect(store.stats.snapshot().delete).toBe(2);
    expect(result.failed.map((f) => f.key).sort()).toEqual(["protected-1007", "protected-507", "protected-7"]);
    expect(result.failed[0]?.message).toMatch(/^s3:\/\/errors-bucket\/t\/protected-\d+: AccessDenied/);
    expect(result.deleted).toHaveLength(1497);
    expect(deleteRequests[0]).toContain("<Key>t/gone-0</Key>");
  });
});
