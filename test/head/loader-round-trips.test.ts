/**
 * A cold load of a current head, as a chain of dependent round trips (issue 25: the head's GET
 * and the check that it is current go out together). Every request answers after a delay, like
 * S3 at a distance; a request that starts after another has ended depends on it, and the
 * longest such chain is the number of round trips a reader waits for.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formatByName } from "../../lib/formats/index.ts";
import { loadTableState } from "../../lib/head/loader.ts";
import { writeTableHead } from "../../lib/head/write-table-head.ts";
import { LocalStore } from "../../lib/store/local-store.ts";
import { copyFixtureDir } from "../support/fixtures.ts";
import { buildLanceDataset, makeTempDir, removeDir } from "../support/lance-datasets.ts";
import type { LanceDataset } from "../support/lance-datasets.ts";

const LATENCY_MS = 15;

interface Request {
  what: string;
  start: number;
  end: number;
}

const pause = () => new Promise<void>((resolve) => setTimeout(resolve, LATENCY_MS));

/** Records every request's start and end on `store`, each answered after LATENCY_MS. */
function recordRequests(store: LocalStore): Request[] {
  const requests: Request[] = [];
  let clock = 0;
  // A logical clock: "after" means after, whatever the timer's resolution.
  const tick = () => ++clock;
  const timed = async <T>(what: string, run: () => Promise<T>): Promise<T> => {
    const request = { what, start: tick(), end: Number.POSITIVE_INFINITY };
    requests.push(request);
    try {
      await pause();
      return await run();
    } finally {
      request.end = tick();
    }
  };
  const get = store.get.bind(store);
  store.get = (key, range) => timed(`GET ${key}${range ? ` ${JSON.stringify(range)}` : ""}`, () => get(key, range));
  const head = store.head.bind(store);
  store.head = (key) => timed(`HEAD ${key}`, () => head(key));
  const listPrefixes = store.listPrefixes.bind(store);
  store.listPrefixes = (prefix) => timed(`LIST ${prefix} (prefixes)`, () => listPrefixes(prefix));
  // A listing is one request from its first page asked to its last given (our tables list in one page).
  const timedList =
    <T>(kind: string, list: (prefix: string, options?: Parameters<LocalStore["list"]>[1]) => AsyncIterable<T>) =>
    (prefix: string, options?: Parameters<LocalStore["list"]>[1]): AsyncIterable<T> => ({
      async *[Symbol.asyncIterator]() {
        const entries = await timed(`${kind} ${prefix}${options?.startAfter ? ` after ${options.startAfter}` : ""}`, async () => {
          const all: T[] = [];
          for await (const entry of list(prefix, options)) all.push(entry);
          return all;
        });
        yield* entries;
      },
    });
  store.list = timedList("LIST", store.list.bind(store));
  if (store.listKeys) store.listKeys = timedList("LIST", store.listKeys.bind(store));
  return requests;
}

/** The longest chain of requests each started after the one before it ended. */
function dependentRoundTrips(requests: readonly Request[]): number {
  const depth = new Map<Request, number>();
  for (const request of [...requests].sort((a, b) => a.start - b.start)) {
    const before = requests.filter((other) => other.end < request.start).map((other) => depth.get(other) ?? 0);
    depth.set(request, 1 + Math.max(0, ...before));
  }
  return Math.max(0, ...depth.values());
}

let dir: string;
let dataset: LanceDataset;

beforeAll(async () => {
  dir = await makeTempDir("lw-loader-round-trips-");
  dataset = await buildLanceDataset({
    dbUri: dir,
    steps: [
      { op: "create", rows: 4 },
      { op: "append", rows: 2 },
    ],
  });
});
afterAll(async () => {
  dataset?.close();
  await removeDir(dir);
});

async function coldLoadOfCurrentHead(store: LocalStore, formatName: string) {
  const format = formatByName(formatName);
  await writeTableHead(store, { format });
  const requests = recordRequests(store);
  const state = await loadTableState(store, { format });
  expect(state).toMatchObject({ source: "head", warning: null });
  return { requests, roundTrips: dependentRoundTrips(requests), log: requests.map((r) => `${r.start}-${r.end} ${r.what}`) };
}

describe("cold load of a current head: dependent round trips", () => {
  it("lance: the head's GET and the LIST of _versions/ go out together, one round trip", async () => {
    const { roundTrips, log } = await coldLoadOfCurrentHead(new LocalStore(dataset.tableUri), "lance");
    expect(roundTrips, log.join("\n")).toBe(1);
  });

  // Measured at 2 (issue 25 wants 1): Delta reads `_last_checkpoint`, then lists the log from its
  // version; Iceberg lists `metadata/` (and reads the version hint), then reads the newest
  // metadata file for its current snapshot. A third would be a regression.
  for (const [formatName, fixture] of [
    ["delta", "delta-0.2.0"],
    ["delta", "checkpoint-cdf-table"],
    ["iceberg", "spark-bunnies"],
  ] as const) {
    it(`${formatName} ${fixture}: the latest version is found in at most two round trips, the first beside the head's GET`, async () => {
      const copy = await copyFixtureDir(formatName, fixture);
      try {
        const { requests, roundTrips, log } = await coldLoadOfCurrentHead(new LocalStore(copy.dir), formatName);
        expect(roundTrips, log.join("\n")).toBeLessThanOrEqual(2);
        const headGet = requests.find((r) => r.what.startsWith("GET _lakewarden/head"))!;
        expect(dependentRoundTrips([headGet, ...requests.filter((r) => r.start < headGet.start)]), log.join("\n")).toBe(1);
      } finally {
        await copy.remove();
      }
    });
  }
});
