/** Lambda entry of on-commit (bundled by esbuild); see lambda.ts for the wiring, on-commit.ts for the logic. */
import { createOnCommitLambda } from "./lambda.ts";

export const handler = createOnCommitLambda(process.env);
