/**
 * Where the time of `lakewarden versions --json` goes on local disk, step by step, on the
 * history benchmark's synthetic tables (512 versions, every version in the checkpoint; with
 * --head the newest 16 carried by a current head). Each step is timed alone, in the same
 * process, many times after one warm-up run; medians in ms. Bytes are what
 * the command reads.
 *
 *   node bench/versions-steps.ts --fragments 100000 --versions 512 --runs 200 [--head]
 */
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { archivedTable } from "./datasets/archived-table.ts";
import { runLakewarden } from "./tools/lakewarden-cli.ts";
import { lanceFormat } from "../lib/formats/lance/lance-format.ts";
import { listCheckpointFiles } from "../lib/checkpoint/load.ts";
import { decodeCheckpoint } from "../lib/checkpoint/codec.ts";
import { readHistory } from "../lib/head/timeline-source.ts";
import { listVersionsAndRefs } from "../lib/versions/timeline.ts";
import { readHeadTimeline } from "../lib/head/head-reader.ts";
import { headCodecs } from "../lib/head/registry.ts";
import { versionsJson } from "../lib/cli/commands/versions.ts";
import { HEAD_KEY } from "../lib/model/layout.ts";
import { median } from "./harness/measure.ts";

const { values } = parseArgs({
  options: {
    fragments: { type: "string", default: "1000" },
    versions: { type: "string", default: "512" },
    runs: { type: "string", default: "200" },
    head: { type: "boolean", default: false },
    cache: { type: "string", default: join(tmpdir(), "lakewarden-bench-cache") },
  },
});
const fragments = Number(values.fragments);
const versions = Number(values.versions);
const runs = Number(values.runs);

async function time(body: () => Promise<unknown>): Promise<number> {
  await body();
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await body();
    samples.push(performance.now() - started);
  }
  return median(samples);
}

const { table, store } = await archivedTable({ cache: values.cache!, name: `versions-steps-f${fragments}`, fragments, versions, head: values.head! });
try {
  const [checkpointFile] = (await listCheckpointFiles(store)).slice(-1);
  const { body } = await store.get(checkpointFile!.key);
  const history = await readHistory(store);
  if (history.records.length !== versions) throw new Error(`${table.location}: read ${history.records.length} versions, expected ${versions}`);
  const output = versionsJson(history.records);
  const headBytes = values.head ? (await store.head(HEAD_KEY)).size : 0;

  const run = await runLakewarden(["versions", table.location, "--json"]);
  const steps: [string, number][] = [
    ["whole command (runCli: versions --json)", await time(() => runLakewarden(["versions", table.location, "--json"]))],
    ["  readHistory (library: head, checkpoint, listing, merge)", await time(() => readHistory(store))],
    ["    head: ranged GET of its prefix, sections decoded", await time(() => readHeadTimeline(store, headCodecs))],
    ["    the one LIST: checkpoints, _refs/, _versions/ (keys only)", await time(() => listVersionsAndRefs(store, lanceFormat, { withCheckpoints: true }))],
    ["    GET checkpoint", await time(() => store.get(checkpointFile!.key))],
    ["    decode checkpoint (Arrow IPC to records)", await time(async () => decodeCheckpoint(body, checkpointFile!.key))],
    ["  JSON output", await time(async () => versionsJson(history.records))],
  ];
  const scenario = values.head ? "checkpoint + head" : "checkpoint only";
  console.log(`${versions} versions × ${fragments} fragments, ${scenario}, median of ${runs} after one warm-up`);
  console.log(
    `requests ${JSON.stringify(run.requests)}; bytes read: checkpoint ${body.length}${values.head ? `, head ${headBytes} (prefix read: up to 64 KiB)` : ""}; output ${output.length} bytes`,
  );
  const whole = steps[0]![1];
  const library = steps[1]![1];
  const json = steps.at(-1)![1];
  steps.push(["  the rest: commander, opening the store, --stats (whole − readHistory − JSON)", whole - library - json]);
  for (const [label, ms] of steps) console.log(`${label.padEnd(78)} ${ms.toFixed(2)} ms`);
} finally {
  await table.remove();
}
