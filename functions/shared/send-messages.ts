/** Sends many SQS messages, ten per SendMessageBatch request (the SQS maximum). */
import { SendMessageBatchCommand, type SQSClient } from "@aws-sdk/client-sqs";

const BATCH = 10;

export class EnqueueError extends Error {
  constructor(queueUrl: string, failures: string[]) {
    super(`${queueUrl}: ${failures.length} message(s) not sent: ${failures.slice(0, 3).join("; ")}`);
    this.name = "EnqueueError";
  }
}

/** Per-message FIFO attributes (group and deduplication ids); required by a `.fifo` queue. */
export type FifoAttributes = (body: string) => { MessageGroupId: string; MessageDeduplicationId: string };

export async function sendMessages(sqs: SQSClient, queueUrl: string, bodies: readonly string[], fifo?: FifoAttributes): Promise<void> {
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
