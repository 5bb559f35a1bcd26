/**
 * Bundles the three functions exactly as `cdk synth` / `cdk deploy` would (NodejsFunction with
 * the local esbuild), then measures and inspects what would ship: sizes, and the source map's
 * list of inputs, which must name neither LanceDB (a dev dependency for tests) nor test code.
 */
import { readFile, stat } from "node:fs/promises";
import { join, relative } from "node:path";
import { gzipSync } from "node:zlib";
import { App, AssetStaging } from "aws-cdk-lib";
import type { NodejsFunction } from "aws-cdk-lib/aws-lambda-nodejs";
import { FUNCTION_NAMES, PROJECT_ROOT, type FunctionName } from "./function-bundling.ts";
import { LakewardenStack } from "./lakewarden-stack.ts";

export interface FunctionBundle {
  name: FunctionName;
  /** The asset directory CDK would zip and upload. */
  directory: string;
  bundleBytes: number;
  gzipBytes: number;
  sourceMapBytes: number;
  /** Every input file esbuild put into the bundle, relative to the project root. */
  sources: string[];
}

/** Inputs that must never be in a Lambda bundle, with the reason. */
const FORBIDDEN_SOURCES: { pattern: RegExp; reason: string }[] = [
  { pattern: /node_modules\/@lancedb\//, reason: "LanceDB (a dev dependency for tests)" },
  { pattern: /node_modules\/(vitest|@vitest|fauxqs|vite)\//, reason: "test tooling" },
  { pattern: /(^|\/)test\//, reason: "test code" },
  { pattern: /node_modules\/aws-cdk-lib\//, reason: "CDK (deploy-time only)" },
];

export async function bundleFunctions(outdir: string, context: Record<string, unknown>): Promise<FunctionBundle[]> {
  const app = new App({ outdir, context });
  const stack = new LakewardenStack(app, "LakewardenBundles", { settings: { tablePrefixes: ["lake/"], tableRoots: ["lake/orders.lance"] } });
  app.synth();
  const functions: Record<FunctionName, NodejsFunction> = {
    "on-commit": stack.lakewarden.onCommitFunction,
    "schedule-cleanup": stack.lakewarden.scheduleCleanupFunction,
    "cleanup-table": stack.lakewarden.cleanupTableFunction,
  };
  const bundles: FunctionBundle[] = [];
  for (const name of FUNCTION_NAMES) {
    const staging = functions[name].node.findAll().find((child): child is AssetStaging => child instanceof AssetStaging);
    if (!staging) throw new Error(`no bundled asset found for ${name}`);
    const directory = staging.absoluteStagedPath;
    const bundle = await readFile(join(directory, "index.mjs"));
    const map = JSON.parse(await readFile(join(directory, "index.mjs.map"), "utf8")) as { sources: string[] };
    bundles.push({
      name,
      directory,
      bundleBytes: bundle.length,
      gzipBytes: gzipSync(bundle, { level: 9 }).length,
      sourceMapBytes: (await stat(join(directory, "index.mjs.map"))).size,
      sources: map.sources.map((source) => relative(PROJECT_ROOT, join(directory, source)).replaceAll("\\", "/")),
    });
  }
  return bundles;
}

/** What a bundle must not contain; empty when it is clean. */
export function bundleProblems(bundle: FunctionBundle): string[] {
  const problems: string[] = [];
  for (const source of bundle.sources) {
    const forbidden = FORBIDDEN_SOURCES.find(({ pattern }) => pattern.test(source));
    if (forbidden) problems.push(`${bundle.name}: bundles ${forbidden.reason}: ${source}`);
  }
  return problems;
}

/** The packages a bundle draws from, with how many of their files it holds, largest first. */
function packagesOf(bundle: FunctionBundle): [string, number][] {
  const counts = new Map<string, number>();
  for (const source of bundle.sources) {
    const match = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(source);
    const name = match ? match[1]! : "lakewarden (lib/, functions/)";
    counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  return [...counts.entries()].sort((a, b) => b[1] - a[1]);
}

export function renderBundleSizes(bundles: readonly FunctionBundle[], meta: { command: string; date: Date; esbuild: string }): string {
  const kib = (bytes: number): string => `${(bytes / 1024).toFixed(1)} KiB`;
  const lines = [
    "# Lambda bundle sizes",
    "",
    `Written by \`${meta.command}\` on ${meta.date.toISOString().slice(0, 10)}: each function bundled as \`cdk deploy\` bundles it`,
    `(NodejsFunction, local esbuild ${meta.esbuild}; ESM, minified, Node.js 22 on ARM64, AWS SDK bundled), measured from the asset directory.`,
    "",
    "| function | index.mjs | gzip -9 | source map | input files | LanceDB or test code |",
    "|---|---:|---:|---:|---:|---|",
    ...bundles.map((b) =>
      `| ${b.name} | ${kib(b.bundleBytes)} | ${kib(b.gzipBytes)} | ${kib(b.sourceMapBytes)} | ${b.sources.length} | ${bundleProblems(b).length === 0 ? "none" : "**FOUND**"} |`,
    ),
    "",
    "Packages in each bundle (input files per package):",
    "",
    ...bundles.map((b) => `- ${b.name}: ${packagesOf(b).slice(0, 8).map(([name, files]) => `${name} (${files})`).join(", ")}`),
    "",
  ];
  return lines.join("\n");
}
