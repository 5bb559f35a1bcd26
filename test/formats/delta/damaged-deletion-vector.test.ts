/**
 * A deletion vector of the latest version that is damaged (zero length, truncated, random bytes,
 * or gone) makes that version read other rows than its writer meant; cleanup would then VACUUM
 * the older deletion vectors and log that still describe the table's rows. It is refused in one
 * line naming the file, the dry run alike, and nothing is deleted. The damaged file is found from
 * the log by an independent reader (DuckDB), on a copy made at test time.
 */
import { randomBytes } from "node:crypto";
import { rm, stat, truncate, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BufferIO } from "../../../lib/cli/io.ts";
import { runCli } from "../../../lib/cli/run-cli.ts";
import { copyFixture } from "../../support/fixtures.ts";
import { oracleLiveFiles } from "./duckdb-oracle.ts";
import { listKeys, setAllTimes } from "./log-surgery.ts";
import { dvKeysOf } from "./vacuum-rules.ts";

const DAY = 86_400_000;

async function cli(...argv: string[]) {
  const io = new BufferIO();
  const code = await runCli(argv, io);
  return { code, stdout: io.stdout, stderr: io.stderr };
}

const DAMAGES = ["missing", "zero length", "truncated", "random bytes"] as const;

describe("Delta cleanup: a damaged deletion vector of the latest version", () => {
  it.each(DAMAGES)("%s: refused in one line naming it, the dry run alike, nothing deleted", async (damage) => {
    const dir = await copyFixture("delta", "basic-dv-with-checkpoint");
    const dv = dvKeysOf((await oracleLiveFiles(dir)).files.map((f) => f.dvId))[0]!;
    const path = join(dir, dv);
    const { size } = await stat(path);
    if (damage === "missing") await rm(path);
    else if (damage === "zero length") await truncate(path, 0);
    else if (damage === "truncated") await truncate(path, Math.floor(size / 2));
    else await writeFile(path, randomBytes(size));
    await setAllTimes(dir, new Date(Date.now() - 400 * DAY));
    const before = await listKeys(dir);

    for (const argv of [["--dry-run"], []]) {
      const run = await cli("cleanup", dir, ...argv);
      expect(run.code).not.toBe(0);
      expect(run.stderr.trim().split("\n")).toHaveLength(1);
      expect(run.stderr).toContain(`"${dv}"`);
      expect(run.stderr).toMatch(/nothing deleted/);
    }
    expect((await listKeys(dir)).filter((k) => !k.startsWith("_lakewarden/"))).toEqual(before);
  });
});
