import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from "vitest";
import { InvalidLocationError } from "../../lib/store/errors.ts";
import { LocalStore, openStore, parseLocation, RequestStats, S3Store } from "../../lib/store/index.ts";
import { startFauxqsServer } from "../support/fauxqs.ts";
import type { FauxqsHandle } from "../support/fauxqs.ts";

const bytes = (text: string) => new TextEncoder().encode(text);

describe("parseLocation", () => {
  test.each([
    ["s3://bucket", { kind: "s3", bucket: "bucket", prefix: "", uri: "s3://bucket" }],
    ["s3://bucket/", { kind: "s3", bucket: "bucket", prefix: "", uri: "s3://bucket" }],
    ["s3://my.bucket-1/lake/t.lance", { kind: "s3", bucket: "my.bucket-1", prefix: "lake/t.lance", uri: "s3://my.bucket-1/lake/t.lance" }],
    ["s3://bucket/lake/t.lance/", { kind: "s3", bucket: "bucket", prefix: "lake/t.lance", uri: "s3://bucket/lake/t.lance" }],
  ])("%s", (location, expected) => {
    expect(parseLocation(location)).toEqual(expected);
  });

  test("local paths resolve against the working directory; file: URIs must be absolute", () => {
    const relative = parseLocation("./lake/t.lance");
    expect(relative).toEqual({ kind: "local", path: resolve("lake/t.lance"), uri: pathToFileURL(resolve("lake/t.lance")).href });
    const dir = join(tmpdir(), "some dir");
    expect(parseLocation(dir)).toMatchObject({ kind: "local", path: dir });
    expect(parseLocation(pathToFileURL(dir).href)).toEqual({ kind: "local", path: dir, uri: pathToFileURL(dir).href });
    expect(parseLocation("file:///tmp/x/")).toMatchObject({ kind: "local", path: "/tmp/x" });
  });

  test.each([
    ["", /empty location/],
    ["s3://", /no bucket name/],
    ["s3:///prefix", /no bucket name/],
    ["s3:/bucket/x", /malformed S3 URI/],
    ["s3:bucket", /malformed S3 URI/],
    ["s3://Bad_Bucket/x", /not a valid S3 bucket name/],
    ["s3://ab/x", /not a valid S3 bucket name/],
    ["s3://bucket/a//b", /empty path segment/],
    ["s3://bucket/a/../b", /".." segment/],
    ["http://example.com/lake", /unsupported scheme "http:"/],
    ["https://bucket.s3.amazonaws.com/x", /unsupported scheme "https:"/],
    ["gs://bucket/x", /unsupported scheme "gs:"/],
    ["file://remote-host/share", /malformed file URI/],
  ])("%j is refused: %s", (location, message) => {
    let thrown: unknown;
    try {
      parseLocation(location);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(InvalidLocationError);
    const error = thrown as InvalidLocationError;
    expect(error.message).toMatch(message);
    expect(error.message).not.toContain("\n");
    if (location) expect(error.message).toContain(location);
  });
});

describe("openStore", () => {
  let dir: string;
  let fauxqs: FauxqsHandle;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "lakewarden-open-"));
    fauxqs = await startFauxqsServer({ buckets: ["open-store"] });
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
    await fauxqs?.stop();
  });

  afterEach(() => {
    vi.unstubAllEnvs();
  });

  test("a local path or file: URI opens a LocalStore on that directory", async () => {
    const byPath = openStore(join(dir, "t"));
    expect(byPath).toBeInstanceOf(LocalStore);
    await byPath.put("k", bytes("local"));
    const byUrl = openStore(pathToFileURL(join(dir, "t")).href);
    expect(byUrl.uri).toBe(byPath.uri);
    expect(new TextDecoder().decode((await byUrl.get("k")).body)).toBe("local");
  });

  test("the caller's counters are used when given", async () => {
    const stats = new RequestStats();
    const store = openStore(join(dir, "counted"), { stats });
    await expect(store.head("none")).rejects.toThrow();
    expect(stats.snapshot().head).toBe(1);
  });

  test("s3:// takes endpoint, region and credentials from the standard AWS environment", async () => {
    for (const [name, value] of Object.entries(fauxqs.awsEnv)) vi.stubEnv(name, value);
    vi.stubEnv("AWS_ENDPOINT_URL", "");
    const store = openStore("s3://open-store/lake/t.lance");
    expect(store).toBeInstanceOf(S3Store);
    expect(store.uri).toBe("s3://open-store/lake/t.lance");
    await store.put("_lakewarden/head", bytes("from env"));
    const direct = new S3Store({ client: fauxqs.s3Client, bucket: "open-store" });
    expect(new TextDecoder().decode((await direct.get("lake/t.lance/_lakewarden/head")).body)).toBe("from env");
  });

  test("AWS_ENDPOINT_URL is the fallback endpoint", async () => {
    for (const [name, value] of Object.entries(fauxqs.awsEnv)) vi.stubEnv(name, value);
    vi.stubEnv("AWS_ENDPOINT_URL_S3", "");
    vi.stubEnv("AWS_ENDPOINT_URL", fauxqs.endpoint);
    const store = openStore("s3://open-store/fallback");
    await store.put("k", bytes("x"));
    expect((await store.head("k")).size).toBe(1);
  });

  test("explicit S3 options and a shared client win over the environment", async () => {
    vi.stubEnv("AWS_ENDPOINT_URL_S3", "http://127.0.0.1:1");
    const store = openStore("s3://open-store/explicit", {
      s3: { endpoint: fauxqs.endpoint, region: fauxqs.region, credentials: fauxqs.credentials },
    });
    await store.put("k", bytes("x"));
    const shared = openStore("s3://open-store/explicit", { s3: { client: fauxqs.s3Client } }) as S3Store;
    expect(shared.client).toBe(fauxqs.s3Client);
    expect((await shared.head("k")).size).toBe(1);
    expect((shared.scope("sub") as S3Store).client).toBe(fauxqs.s3Client);
  });
});
