/** Lambda entry of cleanup-table (bundled by esbuild); see lambda.ts and cleanup-table.ts. */
import { createCleanupTableLambda } from "./lambda.ts";

export const handler = createCleanupTableLambda(process.env);
