/**
 * Bundles the three functions exactly as `cdk synth` / `cdk deploy` would (NodejsFunction with
 * the local esbuild), then measures and inspects what would ship: sizes, and the source map's
 * list of inputs, which must name neither LanceDB (a dev dependency for tests) nor test code.
 */
import { readFile, readdir, stat } from "node:fs/promises";
import { join, relative } from "node:path";
import { gzipSync } from "node:zlib";
import { App, AssetStaging } from "aws-cdk-lib";
import type { NodejsFunction } from "aws-cdk-lib/aws-lambda-nodejs";
import type { Metafile } from "esbuild";
import { BUNDLE_METAFILES, FUNCTION_ENTRY_FILE, FUNCTION_NAMES, PROJECT_ROOT, type FunctionName } from "./function-bundling.ts";
import { LakewardenStack } from "./lakewarden-stack.ts";

export interface FunctionBundle {
  name: FunctionName;
  /** The asset directory CDK would zip and upload. */
  directory: string;
  /** The entry file, index.mjs. */
  bundleBytes: number;
  /** What a cold start loads before the first event: the entry and the chunks it imports statically. */
  startBytes: number;
  /** gzip -9 of those files, each compressed alone. */
  startGzipBytes: number;
  /** Every .mjs file in the asset (the chunks loaded on first use too). */
  totalBytes: number;
  /** The asset's .mjs files, by name, with the chunks each imports (static and dynamic). */
  chunks: Map<string, ChunkImports>;
  sourceMapBytes: number;
  /** Every input file esbuild put into any of the bundle's files, relative to the project root. */
  sources: string[];
  /** Inputs of the files a cold start loads (startBytes). */
  startSources: string[];
  /**
   * Where the bytes at start come from (esbuild's metafile: each input's bytes in the output), by
   * package, and by folder for lakewarden's own code, largest first; empty without a metafile.
   */
  startBytesBySource: [string, number][];
}

/** Inputs that must never be in a Lambda bundle, with the reason. */
const FORBIDDEN_SOURCES: { pattern: RegExp; reason: string }[] = [
  { pattern: /node_modules\/@lancedb\//, reason: "LanceDB (a dev dependency for tests)" },
  { pattern: /node_modules\/(vitest|@vitest|fauxqs|vite)\//, reason: "test tooling" },
  { pattern: /(^|\/)test\//, reason: "test code" },
  { pattern: /node_modules\/aws-cdk-lib\//, reason: "CDK (deploy-time only)" },
];

export interface ChunkImports {
  bytes: number;
  static: string[];
  dynamic: string[];
}

/** The chunks a minified esbuild ES module imports: `from"./x.mjs"`, `import"./x.mjs"` (static) and `import("./x.mjs")`. */
export function chunkImports(code: string): { static: string[]; dynamic: string[] } {
  const found = { static: new Set<string>(), dynamic: new Set<string>() };
  for (const match of code.matchAll(/(from|import)\s*(\(?)\s*"\.\/([^"/]+\.mjs)"/g)) {
    (match[2] === "(" ? found.dynamic : found.static).add(match[3]!);
  }
  return { static: [...found.static], dynamic: [...found.dynamic] };
}

/** The entry and every chunk it reaches through static imports: what loads with the module. */
export function staticClosure(chunks: ReadonlyMap<string, ChunkImports>, entry = FUNCTION_ENTRY_FILE): string[] {
  const seen = new Set<string>();
  const pending = [entry];
  while (pending.length > 0) {
    const file = pending.pop()!;
    if (seen.has(file) || !chunks.has(file)) continue;
    seen.add(file);
    pending.push(...chunks.get(file)!.static);
  }
  return [...seen];
}

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
    bundles.push(await readBundle(name, staging.absoluteStagedPath, BUNDLE_METAFILES.get(name)));
  }
  return bundles;
}

/** Measures and inspects one function's asset directory. */
export async function readBundle(name: FunctionName, directory: string, metafile?: Metafile): Promise<FunctionBundle> {
  const files = (await readdir(directory)).sort();
  const chunks = new Map<string, ChunkImports>();
  const code = new Map<string, Buffer>();
  for (const file of files.filter((f) => f.endsWith(".mjs"))) {
    const body = await readFile(join(directory, file));
    code.set(file, body);
    chunks.set(file, { bytes: body.length, ...chunkImports(body.toString("utf8")) });
  }
  const start = staticClosure(chunks);
  const sourcesOf = async (mjs: readonly string[]): Promise<string[]> => {
    const all = new Set<string>();
    for (const file of mjs) {
      if (!files.includes(`${file}.map`)) continue;
      const map = JSON.parse(await readFile(join(directory, `${file}.map`), "utf8")) as { sources: string[] };
      for (const source of map.sources) all.add(relative(PROJECT_ROOT, join(directory, source)).replaceAll("\\", "/"));
    }
    return [...all].sort();
  };
  const sum = (values: number[]): number => values.reduce((a, b) => a + b, 0);
  return {
    name,
    directory,
    bundleBytes: chunks.get(FUNCTION_ENTRY_FILE)?.bytes ?? 0,
    startBytes: sum(start.map((f) => chunks.get(f)!.bytes)),
    startGzipBytes: sum(start.map((f) => gzipSync(code.get(f)!, { level: 9 }).length)),
    totalBytes: sum([...chunks.values()].map((c) => c.bytes)),
    chunks,
    sourceMapBytes: sum(await Promise.all(files.filter((f) => f.endsWith(".map")).map(async (f) => (await stat(join(directory, f))).size))),
    sources: await sourcesOf([...chunks.keys()]),
    startSources: await sourcesOf(start),
    startBytesBySource: metafile ? bytesBySource(metafile, start) : [],
  };
}

/** The bytes each package (or lakewarden folder, `lib/head`) puts into these output files, largest first. */
export function bytesBySource(metafile: Metafile, files: readonly string[]): [string, number][] {
  const wanted = new Set(files);
  const bytes = new Map<string, number>();
  for (const [output, { inputs }] of Object.entries(metafile.outputs)) {
    if (!wanted.has(output.slice(output.lastIndexOf("/") + 1))) continue;
    for (const [input, { bytesInOutput }] of Object.entries(inputs)) {
      const source = sourceGroup(input);
      bytes.set(source, (bytes.get(source) ?? 0) + bytesInOutput);
    }
  }
  return [...bytes.entries()].sort((a, b) => b[1] - a[1]);
}

function sourceGroup(input: string): string {
  const match = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input);
  if (match) return match[1]!;
  if (input.startsWith("functions/")) return "functions";
  return input.startsWith("lib/") ? input.slice(0, input.lastIndexOf("/")) : input;
}

/** What a bundle must not contain; empty when it is clean. */
export function bundleProblems(bundle: FunctionBundle): string[] {
  const problems: string[] = [];
  for (const source of bundle.sources) {
    const forbidden = FORBIDDEN_SOURCES.find(({ pattern }) => pattern.test(source));
    if (forbidden) problems.push(`${bundle.name}: bundles ${forbidden.reason}: ${source}`);
  }
  if (!bundle.chunks.has(FUNCTION_ENTRY_FILE)) problems.push(`${bundle.name}: the asset has no ${FUNCTION_ENTRY_FILE}`);
  for (const [file, imports] of bundle.chunks) {
    for (const chunk of [...imports.static, ...imports.dynamic]) {
      if (!bundle.chunks.has(chunk)) problems.push(`${bundle.name}: ${file} imports ./${chunk}, which the asset does not hold`);
    }
  }
  return problems;
}

/** The packages some of a bundle's inputs come from, with how many of their files it holds, largest first. */
function packagesOf(sources: readonly string[]): [string, number][] {
  const counts = new Map<string, number>();
  for (const source of sources) {
    const match = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(source);
    const name = match ? match[1]! : "lakewarden (lib/, functions/)";
    counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  return [...counts.entries()].sort((a, b) => b[1] - a[1]);
}

export interface BundleTargets {
  /** Most bytes a function's cold start may load before its first event. */
  startBytes: Partial<Record<FunctionName, number>>;
}

export function renderBundleSizes(bundles: readonly FunctionBundle[], meta: { command: string; date: Date; esbuild: string; commit?: string; targets?: BundleTargets }): string {
  const kib = (bytes: number): string => `${(bytes / 1024).toFixed(1)} KiB`;
  const target = (b: FunctionBundle): string => {
    const limit = meta.targets?.startBytes[b.name];
    return limit === undefined ? "" : ` (≤ ${kib(limit)}: ${b.startBytes <= limit ? "met" : "**not met**"})`;
  };
  const lines = [
    "# Lambda bundle sizes",
    "",
    `Written by \`${meta.command}\` on ${meta.date.toISOString().slice(0, 10)}${meta.commit ? ` at commit ${meta.commit}` : ""}: each function bundled as \`cdk deploy\` bundles it`,
    `(infra/function-bundling.ts: local esbuild ${meta.esbuild}; ESM split into chunks, minified, Node.js 22 on ARM64, AWS SDK bundled), measured from the asset directory.`,
    "*At start*: the entry and the chunks it imports statically, which every cold start loads (for a deployment with no catalog table,",
    "before its first event); the rest loads on first use: the Glue SDK, a format's decoders (protobuf for Lance, Avro for Iceberg, Parquet",
    "for Delta), Arrow where a file is proven. *All chunks*: everything in the asset. S3 and SQS go through lakewarden's small client",
    "(lib/store/s3-http-store.ts, lib/store/aws-request.ts), not the AWS SDK, whose S3 client alone is 420 KiB minified.",
    "",
    "| function | at start | gzip -9 | index.mjs | all chunks | files | source maps | input files | LanceDB or test code |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ...bundles.map(
      (b) =>
        `| ${b.name} | ${kib(b.startBytes)}${target(b)} | ${kib(b.startGzipBytes)} | ${kib(b.bundleBytes)} | ${kib(b.totalBytes)} | ${b.chunks.size} | ${kib(b.sourceMapBytes)} | ${b.sources.length} | ${bundleProblems(b).length === 0 ? "none" : "**FOUND**"} |`,
    ),
    "",
    "Where the bytes at start go (esbuild's metafile: each input's bytes in the files loaded at start; by package, and by folder for lakewarden's own code):",
    "",
    ...bundles.map(
      (b) =>
        `- ${b.name}: ${b.startBytesBySource
          .filter(([, bytes]) => bytes >= 1024)
          .map(([source, bytes]) => `${source} ${(bytes / 1024).toFixed(1)}`)
          .join(", ")}; ${(b.startBytesBySource.filter(([, bytes]) => bytes < 1024).reduce((sum, [, bytes]) => sum + bytes, 0) / 1024).toFixed(1)} KiB in smaller parts`,
    ),
    "",
    "Packages loaded at start (input files per package):",
    "",
    ...bundles.map(
      (b) =>
        `- ${b.name}: ${packagesOf(b.startSources)
          .slice(0, 10)
          .map(([name, files]) => `${name} (${files})`)
          .join(", ")}`,
    ),
    "",
  ];
  return lines.join("\n");
}
