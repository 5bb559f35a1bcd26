/**
 * Where a cleanup run's memory goes, stage by stage: a synthetic Lance table (as
 * bench/scale-cleanup.ts builds it, on local disk) made in this process, then one unbounded run
 * in a child process of its own (bench/tools/cleanup-memory-child.ts), so the table's making is
 * not in the figures. The child prints at each stage's start the live heap after a full GC, and
 * the highest RSS, heap and external memory (array buffers included) sampled while the stage
 * ran, then its VmHWM: the run's peak RSS.
 *
 *   node bench/tools/cleanup-memory-by-stage.ts --files 1000000 --versions 10000 [--fragments 4]
 *     [--node-option=--max-old-space-size=160] [--heap-snapshot-at "listing files"]
 */
import { spawn } from "node:child_process";
import { link, mkdir, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { loadManifestTemplate } from "../datasets/lance-template.ts";
import { SyntheticTable } from "../datasets/synthetic-table.ts";

const { values } = parseArgs({
  options: {
    files: { type: "string", default: "300000" },
    versions: { type: "string", default: "3000" },
    fragments: { type: "string", default: "4" },
    cache: { type: "string", default: join(tmpdir(), "lakewarden-bench-cache") },
    /** Passed to the child's node (repeatable), e.g. --max-old-space-size=160. */
    "node-option": { type: "string", multiple: true, default: [] },
    /** Writes a heap snapshot when this stage starts (v8.writeHeapSnapshot, in the working directory). */
    "heap-snapshot-at": { type: "string" },
  },
});
const files = Number(values.files);
const versions = Number(values.versions);
const fragments = Number(values.fragments);
const cache = values.cache!;

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

const child = new URL("./cleanup-memory-child.ts", import.meta.url).pathname;
const job = JSON.stringify({ table: table.location, ...(values["heap-snapshot-at"] ? { heapSnapshotAt: values["heap-snapshot-at"] } : {}) });
const code = await new Promise<number | null>((resolve, reject) => {
  const run = spawn(process.execPath, ["--expose-gc", ...values["node-option"]!, child, job], { stdio: ["ignore", "inherit", "inherit"] });
  run.on("error", reject);
  run.on("exit", resolve);
});
process.stdout.write(`(${files.toLocaleString("en")} files, ${versions.toLocaleString("en")} versions of ${fragments.toLocaleString("en")} fragments)\n`);
await table.remove();
if (code !== 0) process.exit(1);
