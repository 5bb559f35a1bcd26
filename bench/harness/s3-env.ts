/**
 * The emulated S3 as the benchmarks see it: a child process running fauxqs behind a
 * per-request delay (see s3-server.ts), an SDK client for loading datasets (undelayed),
 * and the connection settings each tool needs to reach it through the delay.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { tmpdir } from "node:os";
import {
  S3Client,
  PutObjectCommand,
  ListObjectsV2Command,
  DeleteObjectsCommand,
  GetObjectCommand,
  CreateMultipartUploadCommand,
  UploadPartCommand,
  CompleteMultipartUploadCommand,
} from "@aws-sdk/client-s3";
import type { ProxyCounts } from "./s3-request-kind.ts";

/** One request through the delaying proxy: when it arrived and when its answer was sent (ms, the proxy's clock). */
export interface ProxyRequest {
  method: string;
  path: string;
  start: number;
  end: number;
}

export const BENCH_BUCKET = "lakewarden-bench";
const CREDENTIALS = { accessKeyId: "bench", secretAccessKey: "bench" };
const REGION = "us-east-1";
/** fauxqs 2.4.1 refuses request bodies over 11 MiB (413); bigger files go up in parts, as LanceDB writes them. */
const SINGLE_PUT_LIMIT = 8 * 1024 * 1024;

/**
 * Where the emulator keeps objects. `files` (the default) bounds its memory by disk for large
 * datasets; `memory` is for many small objects, whose deletes the file backend makes quadratic
 * (see s3-server.ts).
 */
export type S3Backend = "files" | "memory";

export class S3Env {
  readonly endpoint: string;
  readonly directEndpoint: string;
  readonly delayMs: number;
  readonly bucket = BENCH_BUCKET;
  /** Undelayed client for setup (uploading datasets); never used for measurements. */
  readonly setupClient: S3Client;
  private readonly child: ChildProcess;
  private readonly storageDir: string | null;

  private constructor(child: ChildProcess, storageDir: string | null, endpoint: string, direct: string, delayMs: number) {
    this.child = child;
    this.storageDir = storageDir;
    this.endpoint = endpoint;
    this.directEndpoint = direct;
    this.delayMs = delayMs;
    this.setupClient = new S3Client({ endpoint: direct, region: REGION, credentials: CREDENTIALS, forcePathStyle: true });
  }

  static async start(delayMs: number, backend: S3Backend = "files"): Promise<S3Env> {
    const storageDir = backend === "files" ? await mkdtemp(join(tmpdir(), "lakewarden-bench-s3-")) : null;
    const server = new URL("./s3-server.ts", import.meta.url).pathname;
    // fauxqs loads node:sqlite, which warns on every start: noise in bench output.
    const args = ["--disable-warning=ExperimentalWarning", server, storageDir ?? "memory", String(delayMs), BENCH_BUCKET];
    const child = spawn(process.execPath, args, { stdio: ["pipe", "pipe", "inherit"] });
    const lines = createInterface({ input: child.stdout! });
    const ready = await new Promise<{ endpoint: string; direct: string }>((resolve, reject) => {
      child.once("exit", (code) => reject(new Error(`bench S3 server exited early with code ${code}`)));
      lines.once("line", (line) => resolve(JSON.parse(line) as { endpoint: string; direct: string }));
    });
    return new S3Env(child, storageDir, ready.endpoint, ready.direct, delayMs);
  }

  /** `s3://bucket/key`. */
  uri(key: string): string {
    return `s3://${this.bucket}/${key}`;
  }

  /** LanceDB `storageOptions` that reach the emulator through the delay (`direct`: undelayed, for setup). */
  lancedbStorageOptions(options: { direct?: boolean } = {}): Record<string, string> {
    return {
      awsAccessKeyId: CREDENTIALS.accessKeyId,
      awsSecretAccessKey: CREDENTIALS.secretAccessKey,
      awsEndpoint: options.direct ? this.directEndpoint : this.endpoint,
      awsRegion: REGION,
      allowHttp: "true",
    };
  }

  /** Environment for an AWS SDK client (lakewarden's S3Store) to reach the emulator through the delay. */
  sdkEnvironment(): Record<string, string> {
    return {
      AWS_ENDPOINT_URL_S3: this.endpoint,
      AWS_REGION: REGION,
      AWS_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
    };
  }

  async requestCounts(): Promise<ProxyCounts> {
    const response = await fetch(`${this.endpoint}/__bench/stats`);
    return (await response.json()) as ProxyCounts;
  }

  /** Every request since the last reset, as the proxy saw it (times in ms on the proxy's clock). */
  async requestLog(): Promise<ProxyRequest[]> {
    const response = await fetch(`${this.endpoint}/__bench/log`);
    return (await response.json()) as ProxyRequest[];
  }

  async resetCounts(): Promise<void> {
    await fetch(`${this.endpoint}/__bench/reset`, { method: "POST" });
  }

  /**
   * Loads a local directory tree into `keyPrefix/` inside the emulator, each object dated with its
   * file's modification time (setup, no S3 request; the memory backend only: s3-seed.ts).
   */
  async load(localDir: string, keyPrefix: string): Promise<number> {
    return this.seed("load", { dir: localDir, prefix: keyPrefix });
  }

  /** Saves every object under `keyPrefix/` into a local directory, dated with its LastModified (setup; the memory backend only). */
  async save(keyPrefix: string, localDir: string): Promise<number> {
    return this.seed("save", { dir: localDir, prefix: keyPrefix });
  }

  private async seed(action: "load" | "save", body: { dir: string; prefix: string }): Promise<number> {
    const response = await fetch(`${this.endpoint}/__bench/${action}`, { method: "POST", body: JSON.stringify(body) });
    if (!response.ok) throw new Error(`bench S3 ${action} ${body.prefix}: ${response.status} ${await response.text()}`);
    return ((await response.json()) as { objects: number }).objects;
  }

  /** Copies a local directory tree to `keyPrefix/` (setup; undelayed, 32 uploads in flight). */
  async upload(localDir: string, keyPrefix: string): Promise<number> {
    const files = await listFiles(localDir);
    let next = 0;
    const worker = async () => {
      while (next < files.length) {
        const file = files[next++]!;
        const key = `${keyPrefix}/${relative(localDir, file).split(sep).join("/")}`;
        await this.putObject(key, await readFile(file));
      }
    };
    await Promise.all(Array.from({ length: 32 }, worker));
    return files.length;
  }

  /** One object (setup; undelayed), in parts when it is too big for one PUT to the emulator. */
  async putObject(key: string, body: Uint8Array): Promise<void> {
    if (body.length <= SINGLE_PUT_LIMIT) {
      await this.setupClient.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: body }));
      return;
    }
    const { UploadId } = await this.setupClient.send(new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: key }));
    const parts: { ETag: string; PartNumber: number }[] = [];
    for (let offset = 0, part = 1; offset < body.length; offset += SINGLE_PUT_LIMIT, part++) {
      const { ETag } = await this.setupClient.send(
        new UploadPartCommand({ Bucket: this.bucket, Key: key, UploadId, PartNumber: part, Body: body.subarray(offset, offset + SINGLE_PUT_LIMIT) }),
      );
      parts.push({ ETag: ETag!, PartNumber: part });
    }
    await this.setupClient.send(new CompleteMultipartUploadCommand({ Bucket: this.bucket, Key: key, UploadId, MultipartUpload: { Parts: parts } }));
  }

  /** One object's body as text (setup; undelayed). */
  async getText(key: string): Promise<string> {
    const answer = await this.setupClient.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
    return await answer.Body!.transformToString();
  }

  /** Deletes every object under `keyPrefix/` (setup). */
  async removePrefix(keyPrefix: string): Promise<void> {
    let token: string | undefined;
    do {
      const page = await this.setupClient.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: `${keyPrefix}/`, ContinuationToken: token }));
      const keys = (page.Contents ?? []).map((o) => ({ Key: o.Key! }));
      if (keys.length) await this.setupClient.send(new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: keys } }));
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  async stop(): Promise<void> {
    const exited = new Promise((resolve) => this.child.once("exit", resolve));
    this.child.kill("SIGTERM");
    await exited;
    this.setupClient.destroy();
    if (this.storageDir) await rm(this.storageDir, { recursive: true, force: true });
  }
}

async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}
