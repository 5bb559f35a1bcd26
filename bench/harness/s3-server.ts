/**
 * Child-process entry: the emulated S3 of the benchmarks. Starts fauxqs (objects stored as
 * files under the given directory, or held in memory when it is `memory`) and, in front of it, an HTTP proxy that holds every
 * request for a fixed delay before forwarding it, so each round trip costs what an S3
 * request does. Both tools talk to the proxy, so both pay the same per-request price, and
 * the proxy counts requests by kind for the tool whose own counters we cannot read (LanceDB).
 *
 * Runs in its own process so the emulator's CPU work never lands on the event loop of the
 * code being timed. Prints one JSON line `{"endpoint": "http://127.0.0.1:PORT", "direct": ...}` when ready.
 * Control endpoints (not delayed, not forwarded): GET /__bench/stats, GET /__bench/log (every request
 * since the last reset: method, path, when it arrived and when its answer was sent, ms), POST /__bench/reset;
 * with the memory backend, POST /__bench/load and /__bench/save ({"dir", "prefix"}: a local folder into the
 * bucket with its files' times, and back; s3-seed.ts), answered with {"objects": n}.
 *
 * Usage: node bench/harness/s3-server.ts <storage-dir|memory> <delay-ms> <bucket>
 *
 * Why `memory` exists: fauxqs 2.4.1's file backend removes one object with two unlinks and then
 * reads the whole parent directory (to prune it if empty), so every key deleted from a directory
 * of n objects costs O(n): 31 keys a second with 10,000 objects in one folder, against ~20,000
 * in memory (bench/tools/emulator-deletes.ts, bench/results/scale-cleanup.md).
 *
 * Listings come in S3's byte order (test/support/fauxqs-s3-order.ts): fauxqs's own locale order
 * makes delta-rs refuse a table and paged listings skip keys.
 */
import { createServer, request as httpRequest, Agent, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { startFauxqs } from "fauxqs";
import { useS3ListingOrder } from "../../test/support/fauxqs-s3-order.ts";
import { captureStore, loadFolder, saveFolder } from "./s3-seed.ts";
import { classifyS3Request, emptyCounts, type ProxyCounts } from "./s3-request-kind.ts";

const [storageDir, delayArg, bucket] = process.argv.slice(2);
if (!storageDir || !delayArg || !bucket) {
  process.stderr.write("usage: s3-server.ts <storage-dir|memory> <delay-ms> <bucket>\n");
  process.exit(2);
}
const delayMs = Number(delayArg);

await useS3ListingOrder();
await captureStore();
const fauxqs = await startFauxqs({ port: 0, logger: false, ...(storageDir === "memory" ? {} : { s3StorageDir: storageDir }) });
fauxqs.createBucket(bucket);
const upstream = new URL(fauxqs.address);
const agent = new Agent({ keepAlive: true, maxSockets: 256 });

let counts: ProxyCounts = emptyCounts();
/** The requests since the last reset, for counting dependent round trips (bench/benchmarks/cold-query.ts). */
let log: { method: string; path: string; start: number; end: number }[] = [];

const proxy = createServer((req, res) => {
  if (req.url?.startsWith("/__bench/")) return control(req, res);
  counts[classifyS3Request(req.method ?? "GET", req.url ?? "/")]++;
  const entry = { method: req.method ?? "GET", path: req.url ?? "/", start: performance.now(), end: Number.NaN };
  log.push(entry);
  res.once("finish", () => (entry.end = performance.now()));
  // Hold the request (body included) for the delay, then stream it through unchanged.
  req.pause();
  setTimeout(() => forward(req, res, req.headers), delayMs);
});

/**
 * Forwards one request to fauxqs. One fix-up makes the emulator answer like S3: a suffix
 * range longer than the object (`bytes=-65536` on a 9 KB file) gets the whole object from
 * S3 (RFC 9110 §14.1.1) but a 416 from fauxqs 2.4.1; such a 416 is retried as the full range.
 */
function forward(req: IncomingMessage, res: ServerResponse, headers: IncomingHttpHeaders, retried = false): void {
  const upstreamRequest = httpRequest({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers, agent }, (answer) => {
    const size = /^bytes \*\/(\d+)$/.exec(String(answer.headers["content-range"] ?? ""))?.[1];
    if (answer.statusCode === 416 && !retried && /^bytes=-\d+$/.test(String(headers.range ?? "")) && Number(size) > 0) {
      answer.resume();
      forward(req, res, { ...headers, range: `bytes=0-${Number(size) - 1}` }, true);
      return;
    }
    res.writeHead(answer.statusCode ?? 502, answer.headers);
    answer.pipe(res);
  });
  upstreamRequest.on("error", (error) => {
    if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
    res.end(`bench proxy: ${error.message}`);
  });
  if (retried) {
    upstreamRequest.end();
  } else {
    req.pipe(upstreamRequest);
    req.resume();
  }
}

function control(req: IncomingMessage, res: ServerResponse): void {
  if ((req.url === "/__bench/load" || req.url === "/__bench/save") && req.method === "POST") {
    void seed(req, res);
  } else if (req.url === "/__bench/stats") {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(counts));
  } else if (req.url === "/__bench/log") {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(log));
  } else if (req.url === "/__bench/reset" && req.method === "POST") {
    counts = emptyCounts();
    log = [];
    res.writeHead(204).end();
  } else {
    res.writeHead(404).end();
  }
}

/** POST /__bench/load and /__bench/save: setup that bypasses S3 requests (s3-seed.ts). */
async function seed(req: IncomingMessage, res: ServerResponse): Promise<void> {
  try {
    if (storageDir !== "memory") throw new Error("load and save need the memory backend");
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const { dir, prefix } = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { dir: string; prefix: string };
    const objects = req.url === "/__bench/load" ? await loadFolder(bucket!, dir, prefix) : await saveFolder(bucket!, prefix, dir);
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ objects }));
  } catch (error) {
    res.writeHead(500, { "content-type": "text/plain" });
    res.end((error as Error).message);
  }
}

proxy.keepAliveTimeout = 60_000;
proxy.listen(0, "127.0.0.1", () => {
  const { port } = proxy.address() as AddressInfo;
  // `direct` skips the delay: for loading datasets, which is setup, not measurement.
  process.stdout.write(`${JSON.stringify({ endpoint: `http://127.0.0.1:${port}`, direct: fauxqs.address })}\n`);
});

const shutdown = async () => {
  proxy.close();
  await fauxqs.stop();
  process.exit(0);
};
process.on("SIGTERM", () => void shutdown());
process.on("SIGINT", () => void shutdown());
// The parent going away (crash, Ctrl-C) must not leave an orphan server behind.
process.stdin.on("end", () => void shutdown());
process.stdin.resume();
