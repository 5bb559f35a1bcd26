/**
 * A small cleanup as a chain of dependent round trips (issue 26: on S3 every one is ~20 ms the
 * peers do not pay): what goes out together does, and what must come first still does. Every
 * request answers after a delay; the longest chain of requests each started after the one before
 * it ended is what the run waits for. Before any delete the lease, the checkpoint and the intent
 * are written (their requests ended); the format's folders are listed together; the tidy-ups after
 * the last checkpoint go out together, and the receipt beside the lease's release.
 */
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { deltaFormat } from "../../lib/formats/delta/delta-format.ts";
import { icebergFormat } from "../../lib/formats/iceberg/iceberg-format.ts";
import { lanceFormat } from "../../lib/formats/lance/lance-format.ts";
import type { TableFormat } from "../../lib/formats/table-format.ts";
import { runCleanup } from "../../lib/maintenance/run-cleanup.ts";
import { LocalStore } from "../../lib/store/local-store.ts";
import { copyFixtureDir } from "../support/fixtures.ts";
import { buildLanceDataset, makeTempDir, removeDir } from "../support/lance-datasets.ts";
import { longestChain, recordRequests, type TimedRequest } from "../support/request-chain.ts";
import { aggressive } from "./damage/damage.ts";

const LATENCY_MS = 10;
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});

async function lanceTable(): Promise<string> {
  const dbUri = await makeTempDir("lw-round-trips-");
  cleanups.push(() => removeDir(dbUri));
  const ds = await buildLanceDataset({
    dbUri,
    steps: [
      { op: "create", rows: 10 },
      { op: "overwrite", rows: 5 },
      { op: "overwrite", rows: 5 },
    ],
  });
  ds.close();
  return join(dbUri, "t.lance");
}

async function fixture(format: "delta" | "iceberg", name: string): Promise<string> {
  const copy = await copyFixtureDir(format, name);
  cleanups.push(copy.remove);
  return copy.dir;
}

async function cleanRecorded(dir: string, format: TableFormat): Promise<{ requests: TimedRequest[]; chain: TimedRequest[]; log: string }> {
  const store = new LocalStore(dir);
  const requests = recordRequests(store, LATENCY_MS);
  const report = await runCleanup(store, { format, ...aggressive() });
  expect(report.status).toBe("completed");
  expect(report.versions_removed.length + Object.keys(report.files_removed).length).toBeGreaterThan(0);
  const chain = longestChain(requests);
  return { requests, chain, log: chain.map((r) => r.what).join("\n") };
}

const isIntent = (r: TimedRequest) => r.what.startsWith("PUT _lakewarden/runs/") && r.what.includes(".intent.json");
const isCheckpoint = (r: TimedRequest) => r.what.startsWith("PUT _lakewarden/checkpoints/");

/**
 * The lease is the run's first request; every delete of the format's files starts after it ended,
 * and after the checkpoint and the intent ended (`removing`: both written before the first delete).
 */
function expectWritesBeforeDeletes(requests: readonly TimedRequest[], removing: boolean): void {
  expect(requests[0]!.what).toBe("PUT _lakewarden/lease if-none-match");
  const deletes = requests.filter((r) => r.what.startsWith("DELETE") && !r.what.includes("first _lakewarden/"));
  expect(deletes.length).toBeGreaterThan(0);
  const firstDelete = Math.min(...deletes.map((r) => r.start));
  const writes = requests.filter((r) => (isIntent(r) || isCheckpoint(r)) && r.start < firstDelete);
  if (removing) expect([writes.some(isCheckpoint), writes.some(isIntent)]).toEqual([true, true]);
  for (const write of [requests[0]!, ...writes]) expect(write.end, write.what).toBeLessThan(firstDelete);
}

const overlap = (a: TimedRequest, b: TimedRequest) => a.start < b.end && b.start < a.end;

/** Each of `prefixes` has a LIST that was in flight with the one LIST of `anchor`: listed together. */
function listedTogether(requests: readonly TimedRequest[], prefixes: readonly string[], anchor: string): boolean {
  const at = requests.find((r) => r.what === `LIST ${anchor}`)!;
  return prefixes.every((prefix) => requests.some((r) => r.what === `LIST ${prefix}` && overlap(r, at)));
}

/** The receipt's PUT went out beside the lease's release. */
function receiptBesideRelease(requests: readonly TimedRequest[]): boolean {
  const receipt = requests.findLast((r) => r.what.startsWith("PUT _lakewarden/runs/") && !isIntent(r))!;
  const release = requests.findLast((r) => r.what === "PUT _lakewarden/lease if-match")!;
  return overlap(receipt, release);
}

describe("a small cleanup's dependent round trips", () => {
  it("lance: its folders listed together, the receipt beside the release, 16 round trips", async () => {
    const { requests, chain, log } = await cleanRecorded(await lanceTable(), lanceFormat);
    expectWritesBeforeDeletes(requests, true);
    expect(listedTogether(requests, lanceFormat.managedPrefixes, "data/"), log).toBe(true);
    expect(receiptBesideRelease(requests), log).toBe(true);
    expect(chain.length, log).toBeLessThanOrEqual(16);
  });

  it("delta: 17 round trips", async () => {
    const { requests, chain, log } = await cleanRecorded(await fixture("delta", "simple_table"), deltaFormat);
    expectWritesBeforeDeletes(requests, false);
    expect(receiptBesideRelease(requests), log).toBe(true);
    expect(chain.length, log).toBeLessThanOrEqual(17);
  });

  it("iceberg: metadata/ and data/ listed together, 29 round trips", async () => {
    const { requests, chain, log } = await cleanRecorded(await fixture("iceberg", "spark-bunnies"), icebergFormat);
    expectWritesBeforeDeletes(requests, true);
    expect(listedTogether(requests, icebergFormat.managedPrefixes, "data/"), log).toBe(true);
    expect(receiptBesideRelease(requests), log).toBe(true);
    expect(chain.length, log).toBeLessThanOrEqual(29);
  });
});
