/**
 * A cold load of a current head, as a chain of dependent round trips (issue 25: the head's GET
 * and the check that it is current go out together). Every request answers after a delay, like
 * S3 at a distance; a request that starts after another has ended depends on it, and the
 * longest such chain is the number of round trips a reader waits for.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formatByName } from "../../lib/formats/index.ts";
import { loadTableState, openTable } from "../../lib/head/loader.ts";
import { writeTableHead } from "../../lib/head/write-table-head.ts";
import { LocalStore } from "../../lib/store/local-store.ts";
import { copyFixtureDir } from "../support/fixtures.ts";
import { appendSnapshot } from "../support/iceberg-fixtures.ts";
import { BUNNIES } from "../support/iceberg-histories.ts";
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

async function coldLoadOfCurrentHead(store: LocalStore, formatName: string, pointer?: string) {
  const registered = formatByName(formatName);
  // At a pointer: the format bound to the metadata file a catalog names (`--metadata-location`, `{ catalog }`).
  const format = pointer === undefined ? registered : registered.at!(pointer);
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

  // Iceberg: the LIST of metadata/ and the version hint go out beside the head's GET, and the
  // listing alone shows the head's metadata file unchanged and newest: no metadata file is read.
  // (Athena's catalog-named table is read at its catalog's pointer only: below.)
  for (const fixture of ["spark-bunnies", "legacy_v1", "hive_partitioned_table"]) {
    it(`iceberg ${fixture}: one round trip, no metadata file read`, async () => {
      const copy = await copyFixtureDir("iceberg", fixture);
      try {
        const { requests, roundTrips, log } = await coldLoadOfCurrentHead(new LocalStore(copy.dir), "iceberg");
        expect(roundTrips, log.join("\n")).toBe(1);
        expect(
          requests.filter((r) => r.what.includes(".metadata.json")),
          log.join("\n"),
        ).toEqual([]);
      } finally {
        await copy.remove();
      }
    });
  }

  // A table whose catalog names its metadata file (Athena's, catalog-named): the pointer's HEAD goes
  // out beside the head's GET, and shows the head's file unchanged; no metadata file is read.
  it("iceberg at a catalog's pointer (athena-example): one round trip, the pointer's HEAD and no metadata file read", async () => {
    const copy = await copyFixtureDir("iceberg", "athena-example");
    try {
      const pointer = "metadata/00001-aaf0d033-d06b-43c7-be60-67f83abd4aca.metadata.json";
      const { requests, roundTrips, log } = await coldLoadOfCurrentHead(new LocalStore(copy.dir), "iceberg", pointer);
      expect(roundTrips, log.join("\n")).toBe(1);
      expect(requests.map((r) => r.what).sort(), log.join("\n")).toEqual([`GET _lakewarden/head {"offset":0,"length":4194304}`, `HEAD ${pointer}`]);
    } finally {
      await copy.remove();
    }
  });

  // Delta: a LIST can only start after a key, and the log's tail is what is looked for, so the
  // head's version comes first: the head's GET, then one LIST from its version (no
  // `_last_checkpoint` needed then, but read beside the head's GET for a load without a head).
  for (const fixture of ["delta-0.2.0", "checkpoint-cdf-table"]) {
    it(`delta ${fixture}: two round trips, the head's GET and then one LIST from its version`, async () => {
      const copy = await copyFixtureDir("delta", fixture);
      try {
        const { requests, roundTrips, log } = await coldLoadOfCurrentHead(new LocalStore(copy.dir), "delta");
        expect(roundTrips, log.join("\n")).toBe(2);
        const headGet = requests.find((r) => r.what.startsWith("GET _lakewarden/head"))!;
        expect(dependentRoundTrips([headGet, ...requests.filter((r) => r.start < headGet.start)]), log.join("\n")).toBe(1);
        expect(
          requests.filter((r) => r.what.startsWith("LIST")).map((r) => r.what),
          log.join("\n"),
        ).toHaveLength(1);
      } finally {
        await copy.remove();
      }
    });
  }
});

/** A warm check (the check interval passed, nothing committed since): what `latest()` costs. */
async function warmCheck(store: LocalStore, formatName: string) {
  const format = formatByName(formatName);
  await writeTableHead(store, { format });
  const handle = await openTable(store, { format, versionCheckInterval: 0 });
  const before = handle.current()!;
  const requests = recordRequests(store);
  const state = await handle.latest();
  expect(state.version).toBe(before.version);
  expect(state.snapshot).toBe(before.snapshot);
  return { requests, roundTrips: dependentRoundTrips(requests), log: requests.map((r) => `${r.start}-${r.end} ${r.what}`) };
}

describe("warm check of an unchanged table: one round trip", () => {
  it("lance: one LIST", async () => {
    const { requests, roundTrips, log } = await warmCheck(new LocalStore(dataset.tableUri), "lance");
    expect(roundTrips, log.join("\n")).toBe(1);
    expect(requests, log.join("\n")).toHaveLength(1);
  });

  it("iceberg: the LIST of metadata/ and the version hint, no metadata file read", async () => {
    const copy = await copyFixtureDir("iceberg", "spark-bunnies");
    try {
      const { requests, roundTrips, log } = await warmCheck(new LocalStore(copy.dir), "iceberg");
      expect(roundTrips, log.join("\n")).toBe(1);
      expect(requests.map((r) => r.what.split(" ")[0]).sort(), log.join("\n")).toEqual(["GET", "LIST"]);
      expect(
        requests.filter((r) => r.what.includes(".metadata.json")),
        log.join("\n"),
      ).toEqual([]);
    } finally {
      await copy.remove();
    }
  });

  for (const fixture of ["delta-0.2.0", "checkpoint-cdf-table"]) {
    it(`delta ${fixture}: one LIST of the log from the known version, nothing else`, async () => {
      const copy = await copyFixtureDir("delta", fixture);
      try {
        const { requests, roundTrips, log } = await warmCheck(new LocalStore(copy.dir), "delta");
        expect(roundTrips, log.join("\n")).toBe(1);
        expect(
          requests.map((r) => r.what),
          log.join("\n"),
        ).toEqual([expect.stringMatching(/^LIST _delta_log\/ after /)]);
      } finally {
        await copy.remove();
      }
    });
  }
});

describe("warm check after a commit: the new version is found", () => {
  it("delta: a commit after the known version is loaded (from the one LIST)", async () => {
    const copy = await copyFixtureDir("delta", "delta-0.2.0");
    try {
      const store = new LocalStore(copy.dir);
      const handle = await openTable(store, { format: formatByName("delta"), versionCheckInterval: 0 });
      expect(handle.current()!.version).toBe(3);
      const commitInfo = { commitInfo: { timestamp: 1_700_000_000_000, operation: "SET TBLPROPERTIES", operationParameters: {} } };
      await store.put("_delta_log/00000000000000000004.json", new TextEncoder().encode(`${JSON.stringify(commitInfo)}\n`));
      expect((await handle.latest()).version).toBe(4);
    } finally {
      await copy.remove();
    }
  });

  it("iceberg: a newer metadata file is loaded", async () => {
    const copy = await copyFixtureDir("iceberg", "spark-bunnies");
    try {
      const store = new LocalStore(copy.dir);
      const format = formatByName("iceberg");
      await writeTableHead(store, { format });
      const handle = await openTable(store, { format, versionCheckInterval: 0 });
      const before = handle.current()!;
      expect(before.source).toBe("head");
      const appended = await appendSnapshot(copy.dir, { files: [{ path: `${BUNNIES}/data/extra-00001.parquet`, recordCount: 20, sizeInBytes: 3560 }] });
      const after = await handle.latest();
      expect(after.version).toBeGreaterThan(before.version);
      expect(after.snapshot.versionFile).toMatchObject({ key: appended.metadataKey, id: appended.snapshotId });
    } finally {
      await copy.remove();
    }
  });
});
