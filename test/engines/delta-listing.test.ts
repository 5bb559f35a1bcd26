/**
 * Delta versions whose data VACUUM took while log cleanup keeps their commits. Delta's two
 * retentions are independent (deletedFileRetentionDuration 7 days and logRetentionDuration 30
 * by default, and log cleanup cuts off at the start of a day), so such versions are the normal
 * state of a maintained Delta table: Delta lists them in its history, and its readers cannot
 * time-travel to them. `lakewarden versions` lists them as live (not cleaned up), which breaks
 * issue 21's promise that every version lakewarden lists as kept reads back. The first test
 * states that promise (it failed before cleanup marked the versions its VACUUM made unreadable:
 * lib/formats/delta/removal.ts unreadableAfter), and that every version listed cleaned up with
 * its commit kept really is unreadable; the second: the versions cleanup promises to keep
 * readable (the newest --retain-versions, the latest) read back whole.
 */
import { afterAll, describe, expect, it } from "vitest";
import { BufferIO } from "../../lib/cli/io.ts";
import { runCli } from "../../lib/cli/run-cli.ts";
import { makeTempDir, removeDir } from "../support/lance-datasets.ts";
import { deltaTable } from "./engine-tables.ts";
import { runScript } from "./race.ts";

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await removeDir(dir);
});

interface Read {
  version: string | null;
  rows?: number;
  checksum?: string;
  error?: string;
}

async function vacuumedTable(): Promise<{ live: string[]; cleaned: string[]; reads: Map<string, Read>; written: Map<string, { rows: number | null; checksum: string | null }> }> {
  const dir = await makeTempDir("lw-delta-listing-");
  dirs.push(dir);
  const table = deltaTable(dir);
  // create, append, delete, merge, append: every one after the first removes or rewrites a file of the one before.
  const out = JSON.parse(await runScript(table, ["write", table.uri, "--state", `${dir}/state.json`, "--commits", "5"])) as {
    commits: { version: string; rows: number | null; checksum: string | null }[];
  };
  await new Promise((resolve) => setTimeout(resolve, 2500));
  const io = new BufferIO();
  const code = await runCli(
    ["cleanup", table.uri, "--json", "--older-than", "1s", "--allow-short-retention", "--retain-versions", "2", "--safety-window", "2s", "--allow-short-safety-window"],
    io,
  );
  expect(code, io.stderr).toBe(0);
  expect(Object.keys(JSON.parse(io.stdout).files_removed)).toContain("data");
  const listed = new BufferIO();
  expect(await runCli(["versions", table.uri, "--json"], listed)).toBe(0);
  const records = JSON.parse(listed.stdout) as { version_id: string; is_cleaned_up: boolean }[];
  const live = records.filter((r) => !r.is_cleaned_up).map((r) => r.version_id);
  const cleaned = records.filter((r) => r.is_cleaned_up).map((r) => r.version_id);
  const read = JSON.parse(await runScript(table, ["read", table.uri, ...[...live, ...cleaned].flatMap((v) => ["--version", v])])) as { versions: Read[] };
  read.versions.pop(); // the latest, read again
  return { live, cleaned, reads: new Map(read.versions.map((r) => [r.version!, r])), written: new Map(out.commits.map((c) => [c.version, c])) };
}

describe("Delta versions listed live after VACUUM took their data", () => {
  it("every version lakewarden versions lists as live reads back with delta-rs, and the ones VACUUM made unreadable are listed cleaned up", async () => {
    const { live, cleaned, reads } = await vacuumedTable();
    expect(live.length).toBeGreaterThan(2);
    for (const version of live) expect(reads.get(version)?.error, `version ${version}`).toBeUndefined();
    // Their commits are all still in the log (no checkpoint: log cleanup removes none): VACUUM alone made them unreadable.
    expect(cleaned.length).toBeGreaterThan(0);
    for (const version of cleaned) expect(reads.get(version)?.error, `version ${version}`).toBeDefined();
  });

  it("the newest --retain-versions versions read back whole, with the rows delta-rs wrote", async () => {
    const { live, reads, written } = await vacuumedTable();
    for (const version of live.slice(-2)) {
      const read = reads.get(version)!;
      expect(read.error, `version ${version}`).toBeUndefined();
      expect({ rows: read.rows, checksum: read.checksum }).toEqual({ rows: written.get(version)!.rows, checksum: written.get(version)!.checksum });
    }
  });
});
