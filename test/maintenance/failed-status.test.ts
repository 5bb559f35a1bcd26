/**
 * A cleanup whose deletes failed is reported "failed", not "completed": in the CLI's report
 * and in the receipt under `_lakewarden/runs/`. (The pipeline itself got through every stage;
 * the next run retries the deletes.)
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { reportedStatus } from "../../lib/maintenance/cleanup-report.ts";
import { runCleanup } from "../../lib/maintenance/run-cleanup.ts";
import { FaultInjectingStore } from "../support/fault-injecting-store.ts";
import { LocalStore } from "../../lib/store/local-store.ts";
import { buildLanceDataset, makeTempDir, removeDir } from "../support/lance-datasets.ts";
import { copyTree } from "./lance-checks.ts";

let dir: string;
let template: string;

beforeAll(async () => {
  dir = await makeTempDir("lw-failed-status-");
  template = join(dir, "template");
  const dataset = await buildLanceDataset({
    dbUri: template,
    steps: [
      { op: "create", rows: 10 },
      { op: "append", rows: 5 },
      { op: "delete", where: "id % 2 = 0" },
      { op: "append", rows: 5 },
    ],
  });
  dataset.close();
});
afterAll(async () => {
  await removeDir(dir);
});

it("a run with failed delete batches: status failed in what it reports and in its receipt", async () => {
  let found = false;
  // Mutation k fails: somewhere among the first ones is a delete batch (which reports, not throws).
  for (let k = 1; k <= 20 && !found; k++) {
    const copy = join(dir, `k${k}`);
    await copyTree(template, copy);
    const store = new LocalStore(join(copy, "t.lance"));
    const faulty = new FaultInjectingStore(store, { failMutations: [{ at: k }] });
    const report = await runCleanup(faulty, { settings: { olderThanMs: 0 }, deleteBatchSize: 2 }).catch(() => null);
    if (!report || report.delete_failures.length === 0 || report.status !== "completed" || !report.receipt) continue;
    found = true;
    expect(reportedStatus(report)).toBe("failed");
    const receipt = JSON.parse(await readFile(join(copy, "t.lance", report.receipt), "utf8")) as { status: string; delete_failures: unknown[] };
    expect(receipt.status).toBe("failed");
    expect(receipt.delete_failures.length).toBeGreaterThan(0);
  }
  expect(found, "some k makes a delete batch fail while the run goes on").toBe(true);
});

it("a run without failures stays completed", () => {
  expect(reportedStatus({ status: "completed", delete_failures: [], errors: [] })).toBe("completed");
  expect(reportedStatus({ status: "stopped", delete_failures: [{ key: "k", message: "m" }], errors: [] })).toBe("stopped");
});
