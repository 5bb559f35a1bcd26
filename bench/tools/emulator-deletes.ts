/**
 * Why the emulated S3 deleted ~100 keys a second in the scale bench: times DeleteObjects (1,000
 * keys a request), listing and uploads on fauxqs with each storage backend, with N small objects
 * in one folder as the scale bench's orphans are, and with 1 and 4 delete requests in flight.
 * Talks to the emulator directly (no per-request delay): this measures the emulator, not S3.
 *
 *   node bench/tools/emulator-deletes.ts --objects 20000 --backends memory,files
 *
 * Prints a markdown table.
 */
import { DeleteObjectsCommand, ListObjectsV2Command } from "@aws-sdk/client-s3";
import { parseArgs } from "node:util";
import { performance } from "node:perf_hooks";
import { S3Env, type S3Backend } from "../harness/s3-env.ts";

const { values } = parseArgs({
  options: {
    objects: { type: "string", default: "20000" },
    backends: { type: "string", default: "memory,files" },
    batches: { type: "string", default: "4" },
  },
});
const objects = Number(values.objects);
const batchesPerCase = Number(values.batches);
const backends = values.backends!.split(",").map((b) => b.trim()) as S3Backend[];
if (!(objects >= 2 * batchesPerCase * 1000) || backends.some((b) => b !== "memory" && b !== "files")) {
  throw new Error("--objects must cover 2 × --batches × 1,000 keys; --backends is a list of memory, files");
}

const key = (i: number) => `probe/t.lance/data/orphan-${String(i).padStart(8, "0")}.lance`;
const rows: string[] = [];
for (const backend of backends) {
  const s3 = await S3Env.start(0, backend);
  try {
    const body = new Uint8Array(64);
    let next = 0;
    let started = performance.now();
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (next < objects) await s3.putObject(key(next++), body);
      }),
    );
    const putMs = performance.now() - started;

    started = performance.now();
    let pages = 0;
    let token: string | undefined;
    do {
      const page = await s3.setupClient.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: "probe/", ContinuationToken: token }));
      pages++;
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    const listMs = performance.now() - started;

    // `batchesPerCase` requests of 1,000 keys, first one at a time, then all at once.
    let first = 0;
    const deleteCase = async (inFlight: number): Promise<number> => {
      const batches = Array.from({ length: batchesPerCase }, (_, b) => Array.from({ length: 1000 }, (_, i) => ({ Key: key(first + b * 1000 + i) })));
      first += batchesPerCase * 1000;
      const send = (batch: { Key: string }[]) => s3.setupClient.send(new DeleteObjectsCommand({ Bucket: s3.bucket, Delete: { Objects: batch, Quiet: true } }));
      const t = performance.now();
      for (let i = 0; i < batches.length; i += inFlight) await Promise.all(batches.slice(i, i + inFlight).map(send));
      return ((batchesPerCase * 1000) / (performance.now() - t)) * 1000;
    };
    const sequential = await deleteCase(1);
    const concurrent = await deleteCase(4);
    rows.push(
      `| ${backend} | ${objects.toLocaleString("en")} | ${Math.round((objects / putMs) * 1000).toLocaleString("en")} | ${pages} pages in ${(listMs / 1000).toFixed(1)} s | ${Math.round(sequential).toLocaleString("en")} | ${Math.round(concurrent).toLocaleString("en")} |`,
    );
    process.stderr.write(`${rows.at(-1)}\n`);
  } finally {
    await s3.stop();
  }
}
process.stdout.write(
  [
    `\`node bench/tools/emulator-deletes.ts ${process.argv.slice(2).join(" ")}\``,
    "",
    "| backend | objects in the folder | uploads/s (32 in flight) | full listing | keys deleted/s, 1 request in flight | keys deleted/s, 4 in flight |",
    "| --- | ---: | ---: | ---: | ---: | ---: |",
    ...rows,
    "",
  ].join("\n"),
);
