/**
 * The two parts of the SQS SDK the functions use, loaded through this module (send-messages.ts):
 * a bundler keeps every export of a dynamically imported module.
 */
export { SendMessageBatchCommand, SQSClient } from "@aws-sdk/client-sqs";
