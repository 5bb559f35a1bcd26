/**
 * moto's server (`moto_server` from the tests' Python tools) on a loopback port, as the S3
 * endpoint of the engine races: it enforces If-None-Match on PutObject itself, which delta-rs,
 * Lance and the catalog-less Iceberg commits (iceberg_table.py) rely on. When the moto work's
 * test/support/moto.ts is on the same branch, its startMotoServer does the same and more.
 */
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { CreateBucketCommand, S3Client } from "@aws-sdk/client-s3";
import { toolBin } from "../tools/python-env.ts";

export interface MotoS3 {
  endpoint: string;
  /** What points the AWS SDKs, boto3, delta-rs, Lance, pyiceberg and lakewarden's store at it. */
  env: Record<string, string>;
  createBucket(name: string): Promise<void>;
  stop(): Promise<void>;
}

export async function startMotoS3(): Promise<MotoS3> {
  const port = await freePort();
  const endpoint = `http://127.0.0.1:${port}`;
  const child = spawn(toolBin("moto_server"), ["-H", "127.0.0.1", "-p", String(port)], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (chunk) => (stderr += chunk));
  const env = { AWS_ENDPOINT_URL: endpoint, AWS_ACCESS_KEY_ID: "testing", AWS_SECRET_ACCESS_KEY: "testing", AWS_REGION: "us-east-1", AWS_DEFAULT_REGION: "us-east-1" };
  const s3 = new S3Client({ endpoint, region: env.AWS_REGION, forcePathStyle: true, credentials: { accessKeyId: "testing", secretAccessKey: "testing" } });
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`moto_server exited ${child.exitCode}: ${stderr.trim().split("\n").at(-1) ?? ""}`);
    try {
      await fetch(`${endpoint}/moto-api/`);
      break;
    } catch {
      if (Date.now() > deadline) throw new Error(`moto_server did not answer on ${endpoint} within 20 s`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  return {
    endpoint,
    env,
    async createBucket(name) {
      await s3.send(new CreateBucketCommand({ Bucket: name }));
    },
    async stop() {
      s3.destroy();
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    },
  };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}
