/**
 * Scale bench for budgeted, resumable cleanup (issue 12): a synthetic Lance table (manifests
 * generated from a real LanceDB manifest, bench/datasets/) with V versions and enough extra
 * unreferenced data files to reach N files in all, built twice: one copy cleaned by one
 * unbounded run, the other by runs of `--budget` each (a child process per run, so each run's
 * peak RSS is its own) until one completes. Then: both copies must hold the same keys, file for
 * file, and LanceDB must open the budgeted copy and count the latest version's rows.
 *
 *   node bench/scale-cleanup.ts --files 1000000 --versions 10000 --storage local --budget 60s
 *   node bench/scale-cleanup.ts --files 100000 --versions 1000 --storage s3 --budget 20s
 *
 * Options: --fragments F (per version, default 4), --cache dir (default $TMPDIR/lakewarden-bench-cache),
 * --s3-latency ms (default 0), --s3-backend memory|files (default memory: the emulator's file
 * backend deletes in O(objects in the directory) per key, see bench/harness/s3-server.ts),
 * --min-work N (RunCleanupOptions.minWorkPerRun, default: the library's), --out file (default:
 * print only). Writes a markdown section; its "stages began at" column says where each run's time
 * went before it did new work (a resumed run re-checks the table first).
 */
import { spawn } from "node:child_process";
import { appendFile, link, mkdir, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import * as lancedb from "@lancedb/lancedb";
import { parseDuration } from "../lib/maintenance/duration.ts";
import { openStore } from "../lib/store/open-store.ts";
import { loadManifestTemplate } from "./datasets/lance-template.ts";
import { SyntheticTable } from "./datasets/synthetic-table.ts";
import { S3Env } from "./harness/s3-env.ts";
import type { ScaleRunJob, ScaleRunOutcome } from "./tools/scale-cleanup-child.ts";

const { values } = parseArgs({
  options: {
    files: { type: "string", default: "1000000" },
    versions: { type: "string", default: "10000" },
    fragments: { type: "string", default: "4" },
    storage: { type: "string", default: "local" },
    budget: { type: "string", default: "60s" },
    cache: { type: "string", default: join(tmpdir(), "lakewarden-bench-cache") },
    "s3-latency": { type: "string", default: "0" },
    "s3-backend": { type: "string", default: "memory" },
    out: { type: "string" },
    "min-work": { type: "string" },
  },
});
const files = Number(values.files);
const versions = Number(values.versions);
const fragments = Number(values.fragments);
const storage = values.storage === "s3" ? "s3" : "local";
const budgetMs = parseDuration(values.budget!);
const s3Backend = values["s3-backend"];
if (budgetMs === null || !(files > 0) || !(versions > 1)) throw new Error("bad --files, --versions or --budget");
if (s3Backend !== "memory" && s3Backend !== "files") throw new Error(`--s3-backend: expected memory or files, got ${s3Backend}`);
const command = `node bench/scale-cleanup.ts ${process.argv.slice(2).join(" ")}`;

const s3 = storage === "s3" ? await S3Env.start(Number(values["s3-latency"]), s3Backend) : null;
try {
  const template = await loadManifestTemplate(join(values.cache!, "template"));
  const build = async (name: string): Promise<SyntheticTable> => {
    const started = Date.now();
    const table = new SyntheticTable({ template, cacheDir: values.cache!, fragments, storage, ...(s3 ? { s3 } : {}), name, maxVersions: versions, realDataFiles: fragments });
    await table.prepare();
    await table.growTo(versions);
    // Manifests and transactions are 2 files a version, plus the latest's data files.
    const extra = files - 2 * versions - fragments;
    await addOrphans(table, name, extra);
    log(`${name}: ${versions} versions, ${files} files built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return table;
  };
  const unboundedTable = await build("scale-unbounded");
  const budgetedTable = await build("scale-budgeted");
  const env = s3 ? { ...process.env, ...s3.sdkEnvironment() } : process.env;

  const unbounded = await runChild({ table: unboundedTable.location }, env);
  log(`unbounded: ${unbounded.status} in ${(unbounded.ms / 1000).toFixed(1)} s, peak RSS ${mib(unbounded.peakRssBytes)}`);
  const runs: ScaleRunOutcome[] = [];
  for (let i = 0; i < 200; i++) {
    const outcome = await runChild(
      { table: budgetedTable.location, maxDurationMs: budgetMs, ...(values["min-work"] !== undefined ? { minWorkPerRun: Number(values["min-work"]) } : {}) },
      env,
    );
    runs.push(outcome);
    log(
      `budgeted run ${i + 1}: ${outcome.status} in ${(outcome.ms / 1000).toFixed(1)} s, peak RSS ${mib(outcome.peakRssBytes)}${outcome.stopReason ? ` (${outcome.stopReason.split(";")[0]})` : ""}`,
    );
    if (outcome.status === "completed") break;
  }
  if (runs.at(-1)?.status !== "completed") throw new Error("no budgeted run completed in 200 runs");

  const [left, right] = [await keysOf(unboundedTable.location), await keysOf(budgetedTable.location)];
  const same = left.length === right.length && left.every((key, i) => key === right[i]);
  const lance = await lanceCheck(budgetedTable, s3);
  const lines = [
    `## Scale: ${files.toLocaleString("en")} files, ${versions.toLocaleString("en")} versions, ${storage === "s3" ? `emulated S3 (fauxqs, ${s3Backend} backend, +${s3!.delayMs} ms per request)` : "local disk"}, budget ${values.budget}`,
    "",
    "```",
    command,
    "```",
    "",
    `- final state equals the unbounded run file for file: **${same ? "yes" : "NO"}** (${right.length} keys outside \`_lakewarden/\` in each)`,
    `- LanceDB opens the budgeted copy: latest version ${lance.version}, ${lance.rows} rows, ${lance.versions} version(s) listed`,
    `- unbounded: 1 run, ${(unbounded.ms / 1000).toFixed(1)} s, peak RSS ${mib(unbounded.peakRssBytes)}, ${unbounded.filesRemoved.toLocaleString("en")} files removed, deletes ${rate(unbounded)}`,
    `- budgeted: ${runs.length} runs, ${(runs.reduce((s, r) => s + r.ms, 0) / 1000).toFixed(1)} s in all, max peak RSS ${mib(Math.max(...runs.map((r) => r.peakRssBytes)))}`,
    "",
    "| run | status | where it stopped | time | stages began at | peak RSS | files removed | keys deleted/s |",
    "| ---: | --- | --- | ---: | --- | ---: | ---: | ---: |",
    ...runs.map(
      (r, i) =>
        `| ${i + 1} | ${r.status} | ${r.stopReason ? r.stopReason.split(";")[0]!.replace(/^stopped /, "") : ""} | ${(r.ms / 1000).toFixed(1)} s | ${stagesOf(r)} | ${mib(r.peakRssBytes)} | ${r.filesRemoved.toLocaleString("en")} | ${rate(r)} |`,
    ),
    "",
  ];
  const text = lines.join("\n");
  process.stdout.write(`${text}\n`);
  if (values.out) await appendFile(values.out, `${text}\n`);
  await unboundedTable.remove();
  await budgetedTable.remove();
  if (!same) process.exitCode = 1;
} finally {
  await s3?.stop();
}

function log(line: string): void {
  process.stderr.write(`${new Date().toISOString()} ${line}\n`);
}

/** "read 0.41 · list 0.52 · delete 0.93" (seconds from the run's start). */
function stagesOf(r: ScaleRunOutcome): string {
  const short: Record<string, string> = {
    "reading manifests": "read",
    "listing files": "list",
    "deleting files": "delete",
    "writing checkpoint": "checkpoint",
    "pruning checkpoints": "prune",
  };
  return r.stages.map((s) => `${short[s.stage] ?? s.stage} ${(s.atMs / 1000).toFixed(2)}`).join(" · ");
}

function mib(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(0)} MiB`;
}

function rate(r: ScaleRunOutcome): string {
  return r.deleteRate?.achieved_per_second != null ? Math.round(r.deleteRate.achieved_per_second).toLocaleString("en") : "–";
}

/** Unreferenced data files, as a crashed writer leaves them: hard links to one file locally, tiny objects on S3. */
async function addOrphans(table: SyntheticTable, name: string, count: number): Promise<void> {
  if (count <= 0) return;
  const fileName = (i: number) => `data/orphan-${String(i).padStart(8, "0")}.lance`;
  if (!s3) {
    const tableDir = table.location;
    const old = new Date(Date.now() - 30 * 86_400_000);
    await mkdir(join(tableDir, "data"), { recursive: true });
    // ext4 allows 65,000 links to one inode: a new master file every 60,000.
    for (let first = 0; first < count; first += 60_000) {
      const master = join(values.cache!, `orphan-master-${first}.lance`);
      await writeFile(master, new Uint8Array(64));
      await utimes(master, old, old);
      for (let i = first; i < Math.min(count, first + 60_000); i++) await link(master, join(tableDir, fileName(i)));
      await rm(master);
    }
    return;
  }
  const body = new Uint8Array(64);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      await s3.putObject(`${name}/t.lance/${fileName(i)}`, body);
    }
  };
  await Promise.all(Array.from({ length: 32 }, worker));
}

async function keysOf(location: string): Promise<string[]> {
  const store = openStore(location, s3 ? { s3: { endpoint: s3.directEndpoint, region: "us-east-1", credentials: { accessKeyId: "bench", secretAccessKey: "bench" } } } : {});
  const keys: string[] = [];
  for await (const object of store.list("")) if (!object.key.startsWith("_lakewarden/")) keys.push(object.key);
  return keys.sort();
}

async function lanceCheck(table: SyntheticTable, env: S3Env | null): Promise<{ version: number; rows: number; versions: number }> {
  const db = await lancedb.connect(table.databaseUri, env ? { storageOptions: env.lancedbStorageOptions({ direct: true }) } : {});
  const opened = await db.openTable(table.tableName);
  try {
    return { version: await opened.version(), rows: await opened.countRows(), versions: (await opened.listVersions()).length };
  } finally {
    opened.close();
    db.close();
  }
}

function runChild(job: ScaleRunJob, env: NodeJS.ProcessEnv): Promise<ScaleRunOutcome> {
  const child = new URL("./tools/scale-cleanup-child.ts", import.meta.url).pathname;
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ["--disable-warning=ExperimentalWarning", child, JSON.stringify(job)], { stdio: ["ignore", "pipe", "pipe"], env });
    let stdout = "";
    let stderr = "";
    proc.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    proc.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    proc.on("error", reject);
    proc.on("exit", (code) => {
      const last = stdout.trim().split("\n").at(-1);
      if (code !== 0 || !last) reject(new Error(`scale cleanup child exited ${code}: ${stderr.trim()}`));
      else resolve(JSON.parse(last) as ScaleRunOutcome);
    });
  });
}
