/** The cleanup-table Lambda as deployed: dependencies from the environment, Powertools through middy. */
import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import { logMetrics } from "@aws-lambda-powertools/metrics/middleware";
import middy from "@middy/core";
import { settingsFromEnvironment } from "../../lib/maintenance/policy.ts";
import { runCleanup } from "../../lib/maintenance/run-cleanup.ts";
import { httpStoreOpener } from "../../lib/store/open-http-store.ts";
import { fifoAttributesOf } from "../shared/cleanup-request.ts";
import { ENV, isFifoQueueUrl, optionalInteger, optionalPositiveInteger, optionalString, type Environment } from "../shared/environment.ts";
import { queueSender } from "../shared/send-messages.ts";
import { createPowertools } from "../shared/observability.ts";
import { readTableScopes } from "../shared/table-scopes.ts";
import { readTableCatalogs } from "../shared/catalog-tables.ts";
import { createCleanupTableHandler, type CleanupTableDependencies } from "./cleanup-table.ts";

export function createCleanupTableLambda(env: Environment, overrides: Partial<CleanupTableDependencies> = {}) {
  const { logger, metrics } = createPowertools("cleanup-table");
  // S3 through the small client, not the AWS SDK: the cold start (lib/store/s3-http-store.ts).
  const openStore = httpStoreOpener(env);
  // The queue a stopped run sends its continuation to (the cleanup queue itself).
  const queueUrl = optionalString(env, ENV.cleanupQueueUrl);
  const sendContinuation = queueUrl ? queueSender(queueUrl, isFifoQueueUrl(queueUrl) ? fifoAttributesOf : undefined) : null;
  const maxContinuations = optionalInteger(env, ENV.maxContinuations, 0);
  // At least one object: with none, a budget could stop every run of a chain before it did anything.
  const minWorkPerRun = optionalPositiveInteger(env, ENV.minWorkPerRun);
  const catalogs = readTableCatalogs(env);
  const cleanupTable = createCleanupTableHandler({
    scopes: readTableScopes(env),
    openStore,
    runCleanup,
    settings: settingsFromEnvironment(env),
    ...(sendContinuation ? { sendContinuation: (body: string) => sendContinuation([body]) } : {}),
    ...(maxContinuations !== undefined ? { maxContinuations } : {}),
    ...(minWorkPerRun !== undefined ? { minWorkPerRun } : {}),
    // Catalog clients follow the Lambda's environment (AWS_REGION, the role's credentials) and load on first use.
    ...(catalogs.size > 0 ? { catalogs } : {}),
    ...(optionalPositiveInteger(env, ENV.maxDeleteRate) !== undefined ? { maxDeleteRate: optionalPositiveInteger(env, ENV.maxDeleteRate)! } : {}),
    log: logger,
    metrics,
    ...overrides,
  });
  return middy(cleanupTable).use(injectLambdaContext(logger)).use(logMetrics(metrics));
}
