/**
 * One naming rule for every JSON document lakewarden prints or stores: keys are snake_case,
 * recursively. The only exception is a map of user data, whose keys are what the user wrote:
 * a table's config (`config`) and a commit's transaction properties (`transaction_properties`).
 * Checked on every `--json` output, every `serve --json` event and the cleanup receipts.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { readFile, readdir } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { BufferIO } from "../../lib/cli/io.ts";
import { runCli } from "../../lib/cli/run-cli.ts";
import { buildLanceDataset, makeTempDir, removeDir, type LanceDataset } from "../support/lance-datasets.ts";
import { BIN, lastLine } from "./run-executable.ts";

const SNAKE_CASE = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/;
const USER_DATA = new Set(["config", "transaction_properties"]);

/** Every key that breaks the rule, with its path. */
function badKeys(value: unknown, path = "$"): string[] {
  if (Array.isArray(value)) return value.flatMap((item, i) => badKeys(item, `${path}[${i}]`));
  if (value === null || typeof value !== "object") return [];
  return Object.entries(value).flatMap(([key, inner]) => [...(SNAKE_CASE.test(key) ? [] : [`${path}.${key}`]), ...(USER_DATA.has(key) ? [] : badKeys(inner, `${path}.${key}`))]);
}

let dir: string;
let dataset: LanceDataset;

beforeAll(async () => {
  dir = await makeTempDir("lw-json-naming-");
  dataset = await buildLanceDataset({
    dbUri: join(dir, "lake"),
    steps: [
      { op: "create", rows: 10 },
      { op: "append", rows: 5 },
      { op: "delete", where: "id % 3 = 0" },
      { op: "tag", name: "kept" },
      { op: "append", rows: 5 },
    ],
  });
});
afterAll(async () => {
  dataset?.close();
  await removeDir(dir);
});

async function json(...argv: string[]): Promise<unknown> {
  const io = new BufferIO();
  const code = await runCli([...argv, "--json"], io);
  expect(code, `${argv.join(" ")}: ${io.stderr}`).toBe(0);
  return JSON.parse(io.stdout);
}

it("the rule itself catches camelCase, PascalCase and kebab-case keys, and skips user data", () => {
  expect(badKeys({ a_b: { cleanedUpRows: 1 }, list: [{ "Kebab-key": 1, ok: 2 }] })).toEqual(["$.a_b.cleanedUpRows", "$.list[0].Kebab-key"]);
  expect(badKeys({ config: { "lakewarden.older_than": "7d", myKey: "x" }, transaction_properties: { "writer.id": "1" } })).toEqual([]);
});

it("every --json output and every receipt uses snake_case keys", async () => {
  const table = dataset.tableUri;
  const documents: Record<string, unknown> = {
    "versions": await json("versions", table),
    "head write": await json("head", "write", table),
    "head show": await json("head", "show", table),
    "checkpoint": await json("checkpoint", table),
    "version-at": await json("version-at", table, "now"),
    "config set": await json("config", "set", table, "safety_window=7d"),
    "config show": await json("config", "show", table),
    "lease show (none)": await json("lease", "show", table),
    "cleanup --dry-run": await json("cleanup", table, "--older-than", "0s", "--allow-short-retention", "--dry-run"),
    "cleanup": await json("cleanup", table, "--older-than", "0s", "--allow-short-retention"),
    "lease show": await json("lease", "show", table),
    "lease break": await json("lease", "break", table),
    "config unset": await json("config", "unset", table, "safety_window"),
  };
  const runs = join(table, "_lakewarden", "runs");
  const receipts = (await readdir(runs)).filter((name) => name.endsWith(".json"));
  expect(receipts.length).toBeGreaterThan(0);
  for (const name of receipts) documents[`receipt ${name}`] = JSON.parse(await readFile(join(runs, name), "utf8"));

  // The documents hold the nested objects that once were camelCase.
  expect(documents.cleanup).toMatchObject({ reference_check: { missing_before_run: [] }, checkpoint: { cleaned_up_rows: expect.any(Number) } });
  for (const [what, document] of Object.entries(documents)) expect(badKeys(document), what).toEqual([]);
});

it("every serve --json event uses snake_case keys", async () => {
  const child = spawn(
    process.execPath,
    [BIN, "serve", join(dir, "lake"), "--json", "--cleanup-every", "1s", "--older-than", "0s", "--allow-short-retention", "--poll-interval", "200ms"],
    {
      env: { ...process.env, NO_COLOR: "1" },
    },
  );
  let stdout = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  const deadline = Date.now() + 60_000;
  while (!/"type":"cleanup"/.test(stdout) && Date.now() < deadline && child.exitCode === null) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  child.kill("SIGINT");
  await once(child, "exit");
  const events = stdout
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as { type: string });
  expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(["started", "cleanup", "stopped"]));
  for (const event of events) expect(badKeys(event), event.type).toEqual([]);
});

it("--stats is the last line of stderr, after a warning and after an error", async () => {
  // A head for an older version: head show warns that it is stale, then the stats line.
  await dataset.apply([{ op: "append", rows: 1 }]);
  const io = new BufferIO();
  expect(await runCli(["head", "show", dataset.tableUri, "--stats"], io)).toBe(0);
  expect(io.stderr).toMatch(/^lakewarden: warning: /);
  expect(Object.keys(JSON.parse(lastLine(io.stderr)))).toEqual(["requests"]);

  const failed = new BufferIO();
  expect(await runCli(["versions", join(dir, "missing"), "--stats"], failed)).toBe(1);
  expect(failed.stderr.split("\n")[0]).toMatch(/^lakewarden: .*missing: no such directory$/);
  expect(Object.keys(JSON.parse(lastLine(failed.stderr)))).toEqual(["requests"]);
});
