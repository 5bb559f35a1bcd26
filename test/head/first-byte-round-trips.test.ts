/**
 * Dependent round trips of a cold `openTable` then `table.scan()` until the first GET of a data
 * file starts (issue 25: two for a current head on every format). With `speculativeScan` the
 * head's state is planned and read beside the check that it is current (lib/head/first-scan.ts):
 * two on Delta and Iceberg. Without it Delta waits for the LIST of its log from the head's version
 * (three), pinned here so the difference stays visible. Lance's rows are not read by lakewarden
 * (its readRows refuses): its first data byte is the first read of a planned fragment's data file
 * by whoever reads the plan, after `openTable` + `plan()`.
 */
import { describe, expect, it } from "vitest";
import { formatByName } from "../../lib/formats/index.ts";
import { scanFromCold } from "../../lib/head/first-scan.ts";
import { openTable } from "../../lib/head/loader.ts";
import { writeTableHead } from "../../lib/head/write-table-head.ts";
import { LocalStore } from "../../lib/store/local-store.ts";
import { copyFixtureDir, type FixtureFormat } from "../support/fixtures.ts";
import { buildLanceDataset, makeTempDir, removeDir } from "../support/lance-datasets.ts";
import { dependentRoundTrips, isDataGet, recordRequests } from "../support/request-log.ts";
import type { LoggedRequest } from "../support/request-log.ts";

/** Resolves once `done()` is true, or after `limitMs` (so a wrong implementation fails the count instead of hanging). */
async function until(done: () => boolean, limitMs: number): Promise<void> {
  const end = Date.now() + limitMs;
  while (!done() && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 5));
}

function toFirst(requests: readonly LoggedRequest[], isData: (r: LoggedRequest) => boolean) {
  const log = requests.map((r) => `${r.start}-${r.end} ${r.what}`).join("\n");
  const first = requests.find(isData);
  expect(first, log).toBeDefined();
  return { roundTrips: dependentRoundTrips(requests.filter((r) => r.start <= first!.start)), log };
}

async function roundTripsToFirstDataByte(formatName: FixtureFormat, fixture: string, speculativeScan: boolean, formatNamed = true, pointer?: string) {
  const copy = await copyFixtureDir(formatName, fixture);
  try {
    const store = new LocalStore(copy.dir);
    const format = pointer ? formatByName(formatName).at!(pointer) : formatByName(formatName);
    await writeTableHead(store, { format });
    // With speculativeScan the currency check is held until a data GET has started (or a few
    // seconds passed): on a busy machine planning may take longer than a round trip, and the
    // question is whether the data read waits for the check, not which one the clock favours.
    const dataStarted = () => requests.some(isDataGet);
    const hold = (what: string) => (speculativeScan && what.startsWith("LIST ") ? until(dataStarted, 3_000) : undefined);
    const requests: LoggedRequest[] = recordRequests(store, { hold });
    let rows = 0;
    if (formatNamed) {
      const table = await openTable(store, { format, speculativeScan });
      for await (const batch of table.scan()) rows += batch.numRows;
      expect(table.current()?.source).toBe("head");
    } else {
      // As `lakewarden scan` without --format: the head names the format.
      const states: string[] = [];
      for await (const batch of scanFromCold(store, { checkedAt: Date.now(), onState: (state) => states.push(state.source) })) rows += batch.rows;
      expect(states).toEqual(["head"]);
    }
    expect(rows).toBeGreaterThan(0);
    return toFirst(requests, isDataGet);
  } finally {
    await copy.remove();
  }
}

describe("cold openTable + scan of a current head: dependent round trips to the first data GET", () => {
  it("iceberg spark-bunnies: two (the head's GET beside the LIST of metadata/, then data)", async () => {
    const { roundTrips, log } = await roundTripsToFirstDataByte("iceberg", "spark-bunnies", false);
    expect(roundTrips, log).toBe(2);
  });

  it("iceberg spark-bunnies with speculativeScan: two", async () => {
    const { roundTrips, log } = await roundTripsToFirstDataByte("iceberg", "spark-bunnies", true);
    expect(roundTrips, log).toBe(2);
  });

  it("iceberg spark-bunnies at a catalog's pointer (its newest metadata file) with speculativeScan: two (the head's GET beside the pointer's HEAD, then data)", async () => {
    const { roundTrips, log } = await roundTripsToFirstDataByte("iceberg", "spark-bunnies", true, true, "metadata/v5.metadata.json");
    expect(roundTrips, log).toBe(2);
    expect(log).toContain("HEAD metadata/v5.metadata.json");
  });

  it("delta delta-0.2.0 with speculativeScan: two (the head's GET, then the LIST from its version beside the data)", async () => {
    const { roundTrips, log } = await roundTripsToFirstDataByte("delta", "delta-0.2.0", true);
    expect(roundTrips, log).toBe(2);
  });

  it("delta delta-0.2.0 without it: three (the head's GET, the LIST from its version, then data)", async () => {
    const { roundTrips, log } = await roundTripsToFirstDataByte("delta", "delta-0.2.0", false);
    expect(roundTrips, log).toBe(3);
  });

  it("iceberg and delta without the format named (lakewarden scan's path): two", async () => {
    for (const [format, fixture] of [
      ["iceberg", "spark-bunnies"],
      ["delta", "delta-0.2.0"],
    ] as const) {
      const { roundTrips, log } = await roundTripsToFirstDataByte(format, fixture, true, false);
      expect(roundTrips, `${format}\n${log}`).toBe(2);
    }
  });

  it("lance (LanceDB): two to the first read of a planned fragment (the head's GET beside the LIST of _versions/, then data)", async () => {
    const dir = await makeTempDir("lw-first-byte-lance-");
    const dataset = await buildLanceDataset({ dbUri: dir, steps: [{ op: "create", rows: 20 }] });
    try {
      const store = new LocalStore(dataset.tableUri);
      const format = formatByName("lance");
      await writeTableHead(store, { format });
      const requests = recordRequests(store);
      const table = await openTable(store, { format });
      const plan = await table.plan({ filter: "id >= 3" });
      expect(table.current()?.source).toBe("head");
      const first = plan.files[0]!.paths[0]!;
      // What a reader of the plan does first with a Lance file: its footer, at the end.
      const { size } = await new LocalStore(dataset.tableUri).head(first);
      await store.get(first, { offset: size - 1, length: 1 });
      const { roundTrips, log } = toFirst(requests, (r) => r.what.startsWith(`GET ${first}`));
      expect(roundTrips, log).toBe(2);
    } finally {
      dataset.close();
      await removeDir(dir);
    }
  });
});
