/**
 * History is never dropped: a table with more versions removed than a checkpoint holds
 * (`max_entries` set low) still lists every version ever seen, oldest first, with
 * `is_cleaned_up` right, across several cleanups on a real LanceDB table.
 */
import { afterAll, describe, expect, it } from "vitest";
import { loadNewestCheckpoint } from "../../lib/checkpoint/load.ts";
import { listSegments } from "../../lib/checkpoint/segments.ts";
import { lanceFormat } from "../../lib/formats/lance/lance-format.ts";
import { runCleanup } from "../../lib/maintenance/run-cleanup.ts";
import { LocalStore } from "../../lib/store/local-store.ts";
import { readTimeline } from "../../lib/versions/timeline.ts";
import { runCli } from "../../lib/cli/run-cli.ts";
import { BufferIO } from "../../lib/cli/io.ts";
import { buildLanceDataset, makeTempDir, removeDir, type DatasetStep } from "../support/lance-datasets.ts";

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await removeDir(dir);
});

const appends = (n: number): DatasetStep[] => Array.from({ length: n }, () => ({ op: "append", rows: 2 }) as const);

describe("archive segments", () => {
  it("every version ever seen stays listed after several cleanups past max_entries", async () => {
    const dbUri = await makeTempDir("lw-archive-");
    dirs.push(dbUri);
    const ds = await buildLanceDataset({ dbUri, steps: [{ op: "create", rows: 4 }, ...appends(7)] });
    const store = new LocalStore(ds.tableUri);
    const clean = () => runCleanup(store, { settings: { olderThanMs: 0, retainVersions: 2 }, maxCheckpointEntries: 4, now: () => new Date(Date.now() + 1000) });

    const first = await clean();
    expect(first.status).toBe("completed");
    await ds.apply(appends(6));
    const second = await clean();
    await ds.apply(appends(5));
    const third = await clean();
    ds.close();
    expect([second.status, third.status]).toEqual(["completed", "completed"]);

    const latest = ds.written.at(-1)!.version;
    const live = new Set((await lanceFormat.listVersionFiles(store)).map((f) => f.version));
    expect([...live].sort((a, b) => a - b)).toEqual([latest - 1, latest]);

    const timeline = await readTimeline(store, lanceFormat);
    expect(timeline.records.map((r) => r.version)).toEqual(ds.written.map((w) => w.version));
    for (const record of timeline.records) expect(record.is_cleaned_up, `version ${record.version}`).toBe(!live.has(record.version));
    expect(timeline.records.map((r) => r.total_rows)).toEqual(ds.written.map((w) => w.rowCount));

    // The checkpoint holds at most max_entries rows; the rest are in segments it names.
    const checkpoint = (await loadNewestCheckpoint(store)).checkpoint!;
    expect(checkpoint.records.length).toBeLessThanOrEqual(4);
    expect(timeline.sources.archive).toBeGreaterThan(0);
    const segments = await listSegments(store);
    expect(segments.map((s) => s.key)).toEqual(checkpoint.archiveSegments);

    // --since reads only what it needs; --limit keeps the newest.
    const recent = await readTimeline(store, lanceFormat, { since: checkpoint.records[0]!.version });
    expect(recent.sources.archive).toBe(0);
    expect(recent.records.map((r) => r.version)).toEqual(ds.written.map((w) => w.version).filter((v) => v >= checkpoint.records[0]!.version));

    const io = new BufferIO();
    const code = await runCli(["versions", ds.tableUri, "--json", "--limit", "3"], io);
    expect(code, io.stderr).toBe(0);
    expect(JSON.parse(io.stdout).map((r: { version: number }) => r.version)).toEqual([latest - 2, latest - 1, latest]);
  });
});
