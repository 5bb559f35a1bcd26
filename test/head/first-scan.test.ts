/**
 * The first scan of a handle opened with `speculativeScan` (lib/head/first-scan.ts) reads the
 * head's state before the check that it is current answers. Here the head is stale: the writers
 * (deltalake, pyiceberg) committed after it was written. The check must send the scan back to the
 * latest version, with its rows exactly as the writer's reader gives them, whatever the stale
 * state's reads did: read rows of a version that is no longer the latest, failed on files VACUUM
 * removed, or failed to plan a filter on a column the stale schema lacks. `lakewarden scan` takes
 * the same path.
 */
import { execFileSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { RecordBatch } from "apache-arrow";
import { afterAll, describe, expect, it, vi } from "vitest";
import { CatalogPointerRequiredError } from "../../lib/formats/errors.ts";
import { formatByName } from "../../lib/formats/index.ts";
import type { TableFormat } from "../../lib/formats/table-format.ts";
import { loadTableState, openTable } from "../../lib/head/loader.ts";
import type { HeadWarning, OpenTableOptions } from "../../lib/head/loader.ts";
import { writeTableHead } from "../../lib/head/write-table-head.ts";
import { LocalStore } from "../../lib/store/local-store.ts";
import { objectExists } from "../../lib/store/object-exists.ts";
import { runLakewarden } from "../cli/run-executable.ts";
import { catalogPointerFormat } from "../support/iceberg-fixtures.ts";
import { isDataGet, recordRequests } from "../support/request-log.ts";
import { toolPython } from "../tools/python-env.ts";

const SCRIPT = join(dirname(fileURLToPath(import.meta.url)), "first_scan_tables.py");
type Row = Record<string, string | number>;

const roots: string[] = [];
afterAll(async () => {
  await Promise.all(roots.map((root) => rm(root, { recursive: true, force: true })));
});

function writer(format: "delta" | "iceberg", dir: string, step: string): { rows: Row[]; metadata?: string } {
  return JSON.parse(execFileSync(toolPython(), [SCRIPT, format, dir, step], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })) as { rows: Row[]; metadata?: string };
}

/** A table written by `format`'s writer, a head for it, then `step` committed by the writer after the head: the head is stale. */
interface StaleHead {
  dir: string;
  before: Row[];
  after: Row[];
  headFiles: string[];
  /** The format a reader opens the table with after the step (Iceberg: at the metadata file pyiceberg's catalog names then). */
  format: TableFormat;
}

/** The format at the metadata file the writer's catalog names (Iceberg), else by name: readers take a catalog's table at its pointer. */
function readerFormat(format: "delta" | "iceberg", dir: string, written: { metadata?: string }): TableFormat {
  return written.metadata ? catalogPointerFormat(dir, written.metadata) : formatByName(format);
}

async function staleHead(format: "delta" | "iceberg", step: string): Promise<StaleHead> {
  const root = await mkdtemp(join(tmpdir(), `lw-first-scan-${format}-`));
  roots.push(root);
  const written = join(root, "t");
  const before = writer(format, written, "create");
  // pyiceberg's SQL catalog puts the table under the warehouse; the metadata file names it.
  const dir = before.metadata ? dirname(dirname(fileURLToPath(before.metadata))) : written;
  const atHead = readerFormat(format, dir, before);
  await writeTableHead(new LocalStore(dir), { format: atHead });
  const headFiles = (await loadTableState(new LocalStore(dir), { format: atHead })).snapshot.liveFiles.flatMap((f) => f.paths);
  const after = writer(format, written, step);
  return { dir, before: before.rows, after: after.rows, headFiles, format: readerFormat(format, dir, after) };
}

const byId = (a: Row, b: Row) => Number(a.id) - Number(b.id);

async function rowsOf(batches: AsyncIterable<RecordBatch>): Promise<Row[]> {
  const rows: Row[] = [];
  for await (const batch of batches) {
    for (const row of batch.toArray() as { toJSON(): Record<string, unknown> }[]) {
      rows.push(Object.fromEntries(Object.entries(row.toJSON()).map(([k, v]) => [k, typeof v === "bigint" ? Number(v) : (v as string | number)])));
    }
  }
  return rows.sort(byId);
}

function speculative(format: "delta" | "iceberg", warnings: HeadWarning[]): OpenTableOptions {
  return { format: formatByName(format), speculativeScan: true, onWarning: (w) => warnings.push(w) };
}

describe("speculativeScan on a stale head: the stale state's reads are dropped and the scan planned again", { timeout: 60_000 }, () => {
  it("delta, overwritten and vacuumed after the head: its reads fail, a filter on the new column fails to plan; both give the latest rows", async () => {
    const { dir, before, after, headFiles } = await staleHead("delta", "replace");
    const store = new LocalStore(dir);
    const requests = recordRequests(store);
    const warnings: HeadWarning[] = [];
    const table = await openTable(store, speculative("delta", warnings));
    expect(await rowsOf(table.scan())).toEqual(after);
    // The stale head's files were asked for beside the check, and VACUUM had removed them: their failure was dropped.
    const asked = requests.filter(isDataGet).map((r) => r.what.split(" ")[1]!);
    expect(headFiles.filter((key) => asked.includes(key)).length).toBeGreaterThan(0);
    for (const key of headFiles) expect(await objectExists(store, key)).toBe(false);
    expect(warnings.map((w) => w.reason)).toEqual(["head-stale"]);
    // delta-rs commits its VACUUM too (start and end): the latest version is past the overwrite's.
    expect(table.current()?.source).toBe("manifest");
    expect(table.current()!.version).toBeGreaterThan(2);
    expect(after.map((r) => r.id)).not.toContain(before[0]!.id);

    const filtered = await openTable(new LocalStore(dir), speculative("delta", []));
    expect(await rowsOf(filtered.scan({ filter: "extra = 'x105'" }))).toEqual(after.filter((r) => r.extra === "x105"));
  });

  it("delta, overwritten after the head (old files still there): no row of the stale state comes out, even when its reads end long before the check", async () => {
    const { dir, before, after } = await staleHead("delta", "overwrite");
    const store = new LocalStore(dir);
    let release = () => {};
    const listed = new Promise<void>((resolve) => {
      release = resolve;
    });
    // The check (the LIST of the log from the head's version) is held until released.
    const requests = recordRequests(store, { hold: (what) => (what.startsWith("LIST _delta_log/") ? listed : undefined) });
    const table = await openTable(store, speculative("delta", []));
    const batches = table.scan();
    let answered = false;
    const first = batches.next().then((result) => {
      answered = true;
      return result;
    });
    // The stale state's files are read while the check is held...
    await vi.waitFor(() => {
      const reads = requests.filter(isDataGet);
      expect(reads.length).toBeGreaterThan(0);
      expect(reads.every((r) => r.end !== Number.POSITIVE_INFINITY)).toBe(true);
    });
    await new Promise((resolve) => setImmediate(resolve));
    // ...and nothing is given before the check answers.
    expect(answered).toBe(false);
    release();
    const head = await first;
    const rest = async function* () {
      if (!head.done) yield head.value;
      yield* batches;
    };
    const rows = await rowsOf(rest());
    expect(rows).toEqual(after);
    for (const row of before) expect(rows.map((r) => r.id)).not.toContain(row.id);
  });

  it("iceberg, appended to after the head (read at the metadata file the catalog names now): the latest snapshot's rows", async () => {
    const { dir, before, after, format } = await staleHead("iceberg", "append");
    const warnings: HeadWarning[] = [];
    const table = await openTable(new LocalStore(dir), { ...speculative("iceberg", warnings), format });
    const rows = await rowsOf(table.scan({ filter: "id >= 5" }));
    expect(rows).toEqual(after.filter((r) => Number(r.id) >= 5));
    expect(rows.length).toBeGreaterThan(before.filter((r) => Number(r.id) >= 5).length);
    expect(warnings.map((w) => w.reason)).toEqual(["head-stale"]);
  });

  it("no head at all: the cold load's answer (the lookup started beside the head's GET), the latest rows and one warning", async () => {
    for (const format of ["delta", "iceberg"] as const) {
      const { dir, after, format: atPointer } = await staleHead(format, format === "delta" ? "overwrite" : "append");
      await rm(join(dir, "_lakewarden"), { recursive: true, force: true });
      const warnings: HeadWarning[] = [];
      const table = await openTable(new LocalStore(dir), { ...speculative(format, warnings), format: atPointer });
      expect(await rowsOf(table.scan()), format).toEqual(after);
      expect(warnings.map((w) => w.reason)).toEqual(["head-missing"]);
    }
  });

  it("a table whose catalog names its metadata files, opened without the pointer: refused as a cold load refuses it, no row given", async () => {
    const { dir } = await staleHead("iceberg", "append");
    const table = await openTable(new LocalStore(dir), speculative("iceberg", []));
    const given: RecordBatch[] = [];
    await expect(
      (async () => {
        for await (const batch of table.scan()) given.push(batch);
      })(),
    ).rejects.toBeInstanceOf(CatalogPointerRequiredError);
    expect(given).toEqual([]);
  });

  it("lakewarden scan on a stale delta head: the latest rows, and the warning once", async () => {
    const { dir, after } = await staleHead("delta", "replace");
    const run = await runLakewarden(["scan", dir, "--where", "id >= 110"]);
    expect(run.code, run.stderr).toBe(0);
    const rows = run.stdout
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => JSON.parse(l) as Row);
    expect(rows.map((r) => ({ ...r, id: Number(r.id), v: Number(r.v) })).sort(byId)).toEqual(after.filter((r) => Number(r.id) >= 110));
    expect(run.stderr.match(/warning: .*head holds version 2, the latest is \d+/g)?.length, run.stderr).toBe(1);
  });
});
