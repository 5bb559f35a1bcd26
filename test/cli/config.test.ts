/**
 * `lakewarden config set|show|unset`: per-table cleanup settings stored in
 * `_lakewarden/config` (never inside the format's folders), read by cleanup below its flags and
 * the environment (lib/maintenance/policy.ts), with a warning when a flag overrides one.
 */
import { readFile, readdir } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { BufferIO } from "../../lib/cli/io.ts";
import { runCli } from "../../lib/cli/run-cli.ts";
import { buildLanceDataset, makeTempDir, removeDir, type LanceDataset } from "../support/lance-datasets.ts";

let dir: string;
let dataset: LanceDataset;

beforeAll(async () => {
  dir = await makeTempDir("lw-config-");
  dataset = await buildLanceDataset({
    dbUri: dir,
    steps: [
      { op: "create", rows: 10 },
      { op: "append", rows: 5 },
      { op: "append", rows: 5 },
    ],
  });
});
afterAll(async () => {
  dataset?.close();
  await removeDir(dir);
});

async function cli(...argv: string[]) {
  const io = new BufferIO();
  const code = await runCli(argv, io);
  return { code, stdout: io.stdout, stderr: io.stderr };
}

it("config set stores settings under _lakewarden/config only; cleanup uses them, and a flag overrides them with a warning", async () => {
  const versionsBefore = await readdir(join(dataset.tableUri, "_versions"));
  const set = await cli("config", "set", dataset.tableUri, "older_than=30d", "lakewarden.retain_versions=3");
  expect(set.code, set.stderr).toBe(0);
  expect(set.stdout).toMatch(/lakewarden\.older_than +30d +lakewarden config/);
  expect(set.stdout).toMatch(/lakewarden\.safety_window +7d +default/);
  expect(JSON.parse(await readFile(join(dataset.tableUri, "_lakewarden", "config"), "utf8"))).toEqual({
    "lakewarden.older_than": "30d",
    "lakewarden.retain_versions": "3",
  });
  expect(await readdir(join(dataset.tableUri, "_versions"))).toEqual(versionsBefore);

  const shown = JSON.parse((await cli("config", "show", dataset.tableUri, "--json")).stdout);
  expect(shown.config).toEqual({ "lakewarden.older_than": "30d", "lakewarden.retain_versions": "3" });
  expect(shown.settings).toContainEqual({
    key: "lakewarden.retain_versions",
    value: 3,
    source: "lakewarden config lakewarden.retain_versions",
    table_config: null,
    lakewarden_config: "3",
  });

  const stored = JSON.parse((await cli("cleanup", dataset.tableUri, "--dry-run", "--json")).stdout);
  expect(stored.policy.older_than).toEqual({ value: "30d", source: "lakewarden config lakewarden.older_than" });
  expect(stored.policy.retain_versions).toEqual({ value: 3, source: "lakewarden config lakewarden.retain_versions" });
  expect(stored.versions_removed).toEqual([]);

  const flagged = await cli("cleanup", dataset.tableUri, "--older-than", "0s", "--allow-short-retention", "--retain-versions", "1", "--dry-run", "--json");
  const dry = JSON.parse(flagged.stdout);
  expect(dry.policy.older_than).toEqual({ value: "0s", source: "option" });
  expect(dry.policy.retain_versions).toEqual({ value: 1, source: "option" });
  expect(flagged.stderr).toContain('lakewarden: warning: --older-than 0s overrides lakewarden config lakewarden.older_than = "30d"\n');
  expect(flagged.stderr).toContain('lakewarden: warning: --retain-versions 1 overrides lakewarden config lakewarden.retain_versions = "3"\n');

  const unset = await cli("config", "unset", dataset.tableUri, "older_than", "retain_versions");
  expect(unset.code).toBe(0);
  const after = JSON.parse((await cli("cleanup", dataset.tableUri, "--older-than", "0s", "--allow-short-retention", "--dry-run", "--json")).stdout);
  expect(after.policy.older_than).toEqual({ value: "0s", source: "option" });
  expect(after.versions_removed.length).toBeGreaterThan(0);
});

it("config set refuses unknown keys and bad values in one line, exit 2, writing nothing", async () => {
  const unknown = await cli("config", "set", dataset.tableUri, "colour=blue");
  expect(unknown.code).toBe(2);
  expect(unknown.stderr).toMatch(/^lakewarden: "colour" is not a setting lakewarden config stores \(known: lakewarden\.older_than, /);
  const bad = await cli("config", "set", dataset.tableUri, "older_than=soon");
  expect(bad.code).toBe(2);
  expect(bad.stderr).toBe('lakewarden: lakewarden.older_than = "soon" is not a duration (e.g. 7d, 12h, 30m, 0s)\n');
  const notPair = await cli("config", "set", dataset.tableUri, "older_than");
  expect(notPair.code).toBe(2);
});
