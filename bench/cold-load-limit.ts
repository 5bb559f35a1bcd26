/**
 * The physical limit of the cold load through the head, step by step, on the cold-load
 * benchmark's table (F fragments, head of version 20): the bytes read, one GET of the whole
 * head (local disk, and the emulated S3 behind the benchmark's per-request delay), the
 * checksums, zstd decompression of the live_files section, its Arrow decoding into column
 * values, and the LiveFile objects built from them. N calls of each step in one process.
 *
 *   node bench/cold-load-limit.ts --fragments 100000 --runs 30 [--s3-latency 20]
 *
 * Prints min and median per step in ms.
 */
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { loadManifestTemplate } from "./datasets/lance-template.ts";
import { SyntheticTable } from "./datasets/synthetic-table.ts";
import { clearLakewardenState, syntheticRecords, writeCheckpoint, writeHead } from "./datasets/lakewarden-state.ts";
import { S3Env } from "./harness/s3-env.ts";
import { openStore } from "../lib/store/open-store.ts";
import { HEAD_KEY } from "../lib/head/stored-head.ts";
import { SectionedHead } from "../lib/head/sectioned.ts";
import { headCodecs } from "../lib/head/registry.ts";
import { SectionReader, readLiveFiles } from "../lib/head/content.ts";

const { values } = parseArgs({
  options: {
    fragments: { type: "string", default: "100000" },
    runs: { type: "string", default: "30" },
    "s3-latency": { type: "string", default: "20" },
    cache: { type: "string", default: join(tmpdir(), "lakewarden-bench-cache") },
  },
});
const fragments = Number(values.fragments);
const runs = Number(values.runs);
const VERSIONS = 20;

function summary(name: string, times: number[]): string {
  const sorted = [...times].sort((a, b) => a - b);
  return `${name}: min ${sorted[0]!.toFixed(2)} ms, median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(2)} ms`;
}

async function prepared(storage: "local" | "s3", s3: S3Env | null) {
  const template = await loadManifestTemplate(`${values.cache}/template`);
  const table = new SyntheticTable({
    template,
    cacheDir: values.cache,
    fragments,
    storage,
    ...(s3 ? { s3 } : {}),
    name: `cold-load-limit-${storage}-f${fragments}`,
    maxVersions: VERSIONS,
  });
  await table.prepare();
  await table.growTo(VERSIONS);
  const store = openStore(table.location);
  await clearLakewardenState(store);
  await writeCheckpoint(store, (await syntheticRecords(store, fragments, VERSIONS)).slice(0, VERSIONS - 4));
  await writeHead(store, VERSIONS);
  return table;
}

const local = await prepared("local", null);
try {
  const store = openStore(local.location);
  const body = (await store.get(HEAD_KEY)).body;
  const layout = SectionedHead.open(body, "head", headCodecs);
  const live = layout.entries.find((e) => e.name === "live_files")!;
  console.log(`${fragments} fragments: head ${body.length} bytes; live_files ${live.storedLength} bytes ${live.compression} → ${live.rawLength} bytes`);
  const steps: Record<string, number[]> = {
    "GET whole head, local disk": [],
    "section checksums": [],
    "zstd live_files": [],
    "Arrow decode to column values": [],
    "LiveFile objects": [],
    "sum of the CPU steps": [],
  };
  for (let i = 0; i < runs; i++) {
    let t = performance.now();
    const got = (await openStore(local.location).get(HEAD_KEY)).body;
    steps["GET whole head, local disk"]!.push(performance.now() - t);
    const head = SectionedHead.open(got, "head", headCodecs);
    t = performance.now();
    head.verifyChecksums();
    const t1 = performance.now();
    const raw = head.raw("live_files");
    const t2 = performance.now();
    const model = head.codec.decode(raw);
    const t3 = performance.now();
    const files = readLiveFiles(new SectionReader(model, "head"));
    const t4 = performance.now();
    if (files.length !== fragments) throw new Error(`decoded ${files.length} live files, expected ${fragments}`);
    steps["section checksums"]!.push(t1 - t);
    steps["zstd live_files"]!.push(t2 - t1);
    steps["Arrow decode to column values"]!.push(t3 - t2);
    steps["LiveFile objects"]!.push(t4 - t3);
    steps["sum of the CPU steps"]!.push(t4 - t);
  }
  for (const [name, times] of Object.entries(steps)) console.log(summary(name, times));
} finally {
  await local.remove();
}

const latency = Number(values["s3-latency"]);
const s3 = await S3Env.start(latency);
Object.assign(process.env, s3.sdkEnvironment());
try {
  const table = await prepared("s3", s3);
  try {
    const times: number[] = [];
    for (let i = 0; i < runs; i++) {
      const started = performance.now();
      await openStore(table.location).get(HEAD_KEY);
      times.push(performance.now() - started);
    }
    console.log(summary(`GET whole head, emulated S3 (+${latency} ms per request; fresh client each time)`, times));
  } finally {
    await table.remove();
  }
} finally {
  await s3.stop();
}
