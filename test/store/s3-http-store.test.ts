/**
 * The functions' small S3 client against its oracles: its signatures against the AWS SDK's own
 * signer (@smithy/signature-v4) recomputed from the requests as they arrive on the wire (moto
 * does not check signatures), its answers against S3Store's through the SDK on the same moto
 * server, and its retries against a server that answers 503 SlowDown, 500 or nothing at all.
 */
import { createHash, createHmac, randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { SignatureV4 } from "@smithy/signature-v4";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NoAnswerError, NotFoundError, PreconditionFailedError, StoreUnavailableError, ThrottledError } from "../../lib/store/errors.ts";
import { LocalStore } from "../../lib/store/local-store.ts";
import type { ObjectStore } from "../../lib/store/object-store.ts";
import { httpStoreOpener } from "../../lib/store/open-http-store.ts";
import { connectS3Http, S3HttpStore } from "../../lib/store/s3-http-store.ts";
import { S3Store } from "../../lib/store/s3-store.ts";
import { connectSqs, sendMessages } from "../../functions/shared/send-messages.ts";
import { startMotoServer, type MotoHandle } from "../support/moto.ts";

const CREDENTIALS = { AWS_ACCESS_KEY_ID: "AKIDEXAMPLE", AWS_SECRET_ACCESS_KEY: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", AWS_SESSION_TOKEN: "session/token+=" };

interface Received {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: Buffer;
}

type Answer = (request: Received) => { status: number; headers?: Record<string, string>; body?: string } | "silent";

/** An HTTP server that records every request and answers as `answer` says. */
async function recordingServer(answer: Answer): Promise<{ server: Server; endpoint: string; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const request = { method: req.method ?? "", url: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks) };
      received.push(request);
      const reply = answer(request);
      if (reply === "silent") return;
      res.writeHead(reply.status, reply.headers ?? {});
      res.end(reply.body ?? "");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received };
}

/** The Authorization header the SDK's signer gives the request as received, signed at the time it names. */
async function sdkSignature(request: Received, service: string, region: string): Promise<string> {
  const url = new URL(request.url, "http://placeholder");
  const query: Record<string, string> = {};
  for (const [name, value] of url.searchParams) query[name] = value;
  const signedNames = /SignedHeaders=([^,]+)/.exec(String(request.headers.authorization))![1]!.split(";");
  const headers: Record<string, string> = {};
  for (const name of signedNames) headers[name] = String(request.headers[name]);
  const amzDate = String(request.headers["x-amz-date"]);
  const date = new Date(`${amzDate.slice(0, 4)}-${amzDate.slice(4, 6)}-${amzDate.slice(6, 8)}T${amzDate.slice(9, 11)}:${amzDate.slice(11, 13)}:${amzDate.slice(13, 15)}Z`);
  class Sha256 {
    private hash;
    constructor(secret?: string | Uint8Array) {
      this.hash = secret === undefined ? createHash("sha256") : createHmac("sha256", secret);
    }
    update(data: string | Uint8Array): void {
      this.hash.update(data);
    }
    digest(): Promise<Uint8Array> {
      return Promise.resolve(new Uint8Array(this.hash.digest()));
    }
    reset(): void {}
  }
  const signer = new SignatureV4({
    service,
    region,
    sha256: Sha256 as never,
    // S3 signs the path as sent; other services escape it once more.
    uriEscapePath: service !== "s3",
    credentials: { accessKeyId: CREDENTIALS.AWS_ACCESS_KEY_ID, secretAccessKey: CREDENTIALS.AWS_SECRET_ACCESS_KEY, sessionToken: CREDENTIALS.AWS_SESSION_TOKEN },
  });
  const signed = await signer.sign(
    { method: request.method, protocol: "http:", hostname: "127.0.0.1", path: url.pathname, query, headers, body: request.body },
    { signingDate: date, unsignableHeaders: new Set(), signableHeaders: new Set(signedNames) },
  );
  return String(signed.headers.authorization);
}

describe("S3HttpStore's signatures", () => {
  it("match the SDK's signer for every operation, keys and prefixes that need escaping included", async () => {
    const { server, endpoint, received } = await recordingServer((request) => {
      if (request.url.includes("list-type=2")) return { status: 200, body: "<ListBucketResult><IsTruncated>false</IsTruncated></ListBucketResult>" };
      if (request.method === "POST") return { status: 200, body: "<DeleteResult></DeleteResult>" };
      return { status: 200, headers: { etag: '"e"', "content-length": request.method === "HEAD" ? "0" : "0" } };
    });
    try {
      const env = { ...CREDENTIALS, AWS_REGION: "eu-west-1", AWS_ENDPOINT_URL_S3: endpoint };
      const store = new S3HttpStore({ connection: connectS3Http({}, env), bucket: "lake", prefix: "t b+c" });
      const odd = "dir/a b+c%d&e=f?g#h/é😀~!*'()";
      await store.put(odd, new TextEncoder().encode("body"), { ifNoneMatch: "*", contentType: "application/octet-stream" });
      await store.get(odd, { offset: 1, length: 2 });
      await store.head(odd);
      for await (const _ of store.list("p q+r/", { startAfter: "p q+r/a b", delimiter: "/", maxKeys: 5 })) void _;
      await store.listPrefixes("");
      await store.deleteMany([odd, "x&y<z>"]);
      expect(received.map((r) => r.method)).toEqual(["PUT", "GET", "HEAD", "GET", "GET", "POST"]);
      for (const request of received) {
        expect(request.headers["x-amz-security-token"]).toBe(CREDENTIALS.AWS_SESSION_TOKEN);
        expect(String(request.headers.authorization), `${request.method} ${request.url}`).toBe(await sdkSignature(request, "s3", "eu-west-1"));
      }
      // The key went on the wire encoded once per segment, and the body's hash is the one signed.
      expect(received[0]!.url).toBe("/lake/t%20b%2Bc/dir/a%20b%2Bc%25d%26e%3Df%3Fg%23h/%C3%A9%F0%9F%98%80~%21%2A%27%28%29");
      expect(received[0]!.headers["x-amz-content-sha256"]).toBe(createHash("sha256").update("body").digest("hex"));
      expect(received[5]!.headers["content-md5"]).toBe(createHash("md5").update(received[5]!.body).digest("base64"));
    } finally {
      server.close();
    }
  });

  it("SendMessageBatch matches the SDK's signer too", async () => {
    const { server, endpoint, received } = await recordingServer(() => ({ status: 200, body: JSON.stringify({ Successful: [{ Id: "0" }] }) }));
    try {
      const sqs = connectSqs({ ...CREDENTIALS, AWS_REGION: "eu-west-1", AWS_ENDPOINT_URL_SQS: endpoint });
      await sendMessages(sqs, "https://sqs.eu-west-1.amazonaws.com/123456789012/q", ['{"table":"s3://lake/t"}']);
      expect(received).toHaveLength(1);
      expect(received[0]!.headers["x-amz-target"]).toBe("AmazonSQS.SendMessageBatch");
      expect(String(received[0]!.headers.authorization)).toBe(await sdkSignature(received[0]!, "sqs", "eu-west-1"));
    } finally {
      server.close();
    }
  });

  it("without credentials in the environment, says which variables are missing", () => {
    expect(() => connectS3Http({}, { AWS_REGION: "eu-west-1" })).toThrow(/AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY/);
    expect(() => connectS3Http({}, { AWS_ACCESS_KEY_ID: "a", AWS_SECRET_ACCESS_KEY: "b" })).toThrow(/AWS_REGION/);
  });
});

describe("S3HttpStore's retries", () => {
  const slowDown = "<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>";

  it("retries 503 SlowDown with backoff and succeeds; gives ThrottledError after AWS_MAX_ATTEMPTS", async () => {
    let failuresLeft = 2;
    const { server, endpoint, received } = await recordingServer(() => (failuresLeft-- > 0 ? { status: 503, body: slowDown } : { status: 200, headers: { etag: '"ok"' } }));
    try {
      const env = { ...CREDENTIALS, AWS_REGION: "us-east-1", AWS_ENDPOINT_URL_S3: endpoint };
      const store = new S3HttpStore({ connection: connectS3Http({}, env), bucket: "lake" });
      expect((await store.head("k")).etag).toBe('"ok"');
      expect(received).toHaveLength(3);
      failuresLeft = 5;
      const twoAttempts = new S3HttpStore({ connection: connectS3Http({}, { ...env, AWS_MAX_ATTEMPTS: "2" }), bucket: "lake" });
      await expect(twoAttempts.put("k", new Uint8Array(1))).rejects.toBeInstanceOf(ThrottledError);
      expect(received).toHaveLength(5);
      // A throttled DeleteObjects reports every key as throttled, and throws nothing.
      failuresLeft = 5;
      const result = await twoAttempts.deleteMany(["a", "b"]);
      expect(result.failed.map((f) => [f.key, f.throttled])).toEqual([
        ["a", true],
        ["b", true],
      ]);
    } finally {
      server.close();
    }
  });

  it("retries 500 InternalError, then gives StoreUnavailableError; a 4xx is not retried", async () => {
    let status = 500;
    const { server, endpoint, received } = await recordingServer(() => ({
      status,
      body: status === 500 ? "<Error><Code>InternalError</Code></Error>" : "<Error><Code>PreconditionFailed</Code></Error>",
    }));
    try {
      const store = new S3HttpStore({ connection: connectS3Http({}, { ...CREDENTIALS, AWS_REGION: "us-east-1", AWS_ENDPOINT_URL_S3: endpoint }), bucket: "lake" });
      await expect(store.get("k")).rejects.toBeInstanceOf(StoreUnavailableError);
      expect(received).toHaveLength(3);
      status = 412;
      await expect(store.put("k", new Uint8Array(1), { ifNoneMatch: "*" })).rejects.toBeInstanceOf(PreconditionFailedError);
      expect(received).toHaveLength(4);
    } finally {
      server.close();
    }
  });

  it("an endpoint that never answers fails with NoAnswerError after the timeout on each attempt, and holds later requests", async () => {
    const { server, endpoint, received } = await recordingServer(() => "silent");
    try {
      const env = { ...CREDENTIALS, AWS_REGION: "us-east-1", AWS_ENDPOINT_URL_S3: endpoint, LAKEWARDEN_S3_REQUEST_TIMEOUT: "200ms", AWS_MAX_ATTEMPTS: "2" };
      const store = new S3HttpStore({ connection: connectS3Http({}, env), bucket: "lake" });
      await expect(store.get("k")).rejects.toBeInstanceOf(NoAnswerError);
      expect(received).toHaveLength(2);
      await expect(store.head("k")).rejects.toThrow(/not sent: no answer/);
      expect(received).toHaveLength(2);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});

describe("S3HttpStore against S3Store (the AWS SDK) on moto", () => {
  let moto: MotoHandle;
  const BUCKET = "oracle";

  beforeAll(async () => {
    moto = await startMotoServer({ buckets: [BUCKET] });
  });

  afterAll(async () => {
    await moto?.stop();
  });

  /** What a store answers to one script of operations, errors as their class names. */
  async function script(store: ObjectStore, write: boolean): Promise<unknown[]> {
    const answers: unknown[] = [];
    const attempt = async (run: () => Promise<unknown>): Promise<void> => {
      try {
        answers.push(await run());
      } catch (error) {
        answers.push((error as Error).name);
      }
    };
    const keys = ["a b/1", "a b/2+x", "a%/3", "é/4", "z/deep/5"];
    if (write) for (const key of keys) await store.put(key, new TextEncoder().encode(key.repeat(3)));
    const stripTimes = (info: { lastModified: Date }) => ({ ...info, lastModified: "time" });
    await attempt(async () => stripTimes(await store.head("a b/1")));
    await attempt(async () => {
      const got = await store.get("a%/3", { suffixLength: 4 });
      return { ...stripTimes(got), body: new TextDecoder().decode(got.body) };
    });
    await attempt(() => store.get("missing"));
    await attempt(() => store.get("a b/1", { offset: 1000, length: 1 }));
    await attempt(() => store.put("a b/1", new Uint8Array(1), { ifMatch: '"not-it"' }));
    await attempt(() => store.put("a b/1", new Uint8Array(1), { ifNoneMatch: "*" }));
    await attempt(async () => {
      const listed = [];
      for await (const info of store.list("", { startAfter: "a b/1", maxKeys: 3 })) listed.push(stripTimes(info));
      return listed;
    });
    await attempt(() => store.listPrefixes(""));
    await attempt(async () => {
      const listed = [];
      for await (const info of store.list("a", { delimiter: "/" })) listed.push(info.key);
      return listed;
    });
    return answers;
  }

  it("gives the same answers to the same operations", async () => {
    const prefix = `run-${randomUUID()}`;
    const sdk = new S3Store({ client: moto.s3Client, bucket: BUCKET, prefix, endpoint: moto.endpoint });
    const small = new S3HttpStore({ connection: connectS3Http({}, moto.awsEnv), bucket: BUCKET, prefix });
    const fromSdk = await script(sdk, true);
    expect(fromSdk[2]).toBe(NotFoundError.name);
    expect(await script(small, false)).toEqual(fromSdk);
    // A small body owns its bytes (Node pools small Buffers): a reader of `body.buffer` sees only them.
    const small4 = (await small.get("a b/1")).body;
    expect([small4.byteOffset, small4.buffer.byteLength]).toEqual([0, small4.byteLength]);
    // And a delete through the small client is seen by the SDK.
    expect((await small.deleteMany(["a b/1", "missing"])).failed).toEqual([]);
    await expect(sdk.head("a b/1")).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe("S3HttpStore's region and opener", () => {
  it("follows a 301 that names the bucket's region once, signs for that region, and remembers it", async () => {
    const { server, endpoint, received } = await recordingServer(
      (request): ReturnType<Answer> =>
        String(request.headers.authorization).includes("/eu-west-2/s3/")
          ? { status: 200, headers: { etag: '"there"' } }
          : { status: 301, headers: { "x-amz-bucket-region": "eu-west-2" }, body: "<Error><Code>PermanentRedirect</Code></Error>" },
    );
    try {
      const store = new S3HttpStore({ connection: connectS3Http({}, { ...CREDENTIALS, AWS_REGION: "us-east-1", AWS_ENDPOINT_URL_S3: endpoint }), bucket: "lake" });
      expect((await store.head("k")).etag).toBe('"there"');
      expect((await store.scope("sub").head("k")).etag).toBe('"there"');
      expect(received.map((r) => /Credential=[^/]+\/\d+\/([^/]+)\//.exec(String(r.headers.authorization))![1])).toEqual(["us-east-1", "eu-west-2", "eu-west-2"]);
    } finally {
      server.close();
    }
  });

  it("httpStoreOpener opens local paths as LocalStore and s3:// as S3HttpStore, reading credentials only at the first S3 location", () => {
    const open = httpStoreOpener({ AWS_REGION: "us-east-1" });
    expect(open("/tmp/lake/t")).toBeInstanceOf(LocalStore);
    expect(() => open("s3://lake/t")).toThrow(/AWS_ACCESS_KEY_ID/);
    const store = httpStoreOpener({ ...CREDENTIALS, AWS_REGION: "us-east-1" })("s3://lake/a/t");
    expect(store).toBeInstanceOf(S3HttpStore);
    expect(store.uri).toBe("s3://lake/a/t");
  });
});
