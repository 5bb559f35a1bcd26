/** Lambda entry of schedule-cleanup (bundled by esbuild); see lambda.ts and schedule-cleanup.ts. */
import { createScheduleCleanupLambda } from "./lambda.ts";

export const handler = createScheduleCleanupLambda(process.env);
