/**
 * `lakewarden versions --json` called many times in one process on one synthetic table (local
 * disk): the spread of a command that takes a few milliseconds, which the history benchmark's
 * median of 3 (run after LanceDB's listVersions() in the same process) cannot show on a busy
 * machine. Same call as the history benchmark (bench/tools/lakewarden-cli.ts), same tables.
 *
 *   node bench/versions-loop.ts --fragments 1000 --versions 512 --runs 300 [--head]
 *
 * Without --head every version is in the checkpoint ("checkpoint only"); with it the newest 16
 * are carried by a current head ("checkpoint + head"). Prints min, median and p90 in ms.
 */
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { archivedTable } from "./datasets/archived-table.ts";
import { runLakewarden } from "./tools/lakewarden-cli.ts";

const { values } = parseArgs({
  options: {
    fragments: { type: "string", default: "1000" },
    versions: { type: "string", default: "512" },
    runs: { type: "string", default: "300" },
    head: { type: "boolean", default: false },
    cache: { type: "string", default: join(tmpdir(), "lakewarden-bench-cache") },
  },
});
const fragments = Number(values.fragments);
const versions = Number(values.versions);
const runs = Number(values.runs);

const { table } = await archivedTable({ cache: values.cache!, name: `versions-loop-f${fragments}`, fragments, versions, head: values.head! });
try {
  const times: number[] = [];
  let requests = null;
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    const run = await runLakewarden(["versions", table.location, "--json"]);
    times.push(performance.now() - started);
    if ((JSON.parse(run.stdout) as unknown[]).length !== versions) throw new Error(`${table.location}: versions printed the wrong number of versions`);
    requests = run.requests;
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!.toFixed(2);
  const scenario = values.head ? "checkpoint + head" : "checkpoint only";
  console.log(
    `${versions} versions × ${fragments} fragments, ${scenario}, ${runs} calls: min ${at(0)} ms, median ${at(0.5)} ms, p90 ${at(0.9)} ms; requests ${JSON.stringify(requests)}`,
  );
} finally {
  await table.remove();
}
