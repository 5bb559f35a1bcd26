/**
 * Issue 22: in a clone with Node 20 on PATH, `lakewarden` is lib/cli/bin.js re-running the CLI
 * under the project's Node 22. A signal sent to that wrapper (by `timeout`, a scheduler,
 * systemd, `kill`) must reach the CLI: the cleanup stops cleanly through its abort signal,
 * releases its lease, and the wrapper exits only then, with the CLI's status (130). Before, the
 * wrapper (spawnSync) died at once and the orphaned CLI went on deleting under its lease.
 *
 * The run is made to take seconds by its delete pace (--max-delete-rate 4 on a few dozen
 * files). The signal goes to the wrapper's pid alone, as `timeout` sends it, or to the whole
 * process group, as a terminal sends Ctrl-C: then the CLI gets it twice (the terminal's and the
 * wrapper's), which is still one interrupt, not "again to quit at once". Then: no process of the
 * run is left, an immediate rerun gets the lease (not exit 3) and finishes, and every version
 * LanceDB lists still reads as before.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { cp, readdir } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { LEASE_KEY, type LeaseRecord } from "../../lib/maintenance/lease.ts";
import type { CleanupReport } from "../../lib/maintenance/cleanup-report.ts";
import { compareContents, readContents, type TableContents } from "../maintenance/lance-checks.ts";
import { buildLanceDataset, makeTempDir, removeDir } from "../support/lance-datasets.ts";
import { findNode20 } from "../support/node20.ts";
import { BIN } from "./run-executable.ts";

let dir: string;
let template: string;
let before: TableContents;
/** The node that runs the wrapper: a Node 20, or where there is none this Node 22 with type stripping off (the same wrapper path). */
let wrapperNode: { path: string; args: string[] };

beforeAll(async () => {
  dir = await makeTempDir("lw-signals-");
  const dataset = await buildLanceDataset({
    dbUri: join(dir, "template"),
    steps: [{ op: "create", rows: 10 }, ...Array.from({ length: 16 }, () => ({ op: "append" as const, rows: 2 }))],
  });
  dataset.close();
  template = join(dir, "template");
  before = await readContents(template);
  const node20 = await findNode20();
  wrapperNode = node20 === null ? { path: process.execPath, args: ["--no-experimental-strip-types"] } : { path: node20, args: [] };
});

afterAll(async () => {
  await removeDir(dir);
});

interface Finished {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** `ownGroup`: the wrapper leads a process group of its own, as a shell's foreground job does. */
function runWrapper(args: string[], ownGroup = false): { child: ChildProcess; finished: Promise<Finished> } {
  const child = spawn(wrapperNode.path, [...wrapperNode.args, BIN, ...args], { stdio: ["ignore", "pipe", "pipe"], detached: ownGroup });
  let stdout = "";
  let stderr = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const finished = new Promise<Finished>((resolve) => child.once("close", (code, signal) => resolve({ code, signal, stdout, stderr })));
  return { child, finished };
}

function heldLease(table: string): LeaseRecord | null {
  try {
    const record = JSON.parse(readFileSync(join(table, LEASE_KEY), "utf8")) as LeaseRecord;
    return record.released_at === null ? record : null;
  } catch {
    return null; // not there yet, or being replaced
  }
}

async function until<T>(probe: () => T | null, timeoutMs: number, what: string): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== null) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Processes whose command line names `text` (Linux: /proc; elsewhere only the pids checked above count). */
async function processesNaming(text: string): Promise<number[]> {
  if (!existsSync("/proc/self/cmdline")) return [];
  const found: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(text)) found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

const CASES = [
  { signal: "SIGTERM", to: "the wrapper alone" },
  { signal: "SIGINT", to: "the wrapper alone" },
  { signal: "SIGINT", to: "the whole process group and then the wrapper again (a terminal's Ctrl-C under npx)" },
] as const;

for (const [index, { signal, to }] of CASES.entries()) {
  it(`${signal} sent to ${to} stops the cleanup cleanly: no process left, the lease free, the table readable`, async () => {
    const toGroup = to !== "the wrapper alone";
    const db = join(dir, `run-${index}`);
    await cp(template, db, { recursive: true });
    const table = join(db, "t.lance");
    const cleanup = ["cleanup", table, "--older-than", "0s", "--allow-short-retention", "--json"];

    const run = runWrapper([...cleanup, "--max-delete-rate", "4"], toGroup);
    const lease = await until(() => heldLease(table), 60_000, "the cleanup to take its lease");
    expect(lease.pid).not.toBe(run.child.pid); // the lease holder is the Node 22 CLI, the wrapper's child
    await new Promise((resolve) => setTimeout(resolve, 500)); // into the paced deletes
    const sentAt = Date.now();
    if (toGroup) {
      process.kill(-run.child.pid!, signal);
      // npx, between the terminal and the wrapper, forwards its own copy a moment later.
      await new Promise((resolve) => setTimeout(resolve, 50));
      run.child.kill(signal);
    } else {
      run.child.kill(signal);
    }
    const stopped = await run.finished;

    expect({ code: stopped.code, signal: stopped.signal }, stopped.stderr).toEqual({ code: 130, signal: null });
    expect(Date.now() - sentAt).toBeLessThan(5_000);
    expect(stopped.stderr).toContain(`lakewarden: ${signal}: stopping cleanly after the current step and releasing the lease`);
    const report = JSON.parse(stopped.stdout) as CleanupReport;
    expect(report.status).toBe("stopped");
    expect(alive(lease.pid!), "the CLI process is gone").toBe(false);
    expect(await processesNaming(table)).toEqual([]);
    expect(heldLease(table)).toBeNull();

    const rerun = runWrapper(cleanup);
    const again = await rerun.finished;
    expect(again.code, again.stderr).toBe(0);
    expect((JSON.parse(again.stdout) as CleanupReport).status).toBe("completed");
    expect(compareContents(before, await readContents(db))).toEqual([]);
  });
}
