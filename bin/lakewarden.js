#!/usr/bin/env node
// The `lakewarden` executable as package.json's `bin` names it.
// - Installed from the package (npm install lakewarden / a packed tarball): runs the compiled
//   JavaScript in dist/, which works on Node 20 and 22 alike.
// - In a source checkout (lib/ is there): runs the TypeScript sources through lib/cli/bin.js,
//   so `npx lakewarden` after `npm ci` needs no build step and never runs a stale dist/.
import { existsSync } from "node:fs";

const sources = new URL("../lib/cli/bin.js", import.meta.url);
const compiled = new URL("../dist/cli/main.js", import.meta.url);

await import(existsSync(sources) ? sources.href : compiled.href);
