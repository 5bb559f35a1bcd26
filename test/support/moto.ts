/**
 * moto's own server (`moto_server` from the tests' Python tools, test/tools/) as the AWS endpoint
 * of a test file: S3 with If-Match / If-None-Match enforced by the server (412, 404 for If-Match on
 * a missing key), S3 event notifications into SQS with the bucket's prefix/suffix filters, SQS and
 * Glue, all on one loopback port. One server per test file: start it in beforeAll, stop it in
 * afterAll. Its state lives in memory and dies with it.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { CreateBucketCommand, PutBucketNotificationConfigurationCommand, S3Client } from "@aws-sdk/client-s3";
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from "@aws-sdk/client-sqs";
import { GlueClient } from "@aws-sdk/client-glue";
import { toolBin } from "../tools/python-env.ts";
import type { CreateQueueOptions, FauxqsQueue, LanceS3StorageOptions } from "./fauxqs.ts";

export const MOTO_REGION = "us-east-1";
/** moto's default account: queue and bucket ARNs name it. */
export const MOTO_ACCOUNT = "123456789012";
const CREDENTIALS = { accessKeyId: "testing", secretAccessKey: "testing" };
const START_TIMEOUT_MS = 20_000;

export type MotoQueue = FauxqsQueue;

export interface MotoHandle {
  /** e.g. `http://127.0.0.1:41234`; serves S3 (path-style), SQS and Glue. */
  endpoint: string;
  region: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  s3Client: S3Client;
  sqsClient: SQSClient;
  glueClient: GlueClient;
  /** The client settings that point any AWS SDK v3 client here. */
  clientConfig: { endpoint: string; region: string; credentials: { accessKeyId: string; secretAccessKey: string } };
  /** What `@lancedb/lancedb` connect() needs to read and write tables on moto's S3. */
  lanceStorageOptions: LanceS3StorageOptions;
  /** Environment variables that make `openStore("s3://…")` and the AWS SDK (S3, SQS, Glue) talk to this server. */
  awsEnv: Record<string, string>;
  createBucket(name: string): Promise<void>;
  /** Creates a standard queue (and its dead-letter queue with `dlq`). */
  createQueue(name: string, options?: CreateQueueOptions): Promise<MotoQueue & { dlq?: MotoQueue }>;
  /** Sends the bucket's ObjectCreated events under these key filters to the queue, as the CDK stack configures it. */
  notifyQueue(bucket: string, queueArn: string, filters: readonly { prefix: string; suffix: string }[]): Promise<void>;
  stop(): Promise<void>;
}

export async function startMotoServer(options: { buckets?: string[] } = {}): Promise<MotoHandle> {
  const { child, port } = await spawnMotoServer();
  const endpoint = `http://127.0.0.1:${port}`;
  const clientConfig = { endpoint, region: MOTO_REGION, credentials: { ...CREDENTIALS } };
  const s3Client = new S3Client({ ...clientConfig, forcePathStyle: true });
  const sqsClient = new SQSClient(clientConfig);
  const glueClient = new GlueClient(clientConfig);

  async function createBucket(name: string): Promise<void> {
    await s3Client.send(new CreateBucketCommand({ Bucket: name }));
  }

  async function createQueueWithArn(name: string, attributes?: Record<string, string>): Promise<MotoQueue> {
    const created = await sqsClient.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
    const queueUrl = created.QueueUrl;
    if (!queueUrl) throw new Error(`moto returned no URL for queue ${name}`);
    const attrs = await sqsClient.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ["QueueArn"] }));
    const queueArn = attrs.Attributes?.QueueArn;
    if (!queueArn) throw new Error(`moto returned no ARN for queue ${name}`);
    return { queueUrl, queueArn, queueName: name };
  }

  async function createQueue(name: string, queueOptions: CreateQueueOptions = {}): Promise<MotoQueue & { dlq?: MotoQueue }> {
    const attributes = { ...queueOptions.attributes };
    let dlq: MotoQueue | undefined;
    if (queueOptions.dlq) {
      const dlqSettings = queueOptions.dlq === true ? {} : queueOptions.dlq;
      dlq = await createQueueWithArn(dlqSettings.name ?? `${name}-dlq`);
      attributes.RedrivePolicy = JSON.stringify({ deadLetterTargetArn: dlq.queueArn, maxReceiveCount: String(dlqSettings.maxReceiveCount ?? 3) });
    }
    const queue = await createQueueWithArn(name, attributes);
    return dlq ? { ...queue, dlq } : queue;
  }

  async function notifyQueue(bucket: string, queueArn: string, filters: readonly { prefix: string; suffix: string }[]): Promise<void> {
    await s3Client.send(
      new PutBucketNotificationConfigurationCommand({
        Bucket: bucket,
        NotificationConfiguration: {
          QueueConfigurations: filters.map((filter, i) => ({
            Id: `lakewarden-commits-${i}`,
            QueueArn: queueArn,
            Events: ["s3:ObjectCreated:*"],
            Filter: {
              Key: {
                FilterRules: [
                  { Name: "prefix", Value: filter.prefix },
                  { Name: "suffix", Value: filter.suffix },
                ],
              },
            },
          })),
        },
      }),
    );
  }

  try {
    for (const bucket of options.buckets ?? []) await createBucket(bucket);
  } catch (error) {
    child.kill("SIGKILL");
    throw error;
  }

  return {
    endpoint,
    region: MOTO_REGION,
    credentials: { ...CREDENTIALS },
    s3Client,
    sqsClient,
    glueClient,
    clientConfig,
    lanceStorageOptions: {
      allowHttp: "true",
      awsAccessKeyId: CREDENTIALS.accessKeyId,
      awsSecretAccessKey: CREDENTIALS.secretAccessKey,
      awsEndpoint: endpoint,
      awsRegion: MOTO_REGION,
    },
    awsEnv: {
      AWS_ENDPOINT_URL_S3: endpoint,
      AWS_ENDPOINT_URL_SQS: endpoint,
      AWS_ENDPOINT_URL_GLUE: endpoint,
      AWS_REGION: MOTO_REGION,
      AWS_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
    },
    createBucket,
    createQueue,
    notifyQueue,
    async stop() {
      s3Client.destroy();
      sqsClient.destroy();
      glueClient.destroy();
      await stopChild(child);
    },
  };
}

/** Starts moto_server on a port the OS picks (127.0.0.1 only) and resolves once it listens. */
function spawnMotoServer(): Promise<{ child: ChildProcess; port: number }> {
  const bin = toolBin("moto_server");
  // No AWS settings of the developer's leak in; moto needs none to serve.
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, LANG: process.env.LANG, PYTHONDONTWRITEBYTECODE: "1", PYTHONUNBUFFERED: "1" };
  const child = spawn(bin, ["-H", "127.0.0.1", "-p", "0"], { env, stdio: ["ignore", "pipe", "pipe"] });
  // A test process that ends without its afterAll (an error, a timeout) takes its server with it.
  const killOnExit = (): void => void child.kill("SIGKILL");
  process.once("exit", killOnExit);
  child.once("exit", () => process.off("exit", killOnExit));
  return new Promise((resolve, reject) => {
    let output = "";
    let settled = false;
    const timer = setTimeout(() => fail(new Error(`moto_server did not start within ${START_TIMEOUT_MS / 1000} s: ${output.trim().slice(-300)}`)), START_TIMEOUT_MS);
    const fail = (error: Error): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.kill("SIGKILL");
      reject(error);
    };
    const onData = (chunk: Buffer): void => {
      output += chunk.toString("utf8");
      // werkzeug prints the bound address once the socket listens.
      const match = /Running on http:\/\/127\.0\.0\.1:(\d+)/.exec(output);
      if (match && !settled) {
        settled = true;
        clearTimeout(timer);
        child.stdout?.off("data", onData);
        child.stderr?.off("data", onData);
        // Keep draining so a chatty server never blocks on a full pipe.
        child.stdout?.resume();
        child.stderr?.resume();
        resolve({ child, port: Number(match[1]) });
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("error", (error) => fail(new Error(`moto_server could not start (${bin}): ${error.message}`)));
    child.once("exit", (code, signal) => fail(new Error(`moto_server exited before it listened (code ${code}, signal ${signal}): ${output.trim().slice(-300)}`)));
  });
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const killer = setTimeout(() => child.kill("SIGKILL"), 3_000);
    child.once("exit", () => {
      clearTimeout(killer);
      resolve();
    });
    child.kill("SIGTERM");
  });
}
