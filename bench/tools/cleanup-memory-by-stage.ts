/**
 * Where a cleanup run's memory goes, stage by stage: one unbounded run in this process on a
 * synthetic Lance table (as bench/scale-cleanup.ts builds it, on local disk), printing at each
 * stage's start the live heap after a full GC, and the highest RSS sampled while the stage ran.
 * Live heap says what a stage holds; RSS adds what the collector has not returned yet.
 *
 *   node --expose-gc bench/tools/cleanup-memory-by-stage.ts --files 1000000 --versions 10000 [--fragments 4]
 */
import { link, mkdir, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { runCleanup } from "../../lib/maintenance/run-cleanup.ts";
import { openStore } from "../../lib/store/open-store.ts";
import { loadManifestTemplate } from "../datasets/lance-template.ts";
import { SyntheticTable } from "../datasets/synthetic-table.ts";

const { values } = parseArgs({
  options: {
    files: { type: "string", default: "300000" },
    versions: { type: "string", default: "3000" },
    fragments: { type: "string", default: "4" },
    cache: { type: "string", default: join(tmpdir(), "lakewarden-bench-cache") },
  },
});
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("run with node --expose-gc");
const files = Number(values.files);
const versions = Number(values.versions);
const fragments = Number(values.fragments);
const cache = values.cache!;
const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;

const template = await loadManifestTemplate(join(cache, "template"));
const table = new SyntheticTable({
  template,
  cacheDir: cache,
  fragments,
  storage: "local",
  name: "memory-by-stage",
  maxVersions: versions,
  // Every fragment's data file (hard links): the post-delete check refuses a kept version whose files are missing.
  realDataFiles: fragments,
});
await table.prepare();
await table.growTo(versions);
// Unreferenced files as bench/scale-cleanup.ts adds them: hard links to one old file.
const extra = files - 2 * versions - fragments;
const old = new Date(Date.now() - 30 * 86_400_000);
await mkdir(join(table.location, "data"), { recursive: true });
for (let first = 0; first < extra; first += 60_000) {
  const master = join(cache, `orphan-master-${first}.lance`);
  await writeFile(master, new Uint8Array(64));
  await utimes(master, old, old);
  for (let i = first; i < Math.min(extra, first + 60_000); i++) await link(master, join(table.location, `data/orphan-${String(i).padStart(8, "0")}.lance`));
  await rm(master);
}

let stage = "start";
const rows: { stage: string; liveHeap: number; maxRss: number }[] = [];
const begin = (name: string) => {
  gc();
  stage = name;
  rows.push({ stage: name, liveHeap: process.memoryUsage().heapUsed, maxRss: process.memoryUsage().rss });
};
const sampler = setInterval(() => {
  const row = rows.at(-1);
  if (row && row.stage === stage) row.maxRss = Math.max(row.maxRss, process.memoryUsage().rss);
}, 5);
begin("start");
const report = await runCleanup(openStore(table.location), {
  progress: { stage: begin, advance: () => {}, finish: () => begin("finished") },
  settings: { olderThanMs: 0, retainVersions: 1, safetyWindowMs: 0 },
});
clearInterval(sampler);
process.stdout.write(
  `${files.toLocaleString("en")} files, ${versions.toLocaleString("en")} versions of ${fragments.toLocaleString("en")} fragments: ${report.status}, ${report.files_planned.toLocaleString("en")} files planned\n`,
);
process.stdout.write("| stage | live heap at its start | highest RSS during it |\n| --- | ---: | ---: |\n");
for (const row of rows) process.stdout.write(`| ${row.stage} | ${mib(row.liveHeap)} | ${mib(row.maxRss)} |\n`);
await table.remove();
