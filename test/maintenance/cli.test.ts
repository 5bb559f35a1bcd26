/**
 * `lakewarden cleanup`, `checkpoint` and `version-at` in-process (runCli + BufferIO) on real
 * LanceDB tables: the JSON report, the plain-text plan, history protection, the lease message,
 * and `versions` before and after.
 */
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import * as lancedb from "@lancedb/lancedb";
import { BufferIO } from "../../lib/cli/io.ts";
import { runCli } from "../../lib/cli/run-cli.ts";
import { runCleanup } from "../../lib/maintenance/run-cleanup.ts";
import { LEASE_KEY } from "../../lib/maintenance/lease.ts";
import type { CleanupReport } from "../../lib/maintenance/cleanup-report.ts";
import { FaultInjectingStore } from "../support/fault-injecting-store.ts";
import { LocalStore } from "../../lib/store/local-store.ts";
import type { VersionRecord } from "../../lib/model/version-record.ts";
import { buildLanceDataset, makeTempDir, removeDir, type DatasetStep } from "../support/lance-datasets.ts";
import { compareContents, listTree, readContents } from "./lance-checks.ts";

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await removeDir(dir);
});

async function table(steps: readonly DatasetStep[]) {
  const dbUri = await makeTempDir("lw-cli-");
  dirs.push(dbUri);
  const ds = await buildLanceDataset({ dbUri, steps });
  ds.close();
  await new Promise((resolve) => setTimeout(resolve, 20));
  return { dbUri, tableUri: ds.tableUri };
}

async function cli(...argv: string[]) {
  const io = new BufferIO();
  const code = await runCli(argv, io);
  return { code, stdout: io.stdout, stderr: io.stderr };
}

const HISTORY: readonly DatasetStep[] = [
  { op: "create", rows: 10 },
  { op: "append", rows: 5 },
  { op: "tag", name: "v2" },
  { op: "overwrite", rows: 8 },
  { op: "append", rows: 4 },
  { op: "overwrite", rows: 6 },
];

describe("lakewarden cleanup", () => {
  it("--json --stats: versions removed, files and bytes by kind, the checkpoint written; versions after equals before", async () => {
    const { dbUri, tableUri } = await table(HISTORY);
    const before = await readContents(dbUri);
    const versionsBefore = JSON.parse((await cli("versions", tableUri, "--json")).stdout) as VersionRecord[];

    const run = await cli("cleanup", tableUri, "--older-than", "0s", "--allow-short-retention", "--json", "--stats");
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as CleanupReport;
    expect(report).toMatchObject({
      status: "completed",
      versions_removed: [1, 3, 4],
      tagged_old_versions: [{ version: 2, tags: ["v2"] }],
      checkpoint: { status: "written", version: 5, rows: 5, cleaned_up_rows: 3 },
      checkpoints_pruned: [],
    });
    expect(report.files_removed.commit).toEqual({ files: 3, bytes: expect.any(Number) });
    expect(report.files_removed.data!.files).toBeGreaterThan(0);
    expect(report.bytes_removed).toBe(Object.values(report.files_removed).reduce((n, t) => n + t!.bytes, 0));
    expect(report.policy!.older_than).toEqual({ value: "0s", source: "option" });
    const stats = JSON.parse(run.stderr.trim().split("\n").at(-1)!);
    expect(stats.requests.delete).toBeGreaterThan(0);

    expect(compareContents(before, await readContents(dbUri))).toEqual([]);
    const versionsAfter = JSON.parse((await cli("versions", tableUri, "--json")).stdout) as VersionRecord[];
    expect(versionsAfter.map((r) => ({ ...r, is_cleaned_up: false }))).toEqual(versionsBefore);
    expect(versionsAfter.filter((r) => r.is_cleaned_up).map((r) => r.version)).toEqual([1, 3, 4]);

    // A second run prunes nothing new but keeps two checkpoints at most.
    const again = JSON.parse((await cli("cleanup", tableUri, "--older-than", "0s", "--allow-short-retention", "--json")).stdout) as CleanupReport;
    expect(again.versions_removed).toEqual([]);
    expect(again.checkpoint!.status).toBe("unchanged");
  });

  it("--dry-run prints every version and every file with its reason and size, and changes nothing", async () => {
    const { tableUri } = await table(HISTORY);
    const files = await listTree(tableUri);
    const run = await cli("cleanup", tableUri, "--older-than", "0s", "--allow-short-retention", "--dry-run");
    expect(run.code).toBe(0);
    expect(await listTree(tableUri)).toEqual(files);
    expect(run.stdout).toMatch(/^DRY RUN of cleanup on file:\/\/.*: nothing was deleted or written$/m);
    expect(run.stdout).toMatch(/versions to remove: 1, 3-4 \(3\); kept: 2/);
    expect(run.stdout).toMatch(/^ {2}2 .* keep +tagged "v2"$/m);
    expect(run.stdout).toMatch(/^ {2}delete +commit +\d+(\.\d)? (B|KiB) +_versions\/\d{20}\.manifest +version 1 removed: committed \d{4}-\d\d-\d\dT[\d:.]+Z \(older than 0s\)/m);
    expect(run.stdout).toMatch(/^ {2}delete +data .* named only by removed version/m);
    const json = JSON.parse((await cli("cleanup", tableUri, "--older-than", "0s", "--allow-short-retention", "--dry-run", "--json")).stdout) as CleanupReport;
    const deleteLines = run.stdout.split("\n").filter((line) => /^ {2}delete /.test(line));
    expect(deleteLines).toHaveLength(json.files.filter((f) => f.action === "delete").length);
  });

  it("history protection: a run that would cut below P part way keeps all of it; one that removes all succeeds", async () => {
    const { dbUri, tableUri } = await table(HISTORY);
    // The tag on version 2 keeps it: history below 4 would be cut part way (1 and 3 only).
    const partial = JSON.parse((await cli("cleanup", tableUri, "--older-than", "0s", "--allow-short-retention", "--protect-before", "4", "--json")).stdout) as CleanupReport;
    // Versions at or above P follow the policy as usual.
    expect(partial.versions_removed).toEqual([4]);
    expect(partial.protection).toMatchObject({ boundary: 4, result: "kept-all", below: [1, 2, 3] });
    expect(partial.protection!.reason).toMatch(/only 2 of the 3 versions below 4 are due, so all of them are kept \(still needed: 2: tagged "v2"\)/);
    const text = await cli("cleanup", tableUri, "--older-than", "0s", "--allow-short-retention", "--protect-before", "4", "--dry-run");
    expect(text.stdout).toMatch(/history protection before 4: kept-all: only 2 of the 3/);

    const db = await lancedb.connect(dbUri);
    const t = await db.openTable("t");
    await (await t.tags()).delete("v2");
    t.close();
    db.close();
    const all = JSON.parse((await cli("cleanup", tableUri, "--older-than", "0s", "--allow-short-retention", "--protect-before", "4", "--json")).stdout) as CleanupReport;
    expect(all.versions_removed).toEqual([1, 2, 3]);
    expect(all.protection).toMatchObject({ result: "removed-all", below: [1, 2, 3] });
  });

  it("a second cleanup while one runs stops with a clear message about the lease", async () => {
    const { tableUri } = await table(HISTORY);
    const slow = new FaultInjectingStore(new LocalStore(tableUri), { latencyMs: { delete: 200 } });
    const first = runCleanup(slow, { settings: { olderThanMs: 0 } });
    const probe = new LocalStore(tableUri);
    for (
      let i = 0;
      i < 200 &&
      !(await probe.head(LEASE_KEY).then(
        () => true,
        () => false,
      ));
      i++
    ) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const second = await cli("cleanup", tableUri, "--older-than", "0s", "--allow-short-retention");
    expect(second.code).toBe(3);
    expect(second.stdout).toBe("");
    expect(second.stderr).toMatch(
      /^lakewarden: file:\/\/.*\/_lakewarden\/lease: another cleanup holds this table's lease \(run .* until .*\); this run stops without touching the table\n$/,
    );
    expect((await first).status).toBe("completed");
  });

  it("bad flags and bad table config are one line each", async () => {
    const { tableUri } = await table(HISTORY);
    const bad = await cli("cleanup", tableUri, "--older-than", "soon");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe('lakewarden: --older-than = "soon" is not a duration (e.g. 7d, 12h, 30m, 0s)\n');
    const badN = await cli("cleanup", tableUri, "--retain-versions", "0");
    expect(badN.code).toBe(2);
    expect(badN.stderr).toBe('lakewarden: --retain-versions = "0" is not allowed: the latest version is always kept, so the fewest versions kept is 1\n');
    const badServe = await cli("serve", tableUri, "--poll-interval", "soon");
    expect(badServe.code).toBe(2);
    expect(badServe.stderr).toBe('lakewarden: --poll-interval = "soon" is not a duration (e.g. 7d, 12h, 30m, 0s)\n');
    const short = await cli("cleanup", tableUri, "--older-than", "1h");
    expect(short.code).toBe(2);
    expect(short.stderr).toBe(
      "lakewarden: --older-than 1h is below 7 days: a version removed while a query or a commit still reads it breaks that reader or writer; " +
        "add --allow-short-retention if nothing runs longer than 1h\n",
    );
    const missing = await cli("cleanup", join(tableUri, "nope"));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^lakewarden: file:\/\/.*nope: no such directory\n$/);
  });
});

describe("lakewarden checkpoint and version-at", () => {
  it("checkpoint archives without deleting; version-at answers from the timeline, removed versions included", async () => {
    const { tableUri } = await table(HISTORY);
    const files = await listTree(tableUri);
    const cp = await cli("checkpoint", tableUri, "--json");
    expect(cp.code).toBe(0);
    expect(JSON.parse(cp.stdout)).toMatchObject({ checkpoint: { status: "written", version: 5, rows: 5, cleaned_up_rows: 0 }, manifests_read: 5 });
    expect((await listTree(tableUri)).filter((f) => !files.includes(f))).toEqual(["_lakewarden/checkpoints/00000000000000000005.arrow"]);
    expect(JSON.parse((await cli("checkpoint", tableUri, "--json")).stdout).checkpoint.status).toBe("unchanged");

    const versions = JSON.parse((await cli("versions", tableUri, "--json")).stdout) as VersionRecord[];
    await cli("cleanup", tableUri, "--older-than", "0s", "--allow-short-retention");
    const v3 = versions.find((r) => r.version === 3)!;
    const at = await cli("version-at", tableUri, new Date(v3.timestamp_millis).toISOString(), "--json");
    expect(at.code).toBe(0);
    expect(JSON.parse(at.stdout)).toMatchObject({ version: 3, is_cleaned_up: true, current_from_millis: v3.timestamp_millis });
    const text = await cli("version-at", tableUri, String(v3.timestamp_millis));
    expect(text.stdout).toMatch(/^version 3 was current at .*\nit has been cleaned up/);
    const latest = await cli("version-at", tableUri, "2999-01-01");
    expect(latest.stdout).toMatch(/^2999-01-01T00:00:00.000Z is in the future \(now is .*\): this is the answer as of now, and later commits may change it\n/);
    expect(latest.stdout).toMatch(/\nversion 5 was current at 2999-01-01T00:00:00.000Z \(from .*, still the latest\)/);
    expect(JSON.parse((await cli("version-at", tableUri, "2999-01-01", "--json")).stdout)).toMatchObject({ version: 5, is_future: true });
    const now = await cli("version-at", tableUri, "now", "--json");
    expect(JSON.parse(now.stdout)).toMatchObject({ version: 5, is_future: false, current_until_millis: null });
    const early = await cli("version-at", tableUri, "2000-01-01T00:00:00Z");
    expect(early.code).toBe(1);
    expect(early.stderr).toMatch(/^lakewarden: file:\/\/.*: no version was current at 2000-01-01T00:00:00.000Z: the earliest known, version 1, is from /);
    const notTime = await cli("version-at", tableUri, "yesterday");
    expect(notTime.stderr).toBe('lakewarden: not a time: "yesterday" (use now, ISO 8601 like 2026-11-29T14:55:00Z, or Unix milliseconds)\n');
    expect(notTime.code).toBe(2);
  });
});

describe("lakewarden cleanup budget and pacing flags", () => {
  it("--max-delete-rate is reported in delete_rate; --max-duration bounds the run and its budget is reported; bad values are usage errors", async () => {
    const { dbUri, tableUri } = await table(HISTORY);
    const before = await readContents(dbUri);
    const run = await cli("cleanup", tableUri, "--older-than", "0s", "--allow-short-retention", "--max-delete-rate", "500", "--max-duration", "10m", "--json");
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as CleanupReport;
    expect(report.status).toBe("completed");
    expect(report.delete_rate).toMatchObject({ max_per_second: 500, throttled_requests: 0 });
    expect(report.delete_rate!.keys_deleted).toBeGreaterThan(0);
    expect(report.budget).toMatchObject({ max_duration_ms: 600_000, run_in_chain: 1, resumed: false, progress_saved: null });
    expect(compareContents(before, await readContents(dbUri))).toEqual([]);

    for (const args of [
      ["--max-delete-rate", "0"],
      ["--max-delete-rate", "fast"],
      ["--max-duration", "0s"],
      ["--max-duration", "soon"],
    ]) {
      const bad = await cli("cleanup", tableUri, ...args);
      expect(bad.code, args.join(" ")).toBe(2);
      expect(bad.stderr).toMatch(new RegExp(`^lakewarden: ${args[0]} = `));
    }
    const help = await cli("cleanup", "--help");
    expect(help.stdout).toContain("--verify-data");
    expect(help.stdout).toContain("--max-duration <duration>");
    expect(help.stdout).toContain("--max-delete-rate <keys-per-second>");
  });
});

describe("lakewarden cleanup --verify-data", () => {
  it("reads the data files only kept versions need, which the default proof proves by their recorded sizes", async () => {
    const { tableUri } = await table(HISTORY);
    const proofOf = async (...flags: string[]) => {
      const run = await cli("cleanup", tableUri, "--older-than", "0s", "--allow-short-retention", "--dry-run", "--json", ...flags);
      expect(run.code, run.stderr).toBe(0);
      return (JSON.parse(run.stdout) as CleanupReport).proof!;
    };
    const standard = await proofOf();
    const deep = await proofOf("--verify-data");
    expect(standard.content_skipped).toBeNull();
    expect(standard.files_proven_by_size).toBeGreaterThan(0);
    expect(deep.files_proven_by_size).toBe(0);
    expect(deep.files_read).toBe(standard.files_read + standard.files_proven_by_size);
  });
});
