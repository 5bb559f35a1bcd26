/**
 * The package as a user gets it: `npm pack` (which builds dist/ through `prepack`), then
 * `npm install` of the tarball into an empty project. The installed `lakewarden` binary and
 * `import "lakewarden"` must work there, with no TypeScript and no source checkout around:
 * on the Node 22 running the tests and, when there is one on PATH, on another Node (the
 * system's Node 20 here). The README's TypeScript example runs against the installed package.
 */
import { execFile } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { delimiter, dirname, join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, it } from "vitest";
import { buildLanceDataset, makeTempDir, removeDir, type LanceDataset } from "../support/lance-datasets.ts";

const exec = promisify(execFile);
const ROOT = new URL("../..", import.meta.url).pathname;
const manifest = JSON.parse(await readFile(join(ROOT, "package.json"), "utf8")) as { version: string };

let dir: string;
let project: string;
let dataset: LanceDataset;
let packedFiles: string[];

/** PATH without any node_modules/.bin, so `node` there is the system's, not the `node` package's. */
const systemPath = (process.env.PATH ?? "").split(delimiter).filter((p) => !p.includes("node_modules")).join(delimiter);

beforeAll(async () => {
  dir = await makeTempDir("lw-pack-");
  project = join(dir, "project");
  dataset = await buildLanceDataset({ dbUri: join(dir, "lake") });

  const packed = await exec("npm", ["pack", "--json", "--pack-destination", dir], { cwd: ROOT, maxBuffer: 64 << 20 });
  const [info] = JSON.parse(packed.stdout) as [{ filename: string; files: { path: string }[] }];
  packedFiles = info.files.map((f) => f.path);

  await exec("mkdir", ["-p", project]);
  await writeFile(join(project, "package.json"), `${JSON.stringify({ name: "probe", version: "1.0.0", private: true, type: "module" })}\n`);
  await exec("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", join(dir, info.filename)], { cwd: project, maxBuffer: 64 << 20 });
}, 600_000);

afterAll(async () => {
  dataset?.close();
  await removeDir(dir);
});

it("packs compiled JavaScript with type declarations, and no tests, benchmarks or TypeScript sources", () => {
  expect(packedFiles).toContain("dist/index.js");
  expect(packedFiles).toContain("dist/index.d.ts");
  expect(packedFiles).toContain("dist/cli/main.js");
  expect(packedFiles).toContain("bin/lakewarden.js");
  expect(packedFiles.filter((f) => /^(test|bench|lib|functions|infra)\//.test(f))).toEqual([]);
  expect(packedFiles.filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"))).toEqual([]);
});

it("npx lakewarden --version and versions work in a project that installed the tarball", async () => {
  const version = await exec("npx", ["lakewarden", "--version"], { cwd: project });
  expect(version.stdout.trim()).toBe(manifest.version);

  const listed = await exec("npx", ["lakewarden", "versions", dataset.tableUri, "--json"], { cwd: project, maxBuffer: 64 << 20 });
  const records = JSON.parse(listed.stdout) as { version: number }[];
  expect(records.map((r) => r.version)).toEqual(dataset.written.map((w) => w.version));
});

it("the installed binary runs on the system's Node too (Node 20 here)", async (context) => {
  const systemNode = await exec("node", ["--version"], { env: { ...process.env, PATH: systemPath } }).then((r) => r.stdout.trim(), () => null);
  if (systemNode === null || systemNode === process.version) context.skip();
  const bin = join(project, "node_modules", "lakewarden", "bin", "lakewarden.js");
  const run = await exec("node", [bin, "versions", dataset.tableUri], { cwd: project, env: { ...process.env, PATH: systemPath } });
  expect(run.stdout).toContain(`${dataset.written.at(-1)!.version}`);
  expect(run.stderr).toBe("");
});

it("an .mjs file imports the library by its package name", async () => {
  const script = join(project, "check.mjs");
  await writeFile(
    script,
    [
      'import { openTable, readTimeline, openStore, formatByName } from "lakewarden";',
      "const table = await openTable(process.argv[2]);",
      "const state = await table.latest();",
      "const timeline = await readTimeline(openStore(process.argv[2]), formatByName(\"lance\"));",
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
