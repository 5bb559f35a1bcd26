#!/usr/bin/env node
// The `lakewarden` executable. The CLI is TypeScript run by Node's native type stripping
// (Node >= 22.18). Under an older node (say a system Node 20 on PATH) it re-executes itself
// with the Node 22 binary that the project's `node` dependency installs, so `npx lakewarden`
// works right after `npm ci` with no build step. Plain JS because Node 20 cannot parse TS.
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const main = fileURLToPath(new URL("./main.ts", import.meta.url));

if (process.features.typescript) {
  await import(main);
} else {
  const require = createRequire(import.meta.url);
  let node22;
  try {
    node22 = join(dirname(require.resolve("node/package.json")), "bin", "node");
  } catch {
    console.error(`lakewarden: needs Node >= 22.18 (this is ${process.version}); run 'npm ci' to install it`);
    process.exit(1);
  }
  const run = spawnSync(node22, [main, ...process.argv.slice(2)], { stdio: "inherit" });
  if (run.error) {
    console.error(`lakewarden: cannot start ${node22}: ${run.error.message}`);
    process.exit(1);
  }
  process.exit(run.status ?? 1);
}
