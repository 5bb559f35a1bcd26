/**
 * `npm run build:functions`: bundles the Lambda functions as a deploy would, writes their sizes
 * to bench/results/bundle-sizes.md, and fails if any bundle holds LanceDB or test code.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bundleFunctions, bundleProblems, renderBundleSizes } from "./bundle-report.ts";
import { PROJECT_ROOT } from "./function-bundling.ts";

/** Issue 27: what each function may load before its first event, for a deployment with no catalog table. */
const START_TARGETS = { "on-commit": 600 * 1024, "schedule-cleanup": 300 * 1024, "cleanup-table": 900 * 1024 };

const outdir = await mkdtemp(join(tmpdir(), "lakewarden-bundles-"));
try {
  const { context } = JSON.parse(readFileSync(join(PROJECT_ROOT, "cdk.json"), "utf8")) as { context: Record<string, unknown> };
  const bundles = await bundleFunctions(outdir, context);
  const esbuild = execFileSync(join(PROJECT_ROOT, "node_modules", ".bin", "esbuild"), ["--version"], { encoding: "utf8" }).trim();
  const commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: PROJECT_ROOT, encoding: "utf8" }).trim();
  const report = renderBundleSizes(bundles, { command: "npm run build:functions", date: new Date(), esbuild, commit, targets: { startBytes: START_TARGETS } });
  await writeFile(join(PROJECT_ROOT, "bench", "results", "bundle-sizes.md"), report);
  process.stdout.write(report);
  const problems = bundles.flatMap(bundleProblems);
  if (problems.length > 0) {
    process.stderr.write(`${problems.join("\n")}\n`);
    process.exitCode = 1;
  }
} finally {
  await rm(outdir, { recursive: true, force: true });
}
