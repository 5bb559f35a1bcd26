/**
 * Starts the fauxqs S3/SQS emulator inside the test process, on a free port.
 *
 * The integration tests' AWS endpoint is moto's server (moto.ts): it enforces conditional writes
 * and sends S3 notifications. fauxqs stays for what needs speed in-process: thousands of objects
 * (the 1,001-key conformance tests, bench, soak), request-count and fault-injection tests, and as
 * the store that ignores conditions, against which the conditional-put tests must fail.
 *
 * fauxqs 2.4.1 serves S3 and SQS on one endpoint. Known gaps that tests must not rely on:
 * it ignores If-Match / If-None-Match (wrap stores with `withS3ConditionalSemantics`) and it sends
 * no S3 event notifications. Its listing order is fixed here (fauxqs-s3-order.ts).
 */
import { CreateBucketCommand, S3Client } from "@aws-sdk/client-s3";
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from "@aws-sdk/client-sqs";
import { startFauxqs } from "fauxqs";
import { useS3ListingOrder } from "./fauxqs-s3-order.ts";

export interface FauxqsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
}

/** What `@lancedb/lancedb` connect() needs to read and write tables on the emulator. */
export interface LanceS3StorageOptions {
  [key: string]: string;
  allowHttp: string;
  awsAccessKeyId: string;
  awsSecretAccessKey: string;
  awsEndpoint: string;
  awsRegion: string;
}

export interface FauxqsQueue {
  queueUrl: string;
  queueArn: string;
  queueName: string;
}

export interface CreateQueueOptions {
  /** Also create `<name>-dlq` and redrive to it after `maxReceiveCount` receives (default 3). */
  dlq?: boolean | { name?: string; maxReceiveCount?: number };
  /** Extra SQS queue attributes, e.g. `{ VisibilityTimeout: "30" }`. */
  attributes?: Record<string, string>;
}

export interface FauxqsHandle {
  /** e.g. `http://127.0.0.1:41234`; serves S3 (path-style) and SQS. */
  endpoint: string;
  region: string;
  credentials: FauxqsCredentials;
  /** A path-style S3 client on the emulator. */
  s3Client: S3Client;
  sqsClient: SQSClient;
  lanceStorageOptions: LanceS3StorageOptions;
  /** Environment variables that make `openStore("s3://…")` and the AWS SDK talk to this emulator. */
  awsEnv: Record<string, string>;
  createBucket(name: string): Promise<void>;
  /** Creates a standard queue (and its dead-letter queue with `dlq`). */
  createQueue(name: string, options?: CreateQueueOptions): Promise<FauxqsQueue & { dlq?: FauxqsQueue }>;
  stop(): Promise<void>;
}

export const FAUXQS_REGION = "us-east-1";
const CREDENTIALS: FauxqsCredentials = { accessKeyId: "test", secretAccessKey: "test" };

export async function startFauxqsServer(options: { buckets?: string[] } = {}): Promise<FauxqsHandle> {
  await useS3ListingOrder();
  const server = await startFauxqs({ port: 0, logger: false, defaultRegion: FAUXQS_REGION });
  const endpoint = `http://127.0.0.1:${server.port}`;
  const s3Client = new S3Client({
    endpoint,
    region: FAUXQS_REGION,
    credentials: CREDENTIALS,
    forcePathStyle: true,
  });
  const sqsClient = new SQSClient({ endpoint, region: FAUXQS_REGION, credentials: CREDENTIALS });

  async function createBucket(name: string): Promise<void> {
    await s3Client.send(new CreateBucketCommand({ Bucket: name }));
  }

  async function createQueueWithArn(name: string, attributes?: Record<string, string>): Promise<FauxqsQueue> {
    const created = await sqsClient.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
    const queueUrl = created.QueueUrl;
    if (!queueUrl) throw new Error(`fauxqs returned no URL for queue ${name}`);
    const attrs = await sqsClient.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ["QueueArn"] }));
    const queueArn = attrs.Attributes?.QueueArn;
    if (!queueArn) throw new Error(`fauxqs returned no ARN for queue ${name}`);
    return { queueUrl, queueArn, queueName: name };
  }

  async function createQueue(name: string, queueOptions: CreateQueueOptions = {}): Promise<FauxqsQueue & { dlq?: FauxqsQueue }> {
    const attributes = { ...queueOptions.attributes };
    let dlq: FauxqsQueue | undefined;
    if (queueOptions.dlq) {
      const dlqSettings = queueOptions.dlq === true ? {} : queueOptions.dlq;
      dlq = await createQueueWithArn(dlqSettings.name ?? `${name}-dlq`);
      attributes.RedrivePolicy = JSON.stringify({
        deadLetterTargetArn: dlq.queueArn,
        maxReceiveCount: String(dlqSettings.maxReceiveCount ?? 3),
      });
    }
    const queue = await createQueueWithArn(name, attributes);
    return dlq ? { ...queue, dlq } : queue;
  }

  for (const bucket of options.buckets ?? []) await createBucket(bucket);

  return {
    endpoint,
    region: FAUXQS_REGION,
    credentials: { ...CREDENTIALS },
    s3Client,
    sqsClient,
    lanceStorageOptions: {
      allowHttp: "true",
      awsAccessKeyId: CREDENTIALS.accessKeyId,
      awsSecretAccessKey: CREDENTIALS.secretAccessKey,
      awsEndpoint: endpoint,
      awsRegion: FAUXQS_REGION,
    },
    awsEnv: {
      AWS_ENDPOINT_URL_S3: endpoint,
      AWS_ENDPOINT_URL_SQS: endpoint,
      AWS_REGION: FAUXQS_REGION,
      AWS_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
    },
    createBucket,
    createQueue,
    async stop() {
      s3Client.destroy();
      sqsClient.destroy();
      await server.stop();
    },
  };
}
