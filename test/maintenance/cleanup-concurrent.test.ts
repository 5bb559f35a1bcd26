/**
 * Cleanup while the table is in use: a LanceDB writer committing in a loop during several
 * cleanup rounds, and two cleaners on one table at once.
 */
import { afterAll, describe, expect, it } from "vitest";
import type * as lancedb from "@lancedb/lancedb";
import { lanceFormat } from "../../lib/formats/lance/lance-format.ts";
import { LeaseHeldError } from "../../lib/maintenance/errors.ts";
import { LEASE_KEY } from "../../lib/maintenance/lease.ts";
import { runCleanup } from "../../lib/maintenance/run-cleanup.ts";
import type { CleanupReport } from "../../lib/maintenance/cleanup-report.ts";
import { FaultInjectingStore } from "../support/fault-injecting-store.ts";
import { LocalStore } from "../../lib/store/local-store.ts";
import { buildLanceDataset, makeTempDir, removeDir } from "../support/lance-datasets.ts";
import { readContents, type VersionContent } from "./lance-checks.ts";

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await removeDir(dir);
});

async function newTable(rows = 10) {
  const dbUri = await makeTempDir("lw-concurrent-");
  dirs.push(dbUri);
  const ds = await buildLanceDataset({
    dbUri,
    steps: [
      { op: "create", rows },
      { op: "append", rows: 5 },
      { op: "overwrite", rows: 8 },
    ],
  });
  return ds;
}

async function contentOf(table: lancedb.Table): Promise<VersionContent> {
  const rows = await table.query().select(["id"]).toArray();
  return { rows: rows.length, idSum: rows.reduce((sum, row) => sum + Number(row.id), 0), filtered: await table.countRows("id >= 0") };
}

describe("a LanceDB writer committing in a loop while cleanup runs", () => {
  it("every committed version a round did not remove stays readable with its rows; no round removes a version committed during it", async () => {
    const ds = await newTable();
    const store = new LocalStore(ds.tableUri);
    const committed = new Map<number, VersionContent>();
    committed.set(await ds.table.version(), await contentOf(ds.table));
    let stop = false;
    let nextId = 1000;

    const writer = async (): Promise<void> => {
      for (let i = 0; !stop; i++) {
        const rows = Array.from({ length: 3 }, () => ({ id: nextId, name: `w-${nextId}`, score: nextId++ / 2 }));
        if (i % 4 === 3) await ds.table.add(rows, { mode: "overwrite" });
        else if (i % 4 === 2) await ds.table.delete(`id = ${nextId - 7}`);
        else await ds.table.add(rows);
        committed.set(await ds.table.version(), await contentOf(ds.table));
      }
    };

    const reports: CleanupReport[] = [];
    const cleaner = async (): Promise<void> => {
      for (let round = 0; round < 5; round++) {
        await new Promise((resolve) => setTimeout(resolve, 30));
        reports.push(await runCleanup(store, { settings: { olderThanMs: 0 } }));
      }
      stop = true;
    };
    await Promise.all([writer(), cleaner()]);

    const latest = await ds.table.version();
    ds.close();
    expect(committed.size).toBeGreaterThan(10);
    expect(reports.every((r) => r.status === "completed")).toBe(true);
    expect(reports.reduce((n, r) => n + r.versions_removed.length, 0)).toBeGreaterThan(5);
    for (const report of reports) {
      expect(report.errors).toEqual([]);
      expect(report.reference_check?.ok).toBe(true);
      // Everything at or above the latest version seen at the start of the round survived it.
      expect(Math.max(...report.versions_removed, -1)).toBeLessThan(report.latest_version_at_start!);
    }
    const removed = new Set(reports.flatMap((r) => r.versions_removed));
    const after = await readContents(ds.dbUri);
    expect(after.latest).toBe(latest);
    const listed = (await lanceFormat.listVersionFiles(store)).map((f) => f.version);
    expect([...after.versions.keys()]).toEqual(listed);
    for (const [version, content] of committed) {
      if (removed.has(version)) {
        expect(after.versions.has(version), `version ${version} was removed`).toBe(false);
        continue;
      }
      expect(after.versions.get(version), `version ${version}`).toEqual(content);
    }
  });
});

describe("two cleanups of one table at once", () => {
  it("one stops with a clear message about the lease, the other completes", async () => {
    const ds = await newTable();
    ds.close();
    const slow = new FaultInjectingStore(new LocalStore(ds.tableUri), { latencyMs: { delete: 150 } });
    const cutoff = new Date(Date.now() + 1000);
    const first = runCleanup(slow, { settings: { olderThanMs: 0 }, now: () => cutoff });
    // Start the second once the first holds the lease.
    const other = new LocalStore(ds.tableUri);
    for (let i = 0; i < 200; i++) {
      try {
        await other.head(LEASE_KEY);
        break;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    }
    const second = runCleanup(other, { settings: { olderThanMs: 0 }, now: () => cutoff });
    await expect(second).rejects.toThrow(LeaseHeldError);
    await expect(second).rejects.toThrow(
      new RegExp(
        `^${other.uriOf(LEASE_KEY).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: another cleanup holds this table's lease \\(run [0-9a-f-]+ on .+, since .+, until .+\\); this run stops without touching the table$`,
      ),
    );
    const report = await first;
    expect(report.status).toBe("completed");
    expect(report.versions_removed).toEqual([1, 2]);
    // Released: the next cleanup runs.
    expect((await runCleanup(other, { settings: { olderThanMs: 0 }, now: () => cutoff })).status).toBe("completed");
  });
});
