/**
 * Sends many SQS messages, ten per SendMessageBatch request (the SQS maximum), through the small
 * signed-request client (lib/store/aws-request.ts) and SQS's JSON protocol, not @aws-sdk/client-sqs:
 * schedule-cleanup sends on every event, and the SDK's client took about 200 KiB of its bundle
 * (bench/results/bundle-sizes.md) for this one operation.
 */
import { AwsClient, credentialsFromEnvironment, maxAttemptsFromEnvironment, type AwsResponse } from "../../lib/store/aws-request.ts";

const BATCH = 10;
/** As the S3 client's default (LAKEWARDEN_S3_REQUEST_TIMEOUT does not apply to SQS). */
const REQUEST_TIMEOUT_MS = 15_000;

export class EnqueueError extends Error {
  constructor(queueUrl: string, failures: string[]) {
    super(`${queueUrl}: ${failures.length} message(s) not sent: ${failures.slice(0, 3).join("; ")}`);
    this.name = "EnqueueError";
  }
}

/** Per-message FIFO attributes (group and deduplication ids); required by a `.fifo` queue. */
export type FifoAttributes = (body: string) => { MessageGroupId: string; MessageDeduplicationId: string };

/** An SQS endpoint and the client that signs for it. */
export interface SqsConnection {
  client: AwsClient;
  origin: string;
}

/**
 * The SQS connection from the environment: AWS_ENDPOINT_URL_SQS (else AWS_ENDPOINT_URL, else
 * the region's endpoint), AWS_REGION, the credentials the Lambda runtime sets, AWS_MAX_ATTEMPTS.
 * The endpoint never comes from the queue URL's host: the same in AWS, and right with an emulator
 * whose queue URLs name a host that does not resolve.
 */
export function connectSqs(env: NodeJS.ProcessEnv = process.env): SqsConnection {
  const endpoint = [env.AWS_ENDPOINT_URL_SQS, env.AWS_ENDPOINT_URL].map((value) => value?.trim()).find((value) => value);
  const region = env.AWS_REGION?.trim() || env.AWS_DEFAULT_REGION?.trim() || (endpoint ? "us-east-1" : undefined);
  if (!region) throw new Error("AWS_REGION is not set: the SQS client needs the region of its queues");
  const client = new AwsClient({
    service: "sqs",
    region,
    credentials: credentialsFromEnvironment(env),
    maxAttempts: maxAttemptsFromEnvironment(env),
    requestTimeoutMs: REQUEST_TIMEOUT_MS,
    errorCode: (response) => errorOf(response).code,
  });
  return { client, origin: (endpoint ?? `https://sqs.${region}.amazonaws.com`).replace(/\/+$/, "") };
}

/** Sends to one queue through a connection made from process.env with the first send. */
export function queueSender(queueUrl: string, fifo?: FifoAttributes): (bodies: readonly string[]) => Promise<void> {
  let connection: SqsConnection | null = null;
  return async (bodies) => {
    connection ??= connectSqs();
    await sendMessages(connection, queueUrl, bodies, fifo);
  };
}

interface BatchResult {
  Failed?: { Id?: string; Code?: string; Message?: string }[];
}

export async function sendMessages(sqs: SqsConnection, queueUrl: string, bodies: readonly string[], fifo?: FifoAttributes): Promise<void> {
  const failures: string[] = [];
  for (let start = 0; start < bodies.length; start += BATCH) {
    const batch = bodies.slice(start, start + BATCH);
    const request = { QueueUrl: queueUrl, Entries: batch.map((body, index) => ({ Id: String(start + index), MessageBody: body, ...(fifo ? fifo(body) : {}) })) };
    const response = await sqs.client.send({
      method: "POST",
      origin: sqs.origin,
      path: "/",
      headers: { "content-type": "application/x-amz-json-1.0", "x-amz-target": "AmazonSQS.SendMessageBatch" },
      body: Buffer.from(JSON.stringify(request), "utf8"),
    });
    if (response.status >= 300) {
      const { code, message } = errorOf(response);
      throw new Error(`${queueUrl}: SendMessageBatch failed: ${code ?? `HTTP ${response.status}`}${message ? `: ${message}` : ""} (HTTP ${response.status})`);
    }
    const result = JSON.parse(response.body.toString("utf8")) as BatchResult;
    for (const failed of result.Failed ?? []) failures.push(`${failed.Id}: ${failed.Code ?? ""} ${failed.Message ?? ""}`.trim());
  }
  if (failures.length > 0) throw new EnqueueError(queueUrl, failures);
}

/** The error code and message of an SQS JSON error answer (`__type` is `com.amazonaws.sqs#QueueDoesNotExist`). */
function errorOf(response: AwsResponse): { code: string | undefined; message: string | undefined } {
  const queryError = response.headers["x-amzn-query-error"];
  try {
    const body = JSON.parse(response.body.toString("utf8")) as { __type?: string; message?: string; Message?: string };
    const code = body.__type?.split("#").pop() ?? (typeof queryError === "string" ? queryError.split(";")[0] : undefined);
    return { code, message: body.message ?? body.Message };
  } catch {
    return { code: typeof queryError === "string" ? queryError.split(";")[0] : undefined, message: undefined };
  }
}
