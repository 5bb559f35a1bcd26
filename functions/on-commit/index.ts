/** Lambda entry of on-commit: wiring only; the logic is in on-commit.ts. */
import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import { logMetrics } from "@aws-lambda-powertools/metrics/middleware";
import middy from "@middy/core";
import { lanceFormat } from "../../lib/formats/lance/lance-format.ts";
import { createS3Client } from "../../lib/store/s3-client.ts";
import { openStore } from "../../lib/store/open-store.ts";
import { ENV, optionalInteger, optionalString } from "../shared/environment.ts";
import { createPowertools } from "../shared/observability.ts";
import { readTableScopes } from "../shared/table-scopes.ts";
import { createOnCommitHandler } from "./on-commit.ts";

const { logger, metrics } = createPowertools("on-commit");
const { client: s3 } = createS3Client();
const codec = optionalString(process.env, ENV.headCodec);
const inlineBudgetBytes = optionalInteger(process.env, ENV.headInlineBytes, 0);

const onCommit = createOnCommitHandler({
  scopes: readTableScopes(process.env),
  format: lanceFormat,
  openStore: (uri) => openStore(uri, { s3: { client: s3 } }),
  headOptions: { ...(codec ? { codec } : {}), ...(inlineBudgetBytes !== undefined ? { inlineBudgetBytes } : {}) },
  log: logger,
  metrics,
});

export const handler = middy(onCommit)
  .use(injectLambdaContext(logger))
  .use(logMetrics(metrics));
