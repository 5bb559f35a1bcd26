/**
 * What each operation costs in S3 requests, and what those requests cost at list prices (issue 27:
 * "cost tables stay current"): a commit's head write (the on-commit Lambda's work), a cold load
 * from the head, `versions`, and a cleanup per 1,000 files it deletes. On one table per format,
 * written at run time by the format's own writer (delta-rs, pyiceberg without a catalog, pylance:
 * test/engines/), counted by the store's own request counters (a local store counts LIST pages as
 * S3 would). Requests do not drift with the machine's load; times are not reported.
 *
 *   npm run bench:cost -- [--commits 40] [--out bench/results/cost-per-operation.md]
 */
import { execFileSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { openTable } from "../lib/head/loader.ts";
import { readHistory } from "../lib/head/timeline-source.ts";
import { writeTableHead } from "../lib/head/write-table-head.ts";
import { runCleanup } from "../lib/maintenance/run-cleanup.ts";
import { LocalStore } from "../lib/store/local-store.ts";
import type { RequestCounts } from "../lib/store/object-store.ts";
import { deltaTable, icebergFolderTable, lanceTable } from "../test/engines/engine-tables.ts";
import type { EngineTable } from "../test/engines/race.ts";
import { runScript } from "../test/engines/race.ts";
import { describeMachine } from "./harness/machine.ts";

/** us-east-1 S3 Standard list prices per request (DELETE is free; DeleteObjects counts as a delete). */
const PRICE: Record<keyof RequestCounts, number> = { put: 0.005 / 1000, list: 0.005 / 1000, get: 0.0004 / 1000, head: 0.0004 / 1000, delete: 0 };
const DAY_MS = 24 * 3600 * 1000;

interface Row {
  format: string;
  operation: string;
  counts: RequestCounts;
  /** What one operation stands for: 1, or the files a cleanup deleted (priced per 1,000). */
  per: number;
}

const { values: args } = parseArgs({ options: { commits: { type: "string", default: "40" }, out: { type: "string", default: "bench/results/cost-per-operation.md" } } });
const commits = Number(args.commits);

const price = (counts: RequestCounts): number => (Object.keys(PRICE) as (keyof RequestCounts)[]).reduce((sum, kind) => sum + counts[kind] * PRICE[kind], 0);
const total = (counts: RequestCounts): number => Object.values(counts).reduce((a, b) => a + b, 0);
const scaled = (counts: RequestCounts, factor: number): RequestCounts =>
  Object.fromEntries(Object.entries(counts).map(([kind, n]) => [kind, n * factor])) as unknown as RequestCounts;

/** The requests one call makes on a fresh store of the table (no cache carried from a call before). */
async function counted(uri: string, body: (store: LocalStore) => Promise<unknown>): Promise<RequestCounts> {
  const store = new LocalStore(uri);
  await body(store);
  return store.stats.snapshot();
}

async function measureFormat(table: EngineTable, dir: string): Promise<Row[]> {
  const state = join(dir, "state.json");
  await runScript(table, ["write", table.uri, "--state", state, "--commits", String(commits)]);
  // The steady state of the commit hook: the previous commit's head is in place when the next commit lands.
  await writeTableHead(new LocalStore(table.uri));
  await runScript(table, ["write", table.uri, "--state", state, "--commits", "1", "--round", "1"]);
  const rows: Row[] = [];
  const row = (operation: string, counts: RequestCounts, per = 1) => rows.push({ format: table.format, operation, counts, per });
  row("commit: head write (on-commit)", await counted(table.uri, (store) => writeTableHead(store)));
  row("cold load from the head (openTable)", await counted(table.uri, (store) => openTable(store)));
  row("versions (read-only, checkpoint from the head)", await counted(table.uri, (store) => readHistory(store, { checkpointFromHead: true })));
  // Cleanup as the schedule runs it, a month on: every version but the latest is old enough to go.
  let deleted = 0;
  const cleanup = await counted(table.uri, async (store) => {
    const report = await runCleanup(store, { settings: { olderThanMs: DAY_MS, retainVersions: 1 }, now: () => new Date(Date.now() + 30 * DAY_MS) });
    if (report.status !== "completed") throw new Error(`${table.format}: cleanup ${report.status}: ${report.stop_reason ?? ""}`);
    deleted = Object.values(report.files_removed).reduce((sum, kind) => sum + (kind?.files ?? 0), 0);
  });
  if (deleted === 0) throw new Error(`${table.format}: cleanup deleted nothing: no cleanup cost to measure`);
  row(`cleanup (${deleted} files deleted), per 1,000 files`, scaled(cleanup, 1000 / deleted), deleted);
  row("versions after cleanup", await counted(table.uri, (store) => readHistory(store, { checkpointFromHead: true })));
  return rows;
}

function commitOf(): string {
  try {
    return execFileSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim();
  } catch {
    return "unknown";
  }
}

const fmt = (n: number): string => (Number.isInteger(n) ? String(n) : n.toFixed(1));
const dollars = (n: number): string => `$${n < 0.01 ? n.toPrecision(2) : n.toFixed(n < 1 ? 4 : 2)}`;

function render(rows: Row[]): string {
  const machine = describeMachine();
  const lines = [
    "# Requests and their price per operation",
    "",
    `- Command: \`npm run bench:cost -- --commits ${commits}\``,
    `- Commit: ${commitOf()}; date: ${new Date().toISOString()}; Node ${machine.node}`,
    `- Tables: one per format, ${commits + 1} commits by the format's own writer (delta-rs, pyiceberg without a catalog, pylance: test/engines/), on local disk; requests from the store's counters (LIST counted per page of 1,000, as S3 pages).`,
    "- Price: us-east-1 S3 Standard list prices, $0.005 per 1,000 PUT or LIST, $0.0004 per 1,000 GET or HEAD, DELETE free; Lambda and SQS are in docs/deploy.md's monthly estimate.",
    "",
    "| format | operation | requests (get / head / list / put / delete) | S3 price |",
    "|:---|:---|---:|---:|",
  ];
  for (const r of rows) {
    const c = r.counts;
    const cost = r.per === 1 ? `${dollars(price(c) * 1e6)} per million` : `${dollars(price(c))} per 1,000 files`;
    lines.push(`| ${r.format} | ${r.operation} | ${fmt(total(c))} (${[c.get, c.head, c.list, c.put, c.delete].map(fmt).join(" / ")}) | ${cost} |`);
  }
  return `${lines.join("\n")}\n`;
}

const root = await mkdtemp(join(tmpdir(), "lw-cost-"));
try {
  const rows: Row[] = [];
  for (const make of [lanceTable, deltaTable, icebergFolderTable]) {
    const dir = await mkdtemp(join(root, "t-"));
    rows.push(...(await measureFormat(make(dir), dir)));
  }
  const text = render(rows);
  await writeFile(args.out, text);
  process.stdout.write(text);
} finally {
  await rm(root, { recursive: true, force: true });
}
