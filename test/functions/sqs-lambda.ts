/**
 * What the Lambda SQS event source does, done against a real (moto) queue: receive up to ten
 * messages, hand them to the handler as an SQSEvent, delete the ones the handler did not report
 * in `batchItemFailures`. A failed message is made visible again at once (the test's stand-in
 * for its visibility timeout running out), so SQS's own redrive policy decides when it moves to
 * the dead-letter queue.
 */
import { ChangeMessageVisibilityBatchCommand, DeleteMessageBatchCommand, ReceiveMessageCommand, SendMessageCommand, type Message, type SQSClient } from "@aws-sdk/client-sqs";
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";

export interface QueueRef {
  queueUrl: string;
  queueArn: string;
}

export type SqsHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;

export interface PollResult {
  event: SQSEvent;
  failedMessageIds: string[];
}

export async function sendBodies(sqs: SQSClient, queue: QueueRef, bodies: readonly string[]): Promise<string[]> {
  const ids: string[] = [];
  for (const body of bodies) {
    const sent = await sqs.send(new SendMessageCommand({ QueueUrl: queue.queueUrl, MessageBody: body }));
    ids.push(sent.MessageId ?? "");
  }
  return ids;
}

/** One poll; null when the queue had nothing visible. */
export async function pollOnce(sqs: SQSClient, queue: QueueRef, handler: SqsHandler, context: Context, region = "us-east-1"): Promise<PollResult | null> {
  const received = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queue.queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0, MessageSystemAttributeNames: ["All"] }));
  const messages = received.Messages ?? [];
  if (messages.length === 0) return null;
  const event: SQSEvent = { Records: messages.map((message) => toRecord(message, queue.queueArn, region)) };
  const response = await handler(event, context);
  const failedMessageIds = response.batchItemFailures.map((failure) => failure.itemIdentifier);
  const failed = messages.filter((m) => failedMessageIds.includes(m.MessageId ?? ""));
  const succeeded = messages.filter((m) => !failedMessageIds.includes(m.MessageId ?? ""));
  if (succeeded.length > 0) {
    await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: queue.queueUrl,
        Entries: succeeded.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle ?? "" })),
      }),
    );
  }
  if (failed.length > 0) {
    await sqs.send(
      new ChangeMessageVisibilityBatchCommand({
        QueueUrl: queue.queueUrl,
        Entries: failed.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle ?? "", VisibilityTimeout: 0 })),
      }),
    );
  }
  return { event, failedMessageIds };
}

/** Polls until the queue is empty (failed messages included: they end in the DLQ); returns every poll. */
export async function drain(sqs: SQSClient, queue: QueueRef, handler: SqsHandler, context: Context, maxPolls = 50): Promise<PollResult[]> {
  const polls: PollResult[] = [];
  for (let i = 0; i < maxPolls; i++) {
    const poll = await pollOnce(sqs, queue, handler, context);
    if (poll === null) return polls;
    polls.push(poll);
  }
  throw new Error(`${queue.queueUrl} still had messages after ${maxPolls} polls`);
}

export async function receiveAll(sqs: SQSClient, queueUrl: string): Promise<Message[]> {
  const messages: Message[] = [];
  for (;;) {
    const received = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0, VisibilityTimeout: 30 }));
    if (!received.Messages?.length) return messages;
    messages.push(...received.Messages);
  }
}

function toRecord(message: Message, queueArn: string, region: string): SQSRecord {
  const attributes = message.Attributes ?? {};
  return {
    messageId: message.MessageId ?? "",
    receiptHandle: message.ReceiptHandle ?? "",
    body: message.Body ?? "",
    attributes: {
      ApproximateReceiveCount: attributes.ApproximateReceiveCount ?? "1",
      SentTimestamp: attributes.SentTimestamp ?? String(Date.now()),
      SenderId: attributes.SenderId ?? "AIDAEXAMPLE",
      ApproximateFirstReceiveTimestamp: attributes.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
    },
    messageAttributes: {},
    md5OfBody: message.MD5OfBody ?? "",
    eventSource: "aws:sqs",
    eventSourceARN: queueArn,
    awsRegion: region,
  };
}
