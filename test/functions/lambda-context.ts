/** A Lambda context object with the fields the runtime provides, for calling handlers in-process. */
import type { Context } from "aws-lambda";

export function lambdaContext(functionName: string, remainingMillis: () => number = () => 60_000): Context {
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: "$LATEST",
    invokedFunctionArn: `arn:aws:lambda:us-east-1:123456789012:function:${functionName}`,
    memoryLimitInMB: "1024",
    awsRequestId: crypto.randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: "2026/03/01/[$LATEST]0123456789abcdef",
    getRemainingTimeInMillis: remainingMillis,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}
