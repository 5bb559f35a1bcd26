/**
 * The package as a user gets it: `npm pack` (which builds dist/ through `prepack`), then
 * `npm install` of the tarball into an empty project. The installed `lakewarden` binary and
 * `import "lakewarden"` must work there, with no TypeScript and no source checkout around:
 * on the Node 22 running the tests and on a Node 20 (the oldest package.json's engines allow:
 * found on PATH, the system's here; those tests skip, saying so, only where none is installed).
 * The README's TypeScript example runs against the installed package.
 */
import { execFile } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { delimiter, dirname, join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, it } from "vitest";
import { copyFixtureDir } from "../support/fixtures.ts";
import { buildLanceDataset, makeTempDir, removeDir, type LanceDataset } from "../support/lance-datasets.ts";
import { findNode20 } from "../support/node20.ts";

const exec = promisify(execFile);
const ROOT = new URL("../..", import.meta.url).pathname;
const manifest = JSON.parse(await readFile(join(ROOT, "package.json"), "utf8")) as { version: string; license: string };

let dir: string;
let project: string;
let dataset: LanceDataset;
let packedFiles: string[];
let iceberg: { dir: string; remove(): Promise<void> };
let node20: string | null;

/** PATH without any node_modules/.bin, so `node` there is the system's, not the `node` package's. */
const systemPath = (process.env.PATH ?? "")
  .split(delimiter)
  .filter((p) => !p.includes("node_modules"))
  .join(delimiter);

/** Runs `npx lakewarden …` in the project with `node` on PATH being the given binary (the bin's `#!/usr/bin/env node` picks it). */
function npxWith(node: string, args: string[]) {
  return exec("npx", ["lakewarden", ...args], { cwd: project, env: { ...process.env, PATH: `${dirname(node)}${delimiter}${systemPath}` }, maxBuffer: 64 << 20 });
}

beforeAll(async () => {
  dir = await makeTempDir("lw-pack-");
  project = join(dir, "project");
  dataset = await buildLanceDataset({ dbUri: join(dir, "lake") });

  const packed = await exec("npm", ["pack", "--json", "--pack-destination", dir], { cwd: ROOT, maxBuffer: 64 << 20 });
  const [info] = JSON.parse(packed.stdout) as [{ filename: string; files: { path: string }[] }];
  packedFiles = info.files.map((f) => f.path);

  await exec("mkdir", ["-p", project]);
  await writeFile(join(project, "package.json"), `${JSON.stringify({ name: "probe", version: "1.0.0", private: true, type: "module" })}\n`);
  // --prefer-offline: after `npm ci` every dependency is in npm's cache, so this needs no network.
  await exec("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", join(dir, info.filename)], { cwd: project, maxBuffer: 64 << 20 });

  iceberg = await copyFixtureDir("iceberg", "spark-bunnies");
  node20 = await findNode20();
}, 600_000);

afterAll(async () => {
  dataset?.close();
  await iceberg?.remove();
  await removeDir(dir);
});

it("packs compiled JavaScript with type declarations, and no tests, benchmarks or TypeScript sources", () => {
  expect(packedFiles).toContain("dist/index.js");
  expect(packedFiles).toContain("dist/index.d.ts");
  expect(packedFiles).toContain("dist/cli/main.js");
  expect(packedFiles).toContain("bin/lakewarden.js");
  // package.json says Apache-2.0: the license's text ships with it (issue 22).
  expect(packedFiles).toContain("LICENSE");
  expect(packedFiles.filter((f) => /^(test|bench|lib|functions|infra)\//.test(f))).toEqual([]);
  expect(packedFiles.filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"))).toEqual([]);
});

it("the LICENSE in the tarball is the Apache License 2.0 that package.json names", async () => {
  const license = await readFile(join(project, "node_modules", "lakewarden", "LICENSE"), "utf8");
  expect(manifest.license).toBe("Apache-2.0");
  expect(license).toMatch(/^\s*Apache License\s+Version 2\.0, January 2004\s+http:\/\/www\.apache\.org\/licenses\//);
  expect(license).toContain("TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION");
  expect(license).toContain("END OF TERMS AND CONDITIONS");
  expect(license).toContain("APPENDIX: How to apply the Apache License to your work.");
});

it("npx lakewarden --version and versions work in a project that installed the tarball", async () => {
  const version = await exec("npx", ["lakewarden", "--version"], { cwd: project });
  expect(version.stdout.trim()).toBe(manifest.version);

  const listed = await exec("npx", ["lakewarden", "versions", dataset.tableUri, "--json"], { cwd: project, maxBuffer: 64 << 20 });
  const records = JSON.parse(listed.stdout) as { version: number }[];
  expect(records.map((r) => r.version)).toEqual(dataset.written.map((w) => w.version));
});

it("the installed binary runs on the system's Node too (Node 20 here)", async (context) => {
  const systemNode = await exec("node", ["--version"], { env: { ...process.env, PATH: systemPath } }).then(
    (r) => r.stdout.trim(),
    () => null,
  );
  if (systemNode === null || systemNode === process.version) context.skip();
  const bin = join(project, "node_modules", "lakewarden", "bin", "lakewarden.js");
  const run = await exec("node", [bin, "versions", dataset.tableUri], { cwd: project, env: { ...process.env, PATH: systemPath } });
  expect(run.stdout).toContain(`${dataset.written.at(-1)!.version}`);
  expect(run.stderr).toBe("");
});

// Issue 22: Iceberg's 64-bit ids were read through the JSON.parse reviver's context.source, which
// Node 20 lacks ('snapshot #0 has no integer "snapshot-id"'), and a zstd head (what the Lambda on
// Node 22 writes) did not decompress on Node 20.
it("the installed package reads an Iceberg table and a zstd head on Node 20 exactly as on Node 22", async (context) => {
  if (node20 === null) context.skip("no Node 20 on PATH: the Node 20 run of the installed package is not checked");
  const node22 = process.execPath;
  const [on22, on20] = await Promise.all([npxWith(node22, ["versions", iceberg.dir, "--json"]), npxWith(node20!, ["versions", iceberg.dir, "--json"])]);
  expect(on20.stderr).toBe("");
  const versions = JSON.parse(on20.stdout) as { id: string }[];
  expect(versions.length).toBe(3);
  expect(on20.stdout).toBe(on22.stdout);

  // Node 22 writes the head with zstd, as the Lambda does; Node 20 loads it from the head, not the metadata.
  const written = await npxWith(node22, ["head", "write", iceberg.dir]);
  expect(written.stdout).toContain("(zstd)");
  const [shown20, shown22] = await Promise.all([npxWith(node20!, ["head", "show", iceberg.dir, "--json"]), npxWith(node22, ["head", "show", iceberg.dir, "--json"])]);
  const head20 = JSON.parse(shown20.stdout) as { source: string; warning: string | null; version: number };
  expect({ source: head20.source, warning: head20.warning, stderr: shown20.stderr }).toEqual({ source: "head", warning: null, stderr: "" });
  expect(head20).toEqual(JSON.parse(shown22.stdout));
});

it("an .mjs file imports the library by its package name", async () => {
  const script = join(project, "check.mjs");
  await writeFile(
    script,
    [
      'import { openTable, readTimeline, openStore, formatByName } from "lakewarden";',
      "const table = await openTable(process.argv[2]);",
      "const state = await table.latest();",
      'const timeline = await readTimeline(openStore(process.argv[2]), formatByName("lance"));',
      "console.log(JSON.stringify({ version: state.version, versions: timeline.records.length }));",
    ].join("\n"),
  );
  const run = await exec(process.execPath, [script, dataset.tableUri], { cwd: project });
  expect(JSON.parse(run.stdout)).toEqual({ version: dataset.written.at(-1)!.version, versions: dataset.written.length });
});

it("the TypeScript example of docs/library.md runs as written against the installed package", async () => {
  const readme = await readFile(join(ROOT, "docs", "library.md"), "utf8");
  const example = /<!-- example: library -->\s*```ts\n([\s\S]*?)```/.exec(readme)?.[1];
  expect(example).toBeDefined();
  await writeFile(join(project, "example.ts"), example!);
  // Node 22 (the `node` package) runs TypeScript by type stripping; the example needs no build.
  const node22 = join(dirname(createRequire(import.meta.url).resolve("node/package.json")), "bin", "node");
  const run = await exec(node22, ["example.ts", dataset.tableUri], { cwd: project });
  const latest = dataset.written.at(-1)!.version;
  expect(run.stdout).toContain(`version ${dataset.written[0]!.version} at `);
  expect(run.stdout).toContain(`latest: version ${latest} from the manifest`);
});
