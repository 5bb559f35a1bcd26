/**
 * The on-commit Lambda as deployed: dependencies from the environment, Powertools logger and
 * metrics through middy. `overrides` lets a test swap a dependency (say, the store opener for
 * an emulator) while keeping everything else as it runs in AWS.
 */
import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import { logMetrics } from "@aws-lambda-powertools/metrics/middleware";
import middy from "@middy/core";
import { httpStoreOpener } from "../../lib/store/open-http-store.ts";
import { ENV, optionalInteger, optionalString, type Environment } from "../shared/environment.ts";
import { createPowertools } from "../shared/observability.ts";
import { readTableScopes } from "../shared/table-scopes.ts";
import { readTableCatalogs } from "../shared/catalog-tables.ts";
import { createOnCommitHandler, type OnCommitDependencies } from "./on-commit.ts";

export function createOnCommitLambda(env: Environment, overrides: Partial<OnCommitDependencies> = {}) {
  const { logger, metrics } = createPowertools("on-commit");
  // S3 through the small client, not the AWS SDK: the cold start (lib/store/s3-http-store.ts).
  const openStore = httpStoreOpener(env);
  const codec = optionalString(env, ENV.headCodec);
  const inlineBudgetBytes = optionalInteger(env, ENV.headInlineBytes, 0);
  const catalogs = readTableCatalogs(env);
  const onCommit = createOnCommitHandler({
    scopes: readTableScopes(env),
    openStore,
    headOptions: { ...(codec ? { codec } : {}), ...(inlineBudgetBytes !== undefined ? { inlineBudgetBytes } : {}) },
    // Catalog clients follow the Lambda's environment (AWS_REGION, the role's credentials) and load with the first lookup.
    ...(catalogs.size > 0 ? { catalogs } : {}),
    log: logger,
    metrics,
    ...overrides,
  });
  return middy(onCommit).use(injectLambdaContext(logger)).use(logMetrics(metrics));
}
