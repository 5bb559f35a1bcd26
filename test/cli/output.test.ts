/**
 * Output a person can read and a pipe can cut short: `| head` ends quietly (no EPIPE stack
 * trace), counts take the right number (`1 footer`, `2 versions`, no `file(s)`), actions are
 * words (`already current`, not `skipped-same-version:`; a first checkpoint is `written`, not
 * `replaced`), `cleanup --summary` gives totals by reason that add up to the plan, and every
 * description `--help` prints is one short line.
 */
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Command } from "commander";
import { describe, expect, it, onTestFinished } from "vitest";
import { BufferIO } from "../../lib/cli/io.ts";
import { buildProgram } from "../../lib/cli/program.ts";
import { runCli } from "../../lib/cli/run-cli.ts";
import { reasonGroup } from "../../lib/cli/commands/cleanup-summary.ts";
import type { CleanupReport } from "../../lib/maintenance/cleanup-report.ts";
import { copyFixture } from "../support/fixtures.ts";
import { setAllTimes } from "../formats/delta/log-surgery.ts";
import { BIN } from "./run-executable.ts";

async function cli(...argv: string[]) {
  const io = new BufferIO();
  const code = await runCli(argv, io);
  return { code, stdout: io.stdout, stderr: io.stderr };
}

/** Runs the real executable with stdout into a pipe whose reader has already gone (`| true`). */
async function intoClosedPipe(args: readonly string[]): Promise<{ code: number; stderr: string }> {
  const dir = await mkdtemp(join(tmpdir(), "lw-epipe-"));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  const errFile = join(dir, "stderr");
  const quoted = [process.execPath, BIN, ...args].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" ");
  // `true` exits at once without reading, so every write finds the pipe closed; PIPESTATUS is lakewarden's status.
  const script = `${quoted} 2>'${errFile}' | true; exit \${PIPESTATUS[0]}`;
  const code = await new Promise<number>((resolve, reject) => {
    const child = spawn("bash", ["-c", script], { stdio: "ignore" });
    child.on("error", reject);
    child.on("close", (status) => resolve(status ?? -1));
  });
  return { code, stderr: await readFile(errFile, "utf8") };
}

/** Every command below the program, with its path (`head write`). */
function commands(program: Command, path = ""): { path: string; command: Command }[] {
  return program.commands.flatMap((command) => {
    const name = `${path} ${command.name()}`.trim();
    return [{ path: name, command }, ...commands(command, name)];
  });
}

describe("a closed pipe", () => {
  it.each([[["--help"]], [["cleanup", "--help"]]])("lakewarden %s | true: no stack trace, exit 0", async (args) => {
    const run = await intoClosedPipe(args);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
  });

  it("lakewarden versions T --json | true on a Delta table: no stack trace, exit 0", async () => {
    const dir = await copyFixture("delta", "basic-dv-with-checkpoint");
    const run = await intoClosedPipe(["versions", dir, "--json"]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
  });
});

describe("words", () => {
  it("head write: one footer, a count of versions, and what it did in words", async () => {
    const dir = await copyFixture("delta", "table_with_deletion_logs");
    const first = await cli("head", "write", dir);
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/^head for version 20: created \(stored head before: none\)\n/);
    expect(first.stdout).toContain("; 1 footer inlined, 0 left out; 21 versions since the checkpoint");
    const again = await cli("head", "write", dir);
    expect(again.stdout).toBe("head for version 20: already current, nothing written (stored head before: version 20)\n");
    expect(again.stdout).not.toContain("skipped-same-version");
  });

  it("a table's first cleanup reports its checkpoint as written (text and JSON), never replaced", async () => {
    const dir = await copyFixture("delta", "basic-dv-with-checkpoint");
    await setAllTimes(dir, new Date("2025-01-01T00:00:00Z"));
    const text = await cli("cleanup", dir, "--retain-versions", "5");
    expect(text.code).toBe(0);
    // 0-39 removed; 40 and 41 keep their commits (log cleanup keeps checkpoint 40 onwards) but VACUUM took
    // their deletion vectors, so they are listed cleaned up too (lib/formats/delta/removal.ts, unreadableAfter).
    expect(text.stdout).toContain("checkpoint: written _lakewarden/checkpoints/00000000000000000046.arrow (47 versions, 42 cleaned up)\n");
    expect(text.stdout).not.toMatch(/\(s\)/);

    const other = await copyFixture("delta", "basic-dv-with-checkpoint");
    await setAllTimes(other, new Date("2025-01-01T00:00:00Z"));
    const json = JSON.parse((await cli("cleanup", other, "--retain-versions", "5", "--json")).stdout) as CleanupReport;
    expect(json.checkpoint).toMatchObject({ status: "written", rows: 47 });
  });

  it("checkpoint and report count in words", async () => {
    const dir = await copyFixture("delta", "simple_commit");
    const checkpoint = await cli("checkpoint", dir);
    expect(checkpoint.stdout).toMatch(/: versions up to 0, 1 row, 0 cleaned up\n/);
    const out = join(dir, "..", "r.html");
    const report = await cli("report", dir, "-o", out);
    expect(report.stdout).toMatch(/: 1 version, 0 cleanup runs\n$/);
  });
});

describe("cleanup --summary", () => {
  it("reasons group without their times and version numbers", () => {
    expect(reasonGroup("version 3 removed: committed 2026-11-02T10:00:00.000Z (older than 7d)")).toBe("versions <n> removed: committed <time> (older than 7d)");
    expect(reasonGroup("named only by removed versions 1, 2 and 3 more")).toBe("named only by removed versions <n>");
    expect(reasonGroup("named only by removed version 2")).toBe("named only by removed versions <n>");
  });

  it("the dry run's totals by reason and kind add up to the plan, with no line per file", async () => {
    const dir = await copyFixture("delta", "basic-dv-with-checkpoint");
    await setAllTimes(dir, new Date("2025-01-01T00:00:00Z"));
    const plan = JSON.parse((await cli("cleanup", dir, "--retain-versions", "5", "--dry-run", "--json")).stdout) as CleanupReport;
    const summary = await cli("cleanup", dir, "--retain-versions", "5", "--dry-run", "--summary");
    expect(summary.code).toBe(0);
    expect(summary.stdout).toContain(`files by reason (${plan.files_planned} files):`);
    // No key of the plan is printed: totals only.
    for (const file of plan.files) expect(summary.stdout).not.toContain(file.key);
    const section = summary.stdout.slice(summary.stdout.indexOf("files by reason"));
    const rows = section
      .split("\n")
      .slice(2)
      .filter((l) => l.trim() !== "")
      .map((l) => l.trim().split(/\s{2,}/));
    const byKind = new Map<string, number>();
    for (const [action, kind, files] of rows) if (action === "delete") byKind.set(kind!, (byKind.get(kind!) ?? 0) + Number(files));
    expect(Object.fromEntries(byKind)).toEqual(Object.fromEntries(Object.entries(plan.files_removed).map(([kind, totals]) => [kind, totals!.files])));
    const versions = summary.stdout.slice(summary.stdout.indexOf("versions by reason"), summary.stdout.indexOf("files by reason"));
    expect(versions).toContain("remove  40        commit below the kept checkpoint 40");
  });

  it("--summary with --json is a usage error (JSON is always the whole report)", async () => {
    const run = await cli("cleanup", "./nowhere", "--dry-run", "--summary", "--json");
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^lakewarden: option '--summary' cannot be used with option '--json'/);
  });
});

describe("--help", () => {
  const program = buildProgram({ io: new BufferIO() });
  const all = commands(program);

  it("every command's, argument's and option's description is one short line", () => {
    const long: string[] = [];
    for (const { path, command } of all) {
      const texts = [
        [path, command.description()],
        ...command.registeredArguments.map((a) => [`${path} <${a.name()}>`, a.description]),
        ...command.options.map((o) => [`${path} ${o.flags}`, o.description]),
      ];
      for (const [where, text] of texts) if (text!.length > 72 || text!.includes("\n")) long.push(`${where}: ${text!.length} characters`);
    }
    expect(all.length).toBeGreaterThan(15);
    expect(long).toEqual([]);
  });
});
