/**
 * Builds bench/tools/cleanup-child.ts as compiled JavaScript, the way the Lambdas ship
 * lakewarden: one esbuild run with the Lambda's own options (infra/function-bundling.ts BUNDLING),
 * so the benchmark measures what users run rather than the TypeScript sources under Node's type
 * stripping (whose compiler and per-module transforms add tens of MiB before a cleanup starts).
 */
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { build, type Plugin } from "esbuild";
import { BUNDLING } from "../../infra/function-bundling.ts";

/** The node flags every bundled or source child runs with (the benchmark and the instruction counts alike). */
export const CLEANUP_CHILD_NODE_FLAGS: readonly string[] = ["--disable-warning=ExperimentalWarning"];

const CHILD_ENTRY = fileURLToPath(new URL("./cleanup-child.ts", import.meta.url));

/**
 * LanceDB stays outside the bundle (a native addon; users load it from node_modules). The bundle
 * is written outside the project, where a bare `@lancedb/lancedb` would not resolve, so the
 * import is pinned to the file the project resolves.
 */
const lancedbExternal: Plugin = {
  name: "lancedb-external",
  setup(builder) {
    const resolved = fileURLToPath(import.meta.resolve("@lancedb/lancedb"));
    builder.onResolve({ filter: /^@lancedb\/lancedb$/ }, () => ({ path: resolved, external: true }));
  },
};

/**
 * Bundles the child into `outdir` and returns the entry file to run with `node`. Code splitting
 * puts lakewarden (with the AWS SDK) and LanceDB's side in separate chunks, so a LanceDB child
 * never loads lakewarden's code and the reverse; the chunks hold the same code a Lambda bundle
 * does (Lambda bundles are single files only because each holds one entry).
 */
export async function bundleCleanupChild(outdir: string): Promise<string> {
  await build({
    entryPoints: { "cleanup-child": CHILD_ENTRY },
    outdir,
    outExtension: { ".js": ".mjs" },
    bundle: true,
    splitting: true,
    platform: "node",
    format: "esm",
    target: BUNDLING.target ?? "node22",
    mainFields: BUNDLING.mainFields ?? ["module", "main"],
    // LAKEWARDEN_BENCH_UNMINIFIED=1: names kept, for reading profiles (V8's --trace-opt, --turbo-filter, perf maps).
    minify: process.env.LAKEWARDEN_BENCH_UNMINIFIED === "1" ? false : (BUNDLING.minify ?? false),
    banner: { js: BUNDLING.banner ?? "" },
    plugins: [lancedbExternal],
    logLevel: "error",
  });
  return join(outdir, "cleanup-child.mjs");
}
