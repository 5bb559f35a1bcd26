/**
 * Child of bench/tools/cleanup-memory-by-stage.ts: one unbounded cleanup of the table named in
 * its argument, printing per stage the live heap at its start (after a full GC) and the highest
 * RSS, heap used and external memory sampled while it ran, then the process's VmHWM.
 *
 *   node --expose-gc bench/tools/cleanup-memory-child.ts '{"table":"<dir>","heapSnapshotAt":"<stage>"}'
 */
import { readFileSync } from "node:fs";
import { writeHeapSnapshot } from "node:v8";
import { runCleanup } from "../../lib/maintenance/run-cleanup.ts";
import { openStore } from "../../lib/store/open-store.ts";

interface MemoryJob {
  table: string;
  heapSnapshotAt?: string;
}

const job = JSON.parse(process.argv[2] ?? "{}") as MemoryJob;
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("run with node --expose-gc");
const collect = gc;
const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;

function vmHwmBytes(): number {
  const match = /^VmHWM:\s+(\d+)\s+kB$/m.exec(readFileSync("/proc/self/status", "utf8"));
  return match ? Number(match[1]) * 1024 : process.resourceUsage().maxRSS * 1024;
}

interface StageRow {
  stage: string;
  liveHeap: number;
  maxRss: number;
  maxHeap: number;
  maxExternal: number;
}
let stage = "start";
const rows: StageRow[] = [];
const sample = () => {
  const row = rows.at(-1);
  if (!row || row.stage !== stage) return;
  const usage = process.memoryUsage();
  row.maxRss = Math.max(row.maxRss, usage.rss);
  row.maxHeap = Math.max(row.maxHeap, usage.heapUsed);
  row.maxExternal = Math.max(row.maxExternal, usage.external + usage.arrayBuffers);
};
const begin = (name: string) => {
  sample();
  collect();
  stage = name;
  const usage = process.memoryUsage();
  rows.push({ stage: name, liveHeap: usage.heapUsed, maxRss: usage.rss, maxHeap: usage.heapUsed, maxExternal: usage.external + usage.arrayBuffers });
  if (job.heapSnapshotAt === name) process.stderr.write(`heap snapshot: ${writeHeapSnapshot()}\n`);
};
const sampler = setInterval(sample, 5);
const started = process.cpuUsage();
const startedAt = performance.now();
begin("start");
const report = await runCleanup(openStore(job.table), {
  progress: { stage: begin, advance: () => {}, finish: () => begin("finished") },
  settings: { olderThanMs: 0, retainVersions: 1, safetyWindowMs: 0 },
});
clearInterval(sampler);
const cpu = process.cpuUsage(started);
process.stdout.write(
  `${report.status}, ${report.files_planned.toLocaleString("en")} files planned, ${((performance.now() - startedAt) / 1000).toFixed(1)} s, CPU ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s\n`,
);
process.stdout.write("| stage | live heap at its start | highest RSS during it | highest heap used | highest external + array buffers |\n| --- | ---: | ---: | ---: | ---: |\n");
for (const row of rows) process.stdout.write(`| ${row.stage} | ${mib(row.liveHeap)} | ${mib(row.maxRss)} | ${mib(row.maxHeap)} | ${mib(row.maxExternal)} |\n`);
process.stdout.write(`peak RSS (VmHWM) ${mib(vmHwmBytes())}\n`);
