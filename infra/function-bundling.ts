/**
 * How the three handlers are built: esbuild run locally by NodejsFunction (there is no Docker
 * fallback on purpose), one ESM file per function for Node.js 22 on ARM64.
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Architecture, Runtime } from "aws-cdk-lib/aws-lambda";
import { OutputFormat, SourceMapMode, type BundlingOptions } from "aws-cdk-lib/aws-lambda-nodejs";

/** The repository root: entries and the lock file are found from here, wherever the app runs. */
export const PROJECT_ROOT = dirname(dirname(fileURLToPath(import.meta.url)));

export const FUNCTION_NAMES = ["on-commit", "schedule-cleanup", "cleanup-table"] as const;
export type FunctionName = (typeof FUNCTION_NAMES)[number];

export function functionEntry(name: FunctionName): string {
  return join(PROJECT_ROOT, "functions", name, "index.ts");
}

export const LOCK_FILE = join(PROJECT_ROOT, "package-lock.json");

export const FUNCTION_RUNTIME = Runtime.NODEJS_22_X;
export const FUNCTION_ARCHITECTURE = Architecture.ARM_64;

export const BUNDLING: BundlingOptions = {
  format: OutputFormat.ESM,
  target: "node22",
  // Prefer packages' ESM builds: smaller bundles, and tree shaking works on them.
  mainFields: ["module", "main"],
  minify: true,
  sourceMap: true,
  sourceMapMode: SourceMapMode.DEFAULT,
  // The Lambda runtime's SDK may predate S3 conditional writes (If-Match); ship the version we test.
  bundleAwsSDK: true,
  // CommonJS dependencies bundled into an ES module still call require(); give them one.
  banner: "import{createRequire as __lwCreateRequire}from'node:module';const require=__lwCreateRequire(import.meta.url);",
};
