#!/usr/bin/env node
// The `lakewarden` executable. The CLI is TypeScript run by Node's native type stripping
// (Node >= 22.18). Under an older node (say a system Node 20 on PATH) it re-executes itself
// with the Node 22 binary that the project's `node` dependency installs, so `npx lakewarden`
// works right after `npm ci` with no build step. Plain JS because Node 20 cannot parse TS.
//
// The re-executed CLI is the real process: SIGINT, SIGTERM and SIGHUP sent to this wrapper
// (by `timeout`, a scheduler, systemd, or npx forwarding a Ctrl-C) are passed on to it, and the
// wrapper exits only when it has, with its status (or by its signal), so a cleanup it runs
// stops cleanly and releases its lease instead of going on orphaned.
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { constants } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const main = fileURLToPath(new URL("./main.ts", import.meta.url));
const FORWARDED_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"];

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
  const child = spawn(node22, [main, ...process.argv.slice(2)], { stdio: "inherit" });
  // One copy of a signal per burst: a terminal's Ctrl-C reaches the CLI through the process group
  // already, and npx forwards its own copy a moment later. A copy that arrived as the CLI ended
  // would find its handlers gone and kill it by the signal instead of letting it exit 130.
  const SAME_SIGNAL_MS = 500;
  const forwardedAt = new Map();
  const forward = (signal) => {
    const now = Date.now();
    if (now - (forwardedAt.get(signal) ?? -Infinity) < SAME_SIGNAL_MS) return;
    forwardedAt.set(signal, now);
    child.kill(signal);
  };
  for (const signal of FORWARDED_SIGNALS) process.on(signal, forward);
  child.once("error", (error) => {
    console.error(`lakewarden: cannot start ${node22}: ${error.message}`);
    process.exit(1);
  });
  child.once("exit", (code, signal) => {
    // The handlers stay until the CLI exited by a status: a late copy of a signal arriving now
    // would otherwise kill this wrapper by it, hiding the CLI's 130 (stopped cleanly).
    if (signal !== null) {
      for (const forwarded of FORWARDED_SIGNALS) process.removeListener(forwarded, forward);
      // Die the way the CLI died, so a shell or scheduler sees the same signal; the exit status
      // after it is the shell's convention, for a signal this process ignores (SIGPIPE).
      process.kill(process.pid, signal);
      process.exit(128 + (constants.signals[signal] ?? 0));
    }
    process.exit(code ?? 1);
  });
}
