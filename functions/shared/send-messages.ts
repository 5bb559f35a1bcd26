/** Sends many SQS messages, ten per SendMessageBatch request (the SQS maximum). */
import type { SQSClient } from "@aws-sdk/client-sqs";

const BATCH = 10;

export class EnqueueError extends Error {
  constructor(queueUrl: string, failures: string[]) {
    super(`${queueUrl}: ${failures.length} message(s) not sent: ${failures.slice(0, 3).join("; ")}`);
    this.name = "EnqueueError";
  }
}

/** Per-message FIFO attributes (group and deduplication ids); required by a `.fifo` queue. */
export type FifoAttributes = (body: string) => { MessageGroupId: string; MessageDeduplicationId: string };

type SqsSdk = typeof import("./sqs-sdk.ts");
let sdkLoad: Promise<SqsSdk> | null = null;
// The SDK loads with the first send: cleanup-table sends only when a run stops before it is done.
const loadSdk = (): Promise<SqsSdk> => (sdkLoad ??= import("./sqs-sdk.ts"));

/**
 * Sends to one queue through a client made with the first send. The endpoint comes from the
 * region / AWS_ENDPOINT_URL_SQS, not from the queue URL's host: the same in AWS, and right with an
 * emulator whose queue URLs name a host that does not resolve.
 */
export function queueSender(queueUrl: string, fifo?: FifoAttributes): (bodies: readonly string[]) => Promise<void> {
  let client: SQSClient | null = null;
  return async (bodies) => {
    client ??= new (await loadSdk()).SQSClient({ useQueueUrlAsEndpoint: false });
    await sendMessages(client, queueUrl, bodies, fifo);
  };
}

export async function sendMessages(sqs: SQSClient, queueUrl: string, bodies: readonly string[], fifo?: FifoAttributes): Promise<void> {
  const { SendMessageBatchCommand } = await loadSdk();
  const failures: string[] = [];
  for (let start = 0; start < bodies.length; start += BATCH) {
    const batch = bodies.slice(start, start + BATCH);
    const response = await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: batch.map((body, index) => ({ Id: String(start + index), MessageBody: body, ...(fifo ? fifo(body) : {}) })),
      }),
    );
    for (const failed of response.Failed ?? []) failures.push(`${failed.Id}: ${failed.Code ?? ""} ${failed.Message ?? ""}`.trim());
  }
  if (failures.length > 0) throw new EnqueueError(queueUrl, failures);
}
