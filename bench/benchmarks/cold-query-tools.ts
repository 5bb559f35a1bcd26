/**
 * The tools of the cold filtered-query benchmark, each running one cold query per call: lakewarden
 * in this process (openTable, then scan with the filter: head plan + rows, as the library's user
 * runs it), the Python peers in a child process each (bench/tools/query-peers.py: pyiceberg,
 * deltalake, DuckDB), and icebird, which has no filters, reading the table state its query would
 * start from. On S3 every request goes through the delaying proxy, whose log gives the dependent
 * round trips before the first data byte.
 */
import { spawn } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { icebergManifests, icebergMetadata } from "icebird";
import type { TableFormat } from "../../lib/formats/table-format.ts";
import { openTable } from "../../lib/head/loader.ts";
import { toolPython } from "../../test/tools/python-env.ts";
import type { ProxyRequest, S3Env } from "../harness/s3-env.ts";
import type { QuerySpec, QueryTable } from "./cold-query-tables.ts";

const PEERS = fileURLToPath(new URL("../tools/query-peers.py", import.meta.url));

export interface QueryRun {
  ms: number;
  rows: number;
}

/** Runs `runs` cold queries; the caller's `between` runs off the clock before each (reset the proxy). */
export type QueryTool = (runs: number, between: () => Promise<void>, after: (run: QueryRun) => Promise<void>) => Promise<void>;

/**
 * The format is named, as a deltalake or pyiceberg user names it by the library they pick (an
 * Iceberg table at the metadata file its catalog names, as pyiceberg is given it), and the handle
 * is opened for one scan (speculativeScan): the head's data files are read beside the check that
 * the head is current, as `lakewarden scan` reads them.
 */
export function lakewardenTool(location: string, format: TableFormat, query: QuerySpec): QueryTool {
  return async (runs, between, after) => {
    for (let i = 0; i < runs; i++) {
      await between();
      const start = performance.now();
      const table = await openTable(location, { format, speculativeScan: true });
      let rows = 0;
      for await (const batch of table.scan({ filter: query.where })) rows += batch.numRows;
      await after({ ms: performance.now() - start, rows });
    }
  };
}

/** A Python peer: one child process per cell, the imports loaded before the first run. */
export function pythonTool(tool: string, open: string, query: QuerySpec, queryFile: string, endpoint: string | null): QueryTool {
  return async (runs, between, after) => {
    await writeFile(queryFile, JSON.stringify(query.json));
    const child = spawn(toolPython(), [PEERS, tool, open, queryFile, String(runs), ...(endpoint ? [endpoint] : [])], { stdio: ["pipe", "pipe", "inherit"] });
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
    const next = async (): Promise<Record<string, unknown>> => {
      const line = await lines.next();
      if (line.done) throw new Error(`${tool} on ${open}: exited with code ${await exited}`);
      return JSON.parse(line.value) as Record<string, unknown>;
    };
    await next();
    for (let i = 0; i < runs; i++) {
      await between();
      child.stdin!.write("next\n");
      await after((await next()) as unknown as QueryRun);
    }
    child.stdin!.end();
    await exited;
  };
}

/**
 * icebird 0.3.1 reads a table's rows in order with no filter (icebergRead: every data file, one
 * after another), so what it is timed on is the table state a query of it starts from: the
 * metadata file, the manifest list, every manifest. Its S3 URLs become public HTTPS URLs; they are
 * sent to the proxy instead (path style, unsigned: the emulator does not check signatures).
 */
export function icebirdStateTool(table: QueryTable, s3: S3Env): QueryTool {
  const location = table.s3Uri;
  const metadataFileName = table.s3Open.slice(table.s3Open.lastIndexOf("/") + 1);
  return async (runs, between, after) => {
    const realFetch = globalThis.fetch;
    const virtualHost = `https://${s3.bucket}.s3.amazonaws.com/`;
    globalThis.fetch = ((input: string | URL | Request, init?: RequestInit) => {
      const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
      return realFetch(url.startsWith(virtualHost) ? `${s3.endpoint}/${s3.bucket}/${url.slice(virtualHost.length)}` : input, init);
    }) as typeof fetch;
    try {
      for (let i = 0; i < runs; i++) {
        await between();
        const start = performance.now();
        const metadata = await icebergMetadata({ tableUrl: location, metadataFileName });
        const manifests = await icebergManifests(metadata);
        const files = manifests.flatMap((m) => m.entries).filter((e) => e.status !== 2).length;
        if (files !== table.files) throw new Error(`icebird read ${files} live files of ${location}, expected ${table.files}`);
        await after({ ms: performance.now() - start, rows: Number.NaN });
      }
    } finally {
      globalThis.fetch = realFetch;
    }
  };
}

/** A request for a table's data (not its log, metadata, manifests or head): data/…parquet. */
function isDataRequest(r: ProxyRequest): boolean {
  const path = r.path.split("?")[0]!;
  return r.method === "GET" && path.includes("/data/") && path.endsWith(".parquet");
}

/**
 * Dependent round trips up to and including the first data GET: a request's depth is one more
 * than the deepest request answered before it arrived (so requests sent together share a depth,
 * and one sent after another's answer is a round trip later). Null when no data was read.
 */
export function roundTripsToData(log: readonly ProxyRequest[]): number | null {
  const sorted = [...log].sort((a, b) => a.start - b.start);
  const depth: number[] = [];
  let first: number | null = null;
  for (const [i, r] of sorted.entries()) {
    let d = 1;
    // An answer not sent (null: the proxy logged no end) counts as never received.
    for (let j = 0; j < i; j++) if ((sorted[j]!.end ?? Number.POSITIVE_INFINITY) <= r.start) d = Math.max(d, depth[j]! + 1);
    depth.push(d);
    if (first === null && isDataRequest(r)) first = d;
  }
  return first;
}
