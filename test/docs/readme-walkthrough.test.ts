/**
 * The README's walk-through, run as written: the shell block after `<!-- walk-through: local -->`
 * is extracted from README.md and run by bash in a temp folder, with `T` pointing at a copy of a
 * Delta table written by Spark (its files made old, so cleanup has work to do) and `npx
 * lakewarden` answering from this clone (a shim on PATH: in a folder outside the clone, npx would
 * look for the package on the registry). Every command must succeed, and what the block promises
 * must hold: the plan is printed before anything is deleted, cleanup removes old versions, the
 * removed versions are still listed afterwards, and the report is written.
 */
import { chmod, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, it, onTestFinished } from "vitest";
import { BIN, runProcess, type ExecutableResult } from "../cli/run-executable.ts";
import { copyFixture } from "../support/fixtures.ts";
import { setAllTimes } from "../formats/delta/log-surgery.ts";

const README = fileURLToPath(new URL("../../README.md", import.meta.url));

function walkThrough(readme: string): string {
  const block = /<!-- walk-through: local -->\s*```sh\n([\s\S]*?)```/.exec(readme)?.[1];
  if (!block) throw new Error("README.md has no shell block after <!-- walk-through: local -->");
  return block;
}

function bash(script: string, cwd: string, env: Record<string, string>): Promise<ExecutableResult> {
  return runProcess("bash", ["-e", "-o", "pipefail", "-c", script], { cwd, env });
}

it("the README's local walk-through runs as written on a Delta table", async () => {
  const block = walkThrough(await readFile(README, "utf8"));
  const commands = block.split("\n").filter((line) => line.trim() !== "" && !line.trim().startsWith("#"));
  expect(commands.length).toBeGreaterThanOrEqual(5);
  expect(commands.every((line) => line.startsWith("npx lakewarden "))).toBe(true);

  const work = await mkdtemp(join(tmpdir(), "lw-walkthrough-"));
  onTestFinished(() => rm(work, { recursive: true, force: true }));
  const shims = join(work, ".bin");
  await import("node:fs/promises").then((fs) => fs.mkdir(shims));
  await writeFile(join(shims, "npx"), `#!/bin/sh\n[ "$1" = lakewarden ] || { echo "npx $1: not in this test" >&2; exit 127; }\nshift\nexec "${process.execPath}" "${BIN}" "$@"\n`);
  await chmod(join(shims, "npx"), 0o755);

  const table = await copyFixture("delta", "basic-dv-with-checkpoint");
  await setAllTimes(table, new Date("2025-01-01T00:00:00Z"));
  const run = await bash(block, work, { T: table, PATH: `${shims}:${process.env.PATH}` });
  expect(
    run.stderr.split("\n").filter((line) => line.includes("lakewarden:") && !line.includes("warning")),
    run.stderr,
  ).toEqual([]);
  expect(run.code, run.stderr).toBe(0);

  // The summary and the file-by-file plan come before the real run, which removes versions.
  const dryRun = run.stdout.indexOf("DRY RUN of cleanup");
  const realRun = run.stdout.indexOf(`cleanup of file://${table}`);
  expect(dryRun).toBeGreaterThan(-1);
  expect(realRun).toBeGreaterThan(dryRun);
  expect(run.stdout).toContain("files by reason (");
  expect(run.stdout.slice(realRun)).toMatch(/versions removed: 0-\d+ \(\d+\)/);
  expect(run.stdout).toContain("cleaned-up");
  expect((await stat(join(work, "report.html"))).size).toBeGreaterThan(1000);
}, 120_000);
