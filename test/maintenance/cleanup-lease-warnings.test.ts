/**
 * What a cleanup says about the lease it found: nothing after a run that released it, a
 * warning after a run that died holding it (its lease expired instead of being released).
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { Lease } from "../../lib/maintenance/lease.ts";
import { runCleanup } from "../../lib/maintenance/run-cleanup.ts";
import { LocalStore } from "../../lib/store/local-store.ts";
import { buildLanceDataset, makeTempDir, removeDir } from "../support/lance-datasets.ts";

let dir: string;
let store: LocalStore;

beforeAll(async () => {
  dir = await makeTempDir("lw-lease-warnings-");
  const dataset = await buildLanceDataset({
    dbUri: dir,
    steps: [
      { op: "create", rows: 5 },
      { op: "append", rows: 5 },
    ],
  });
  dataset.close();
  store = new LocalStore(dataset.tableUri);
});
afterAll(() => removeDir(dir));

const leaseWarnings = (warnings: readonly string[]) => warnings.filter((w) => w.includes("lease"));

it("a run after a run that released its lease has nothing to say about it", async () => {
  await runCleanup(store);
  const second = await runCleanup(store);
  expect(second.status).toBe("completed");
  expect(leaseWarnings(second.warnings)).toEqual([]);
});

it("a run after a run that died holding the lease says it took an expired lease over", async () => {
  const started = Date.now();
  await Lease.acquire(store, { runId: "crashed-run", owner: "host-x:1", durationMs: 1_000, now: () => new Date(started) });
  const report = await runCleanup(store, { now: () => new Date(started + 5_000) });
  expect(leaseWarnings(report.warnings)).toEqual([expect.stringMatching(/took over the expired lease of run crashed-run \(host-x:1\)/)]);
});
