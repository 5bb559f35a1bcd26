/**
 * How the three handlers are built: esbuild run locally (there is no Docker fallback on purpose),
 * ESM for Node.js 22 on ARM64, split into chunks. Each function's entry holds what every event
 * runs; code only some deployments need (the Glue SDK, Parquet, Avro, a format's decoder) sits
 * in chunks its first use loads, so a cold start reads only its own path.
 *
 * NodejsFunction's own bundling writes one file (`--outfile`), which esbuild cannot split; the
 * functions keep NodejsFunction and get their code from an asset this module bundles with the
 * same options plus splitting. The asset directory holds `index.mjs` and every chunk.
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { AssetHashType, DockerImage } from "aws-cdk-lib";
import { Architecture, Code, Runtime } from "aws-cdk-lib/aws-lambda";
import { OutputFormat, SourceMapMode, type BundlingOptions } from "aws-cdk-lib/aws-lambda-nodejs";
import { buildSync, type BuildOptions, type Metafile } from "esbuild";

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

/** The entry file in the asset; the handler is `index.handler`. */
export const FUNCTION_ENTRY_FILE = "index.mjs";

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

/** esbuild options for one function's asset directory: BUNDLING's, split into chunks. */
export function functionBuildOptions(name: FunctionName, outdir: string): BuildOptions & { metafile: true } {
  return {
    absWorkingDir: PROJECT_ROOT,
    entryPoints: { index: functionEntry(name) },
    outdir,
    outExtension: { ".js": ".mjs" },
    chunkNames: "[name]-[hash]",
    bundle: true,
    splitting: true,
    platform: "node",
    format: "esm",
    target: BUNDLING.target ?? "node22",
    mainFields: BUNDLING.mainFields ?? ["module", "main"],
    minify: BUNDLING.minify ?? true,
    sourcemap: true,
    banner: { js: BUNDLING.banner ?? "" },
    metafile: true,
    logLevel: "warning",
  };
}

/**
 * The esbuild metafile of each function bundled in this process (the last bundle per name): which
 * input went into which output file, and how many bytes of it. The bundle report reads it to say
 * where each KiB a cold start loads comes from; it never ships in the asset.
 */
export const BUNDLE_METAFILES = new Map<FunctionName, Metafile>();

/** The function's code: its asset directory, bundled when CDK stages the asset (skipped when a synth skips bundling). */
export function functionCode(name: FunctionName): Code {
  return Code.fromAsset(PROJECT_ROOT, {
    assetHashType: AssetHashType.OUTPUT,
    bundling: {
      // Never used: local bundling always answers, and fails loudly rather than fall back to Docker.
      image: DockerImage.fromRegistry("public.ecr.aws/sam/build-nodejs22.x"),
      // CDK caches bundles by source and bundling options, not by the local bundler: name the function, or all three share one.
      environment: { LAKEWARDEN_FUNCTION: name },
      local: {
        tryBundle(outputDir: string): boolean {
          BUNDLE_METAFILES.set(name, buildSync(functionBuildOptions(name, outputDir)).metafile);
          return true;
        },
      },
    },
  });
}
