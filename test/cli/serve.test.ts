/**
 * `lakewarden serve` as a user runs it: a separate process, on a directory where a LanceDB
 * writer (this test) commits, stopped with SIGINT. And the demo lake it serves by default.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildLanceDataset, makeTempDir, removeDir, type LanceDataset } from "../support/lance-datasets.ts";

const BIN = fileURLToPath(new URL("../../lib/cli/bin.js", import.meta.url));

interface Served {
  child: ChildProcessWithoutNullStreams;
  events: Record<string, unknown>[];
  stderr: () => string;
}

function serve(args: string[], cwd: string): Served {
  const child = spawn(process.execPath, [BIN, "serve", ...args, "--json"], { cwd, env: { ...process.env, NO_COLOR: "1" } });
  const events: Record<string, unknown>[] = [];
  let buffered = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    buffered += chunk;
    const lines = buffered.split("\n");
    buffered = lines.pop() ?? "";
    for (const line of lines) if (line.trim()) events.push(JSON.parse(line) as Record<string, unknown>);
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  return { child, events, stderr: () => stderr };
}

/** Waits (not judging how long) for an event; fails with everything printed so far. */
async function waitFor(served: Served, test: (event: Record<string, unknown>) => boolean, what: string): Promise<Record<string, unknown>> {
  const deadline = Date.now() + 90_000;
  for (;;) {
    const found = served.events.find(test);
    if (found) return found;
    if (served.child.exitCode !== null || Date.now() > deadline) {
      throw new Error(`no ${what}; stdout events:\n${served.events.map((e) => JSON.stringify(e)).join("\n")}\nstderr:\n${served.stderr()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

async function interrupt(served: Served): Promise<number | null> {
  served.child.kill("SIGINT");
  const [code] = (await once(served.child, "exit")) as [number | null];
  return code;
}

describe("lakewarden serve <dir>", () => {
  let lake: string;
  let dataset: LanceDataset;

  beforeAll(async () => {
    lake = await makeTempDir("serve-cli-");
    dataset = await buildLanceDataset({ dbUri: lake, tableName: "orders", steps: [{ op: "create", rows: 4 }] });
  });

  afterAll(async () => {
    dataset?.close();
    await removeDir(lake);
  });

  it("follows each commit with the head, cleans up on schedule, stops cleanly on SIGINT", async () => {
    const served = serve([lake, "--cleanup-every", "1s", "--older-than", "0s", "--allow-short-retention"], lake);
    const isHead = (version: number) => (e: Record<string, unknown>) => e.type === "head" && e.version === version && String(e.table).endsWith("/orders.lance");
    await waitFor(served, isHead(1), "head for version 1");
    for (const step of [
      { op: "append", rows: 2 },
      { op: "overwrite", rows: 3 },
    ] as const) {
      await dataset.apply([step]);
      await waitFor(served, isHead(await dataset.table.version()), `head after commit ${step.op}`);
    }
    const cleanup = await waitFor(served, (e) => e.type === "cleanup" && e.status === "completed" && (e.versions_removed as number[]).length > 0, "cleanup removing versions");
    expect(cleanup.versions_removed).not.toContain(await dataset.table.version());
    expect(await interrupt(served)).toBe(0);
    expect(served.events.at(-1)).toMatchObject({ type: "stopped" });
    expect(served.events.filter((e) => ["head-failed", "cleanup-failed", "error"].includes(String(e.type)))).toEqual([]);
    const reopened = await dataset.db.openTable("orders");
    expect(await reopened.countRows()).toBe(3);
    reopened.close();
  });

  it("refuses a directory that does not exist with one line", async () => {
    const served = serve([join(lake, "nope")], lake);
    const [code] = (await once(served.child, "exit")) as [number | null];
    expect(code).toBe(1);
    expect(served.stderr().trim().split("\n")).toHaveLength(1);
    expect(served.stderr()).toMatch(/^lakewarden: file:\/\/.*\/nope: no such directory to serve/);
  });
});

describe("lakewarden serve (demo lake)", () => {
  let cwd: string;

  beforeAll(async () => {
    cwd = await makeTempDir("serve-demo-");
  });

  afterAll(async () => {
    await removeDir(cwd);
  });

  it("creates a LanceDB demo lake in ./.lakewarden-demo and keeps its head on each new commit", async () => {
    const served = serve(["--cleanup-every", "off"], cwd);
    const commit = await waitFor(served, (e) => e.type === "demo-commit" && Number(e.version) >= 2, "a demo commit");
    await waitFor(served, (e) => e.type === "head" && e.version === commit.version && String(e.table).endsWith("/.lakewarden-demo/events.lance"), "head for the demo commit");
    expect(await interrupt(served)).toBe(0);
    expect(served.events.at(-1)).toMatchObject({ type: "stopped" });
    // The serving line first, then the demo table, created.
    const types = served.events.map((e) => (e.type === "demo-commit" ? `demo-commit:${String(e.operation)}` : String(e.type)));
    expect(types.indexOf("started")).toBeLessThan(types.indexOf("demo-commit:create"));
    expect(types.filter((t) => t === "demo-commit:open")).toEqual([]);
  });

  it("a restart reopens the demo table without reporting a commit, after the serving line", async () => {
    const served = serve(["--cleanup-every", "off"], cwd);
    const reopened = await waitFor(served, (e) => e.type === "demo-commit", "the demo table reopened");
    expect(reopened).toMatchObject({ operation: "open" });
    expect(served.events.findIndex((e) => e.type === "started")).toBeLessThan(served.events.indexOf(reopened));
    expect(await interrupt(served)).toBe(0);

    // The same in text: no "commit" line for the version that was already there.
    const text = spawn(process.execPath, [BIN, "serve", "--cleanup-every", "off"], { cwd, env: { ...process.env, NO_COLOR: "1" } });
    let stdout = "";
    text.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    const deadline = Date.now() + 60_000;
    while (!stdout.includes("reopened at version") && Date.now() < deadline && text.exitCode === null) await new Promise((r) => setTimeout(r, 25));
    text.kill("SIGINT");
    await once(text, "exit");
    const lines = stdout.split("\n").filter((line) => line.startsWith("["));
    expect(lines[0]).toMatch(/\] serving /);
    // The head check of the existing table may print before or after the reopen: they run at once.
    const reopenedLine = lines.findIndex((line) => /\] demo +events\.lance +reopened at version \d+ \(\d+ rows\): no new commit; the demo writer resumes$/.test(line));
    expect(reopenedLine, stdout).toBeGreaterThan(0);
    const version = /reopened at version (\d+)/.exec(lines[reopenedLine]!)![1];
    expect(
      lines.filter((line) => new RegExp(`\\] commit +events\\.lance +version ${version} `).test(line)),
      stdout,
    ).toEqual([]);
  });
});
