/** The cleanup-table Lambda as deployed: dependencies from the environment, Powertools through middy. */
import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import { logMetrics } from "@aws-lambda-powertools/metrics/middleware";
import middy from "@middy/core";
import { settingsFromEnvironment } from "../../lib/maintenance/policy.ts";
import { runCleanup } from "../../lib/maintenance/run-cleanup.ts";
import { createS3Client } from "../../lib/store/s3-client.ts";
import { openStore } from "../../lib/store/open-store.ts";
import { ENV, optionalPositiveInteger, type Environment } from "../shared/environment.ts";
import { createPowertools } from "../shared/observability.ts";
import { readTableScopes } from "../shared/table-scopes.ts";
import { createCleanupTableHandler, type CleanupTableDependencies } from "./cleanup-table.ts";

export function createCleanupTableLambda(env: Environment, overrides: Partial<CleanupTableDependencies> = {}) {
  const { logger, metrics } = createPowertools("cleanup-table");
  const { client: s3 } = createS3Client({}, env);
  const cleanupTable = createCleanupTableHandler({
    scopes: readTableScopes(env),
    openStore: (uri) => openStore(uri, { s3: { client: s3 } }),
    runCleanup,
    settings: settingsFromEnvironment(env),
    ...(optionalPositiveInteger(env, ENV.maxDeleteRate) !== undefined ? { maxDeleteRate: optionalPositiveInteger(env, ENV.maxDeleteRate)! } : {}),
    log: logger,
    metrics,
    ...overrides,
  });
  return middy(cleanupTable).use(injectLambdaContext(logger)).use(logMetrics(metrics));
}
