/**
 * A cleanup killed with SIGKILL mid-run (OOM killer, `kill -9`, a reboot) leaves its lease
 * unreleased. The next run on the same host finds the holder's process gone and takes the lease
 * over at once (not after 15 minutes) and finishes the job. `lease break` refuses a live
 * holder without --force. A SIGINT instead stops the run cleanly, releasing its lease (exit 130).
 *
 * To kill the run provably mid-run, the test watches `_lakewarden/` and freezes the child
 * with SIGSTOP the moment its lease appears, checks that the lease is still unreleased (the run
 * has not finished), and only then sends SIGKILL. Should the run have finished in that instant
 * (it never has here), the attempt is repeated on a fresh copy of the table.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync, watch } from "node:fs";
import { cp, mkdir } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { LEASE_KEY, Lease, readLease } from "../../lib/maintenance/lease.ts";
import type { CleanupReport } from "../../lib/maintenance/cleanup-report.ts";
import { openStore } from "../../lib/store/open-store.ts";
import type { ObjectStore } from "../../lib/store/object-store.ts";
import { BIN, runLakewarden } from "../cli/run-executable.ts";
import { buildLanceDataset, makeTempDir, removeDir, type LanceDataset } from "../support/lance-datasets.ts";

let dir: string;
let dataset: LanceDataset;
let store: ObjectStore;
let template: string;

beforeAll(async () => {
  dir = await makeTempDir("lw-killed-");
  dataset = await buildLanceDataset({
    dbUri: dir,
    steps: [
      { op: "create", rows: 10 },
      { op: "append", rows: 5 },
      { op: "append", rows: 5 },
      { op: "delete", where: "id % 3 = 0" },
      { op: "append", rows: 5 },
    ],
  });
  dataset.close();
  store = openStore(dataset.tableUri);
  template = join(dir, "template.lance");
  await cp(dataset.tableUri, template, { recursive: true });
});

afterAll(async () => {
  await removeDir(dir);
});

function exited(child: ChildProcess): Promise<NodeJS.Signals | number | null> {
  return new Promise((resolve) => child.once("exit", (code, signal) => resolve(signal ?? code)));
}

function unreleasedLease(table: string): boolean {
  try {
    return (JSON.parse(readFileSync(join(table, LEASE_KEY), "utf8")) as { released_at: string | null }).released_at === null;
  } catch {
    return false; // not there yet, or being replaced
  }
}

/**
 * Runs `lakewarden cleanup` on `table` and kills it (SIGSTOP, then SIGKILL) while it holds the
 * lease. Returns the killed pid, or null when the run finished before it could be stopped.
 */
async function killMidRun(table: string): Promise<number | null> {
  await mkdir(join(table, "_lakewarden"), { recursive: true });
  let stopped = false;
  let child: ChildProcess | undefined;
  const watcher = watch(join(table, "_lakewarden"), (_event, name) => {
    if (!stopped && child && name === "lease" && unreleasedLease(table)) {
      stopped = true;
      child.kill("SIGSTOP");
    }
  });
  try {
    child = spawn(process.execPath, [BIN, "cleanup", table, "--older-than", "0s", "--allow-short-retention", "--json"], { stdio: "ignore" });
    const exit = exited(child);
    const outcome = await Promise.race([exit.then(() => "exited" as const), until(() => stopped).then(() => "stopped" as const)]);
    if (outcome === "exited") return null;
    const midRun = unreleasedLease(table); // frozen: nothing changes under us now
    child.kill("SIGKILL");
    expect(await exit).toBe("SIGKILL");
    return midRun ? child.pid! : null;
  } finally {
    watcher.close();
  }
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}

it("a cleanup killed with SIGKILL mid-run: the next run on this host takes its lease over and finishes", async () => {
  let pid: number | null = null;
  for (let attempt = 0; attempt < 5 && pid === null; attempt++) {
    await removeDir(dataset.tableUri);
    await cp(template, dataset.tableUri, { recursive: true });
    pid = await killMidRun(dataset.tableUri);
  }
  expect(pid, "a cleanup stopped while holding its lease").not.toBeNull();
  const child = { pid };

  // What the killed run left: a lease that is not released, not expired, naming this host and a dead pid.
  const left = (await readLease(store)).record!;
  expect(left.released_at).toBeNull();
  expect(Date.parse(left.expires_at)).toBeGreaterThan(Date.now() + 10 * 60_000);
  expect(left.host).toBe(hostname());
  expect(left.pid).toBe(child.pid);

  const shown = await runLakewarden(["lease", "show", dataset.tableUri, "--json"]);
  expect(shown.code).toBe(0);
  expect(JSON.parse(shown.stdout)).toMatchObject({ state: "holder dead", lease: { run_id: left.run_id, pid: child.pid } });

  const rerun = await runLakewarden(["cleanup", dataset.tableUri, "--older-than", "0s", "--allow-short-retention", "--json"]);
  expect(rerun.code, rerun.stderr).toBe(0);
  const report = JSON.parse(rerun.stdout) as CleanupReport;
  expect(report.status).toBe("completed");
  expect(report.lease?.took_over_from).toBe(left.run_id);
  expect(report.versions_removed.length).toBeGreaterThan(0);
  expect(rerun.stderr).toContain(`process ${child.pid} no longer exists on this host`);

  const after = await runLakewarden(["lease", "show", dataset.tableUri]);
  expect(after.stdout).toMatch(/^free: run .* released it at /);
});

it("lease break refuses a holder that still runs unless --force, and then the holder loses its lease", async () => {
  const live = await Lease.acquire(store, { runId: "live-run" }); // this test process: alive

  const refused = await runLakewarden(["lease", "break", dataset.tableUri]);
  expect(refused.code).toBe(3);
  expect(refused.stderr).toContain(`${store.uriOf(LEASE_KEY)}: held by run live-run (cleanup) on `);
  expect(refused.stderr).toMatch(/process \d+ on this host, still running; .*not broken \(use --force/);
  expect((await readLease(store)).record?.released_at).toBeNull();

  const cleanupMeanwhile = await runLakewarden(["cleanup", dataset.tableUri]);
  expect(cleanupMeanwhile.code).toBe(3);

  const forced = await runLakewarden(["lease", "break", dataset.tableUri, "--force"]);
  expect(forced.code, forced.stderr).toBe(0);
  expect(forced.stdout).toMatch(/^lease released; it was held by run live-run/);
  await expect(live.renew()).rejects.toThrow(/taken over or removed/);

  const nothing = await runLakewarden(["lease", "break", dataset.tableUri]);
  expect(nothing.code).toBe(0);
  expect(nothing.stdout).toMatch(/^nothing to break: free: run live-run/);
});

it("SIGINT mid-run: the run says it is stopping, stops cleanly, releases its lease and exits 130", async () => {
  for (let attempt = 0; attempt < 5; attempt++) {
    await removeDir(dataset.tableUri);
    await cp(template, dataset.tableUri, { recursive: true });
    await mkdir(join(dataset.tableUri, "_lakewarden"), { recursive: true });
    let stopped = false;
    let child: ChildProcess | undefined;
    const watcher = watch(join(dataset.tableUri, "_lakewarden"), (_event, name) => {
      if (!stopped && child && name === "lease" && unreleasedLease(dataset.tableUri)) {
        stopped = true;
        child.kill("SIGSTOP");
      }
    });
    let stderr = "";
    child = spawn(process.execPath, [BIN, "cleanup", dataset.tableUri, "--older-than", "0s", "--allow-short-retention"]);
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const exit = exited(child);
    const outcome = await Promise.race([exit.then(() => "exited" as const), until(() => stopped).then(() => "stopped" as const)]);
    watcher.close();
    if (outcome === "exited") continue; // finished before it could be frozen: try again
    child.kill("SIGINT"); // delivered when it runs again
    child.kill("SIGCONT");
    const code = await exit;
    if (code === 0) continue; // it had passed its last stop check: try again
    expect(code).toBe(130);
    expect(stderr).toMatch(/^lakewarden: SIGINT: stopping cleanly after the current step and releasing the lease/);
    expect(stderr).toMatch(/lakewarden: .*cleanup interrupted and stopped cleanly .*the next run finishes the job\n$/);
    expect((await readLease(store)).record?.released_at).not.toBeNull();
    return;
  }
  throw new Error("no attempt caught the run between taking its lease and finishing");
});
