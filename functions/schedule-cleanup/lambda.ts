/** The schedule-cleanup Lambda as deployed: dependencies from the environment, Powertools through middy. */
import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import { logMetrics } from "@aws-lambda-powertools/metrics/middleware";
import middy from "@middy/core";
import { FORMAT_VERSION_FOLDERS } from "../../lib/formats/version-folders.ts";
import { httpStoreOpener } from "../../lib/store/open-http-store.ts";
import { fifoAttributesOf } from "../shared/cleanup-request.ts";
import { ENV, isFifoQueueUrl, optionalPositiveInteger, requireString, type Environment } from "../shared/environment.ts";
import { createPowertools } from "../shared/observability.ts";
import { queueSender } from "../shared/send-messages.ts";
import { readTableScopes } from "../shared/table-scopes.ts";
import { createScheduleCleanupHandler, type ScheduleCleanupDependencies } from "./schedule-cleanup.ts";

export function createScheduleCleanupLambda(env: Environment, overrides: Partial<ScheduleCleanupDependencies> = {}) {
  const { logger, metrics } = createPowertools("schedule-cleanup");
  // S3 through the small client, not the AWS SDK: the cold start (lib/store/s3-http-store.ts).
  const openStore = httpStoreOpener(env);
  const queueUrl = requireString(env, ENV.cleanupQueueUrl);
  const scheduleCleanup = createScheduleCleanupHandler({
    scopes: readTableScopes(env),
    formats: FORMAT_VERSION_FOLDERS,
    discoveryDepth: optionalPositiveInteger(env, ENV.discoveryDepth) ?? 4,
    openStore,
    enqueue: queueSender(queueUrl, isFifoQueueUrl(queueUrl) ? fifoAttributesOf : undefined),
    log: logger,
    metrics,
    ...overrides,
  });
  return middy(scheduleCleanup).use(injectLambdaContext(logger)).use(logMetrics(metrics));
}
