/**
 * Reader pins on real LanceDB tables: a reader pinned on an old version through
 * `openTable(...).pin(...)` survives an aggressive cleanup (older-than 0) and LanceDB still reads
 * every row of that version afterwards; once the pin's time has passed, the next cleanup removes
 * it. Expired and malformed pins are reported and ignored. The CLI's pin, pins list and unpin,
 * and a pin written by another process (the real executable) that an in-process cleanup honours.
 */
import { afterAll, describe, expect, it } from "vitest";
import * as lancedb from "@lancedb/lancedb";
import { BufferIO } from "../../lib/cli/io.ts";
import { runCli } from "../../lib/cli/run-cli.ts";
import { openTable } from "../../lib/head/loader.ts";
import { PINS_PREFIX, pinKey } from "../../lib/model/layout.ts";
import { createPin, readPins } from "../../lib/pins/pins.ts";
import { runCleanup } from "../../lib/maintenance/run-cleanup.ts";
import { LocalStore } from "../../lib/store/local-store.ts";
import { buildLanceDataset, makeTempDir, removeDir, type DatasetStep } from "../support/lance-datasets.ts";
import { runLakewarden } from "../cli/run-executable.ts";

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await removeDir(dir);
});

const HISTORY: readonly DatasetStep[] = [
  { op: "create", rows: 10 },
  { op: "append", rows: 5 },
  { op: "overwrite", rows: 8 },
  { op: "append", rows: 4 },
  { op: "overwrite", rows: 6 },
];

async function table() {
  const dbUri = await makeTempDir("lw-pins-");
  dirs.push(dbUri);
  const ds = await buildLanceDataset({ dbUri, steps: HISTORY });
  ds.close();
  return { dbUri, tableUri: ds.tableUri, written: ds.written };
}

/** Rows and the sum of ids LanceDB reads at `version`, through a fresh connection. */
async function readAt(dbUri: string, version: number): Promise<{ rows: number; idSum: number }> {
  const db = await lancedb.connect(dbUri);
  const t = await db.openTable("t");
  try {
    await t.checkout(version);
    const rows = await t.query().select(["id"]).toArray();
    return { rows: rows.length, idSum: rows.reduce((sum, row) => sum + Number(row.id), 0) };
  } finally {
    t.close();
    db.close();
  }
}

const HOUR = 3_600_000;

async function cli(...argv: string[]) {
  const io = new BufferIO();
  const code = await runCli(argv, io);
  return { code, stdout: io.stdout, stderr: io.stderr };
}

describe("reader pins", () => {
  it("a pinned old version survives an aggressive cleanup and reads all its rows; after the TTL the next cleanup removes it", async () => {
    const { dbUri, tableUri, written } = await table();
    const pinned = written[1]!.version; // an old, untagged version the policy would remove
    const before = await readAt(dbUri, pinned);
    expect(before.rows).toBe(written[1]!.rowCount);

    const handle = await openTable(tableUri);
    const pin = await handle.pin(pinned, { ttlMs: 2 * HOUR, note: "training job 7" });
    expect(pin.version).toBe(pinned);
    const store = new LocalStore(tableUri);
    // An expired and a malformed pin next to it: reported, ignored.
    const expired = await createPin(store, { version: written[2]!.version, ttlMs: 1000, now: new Date(Date.now() - HOUR) });
    await store.put(pinKey("broken"), new TextEncoder().encode("{not json"));

    const soon = new Date(Date.now() + 1000);
    const report = await runCleanup(store, { settings: { olderThanMs: 0 }, now: () => soon });
    expect(report.status).toBe("completed");
    const latest = written.at(-1)!.version;
    const expectedRemoved = written.map((w) => w.version).filter((v) => v !== pinned && v !== latest);
    expect(report.versions_removed).toEqual(expectedRemoved);
    const line = report.versions.find((v) => v.version === pinned)!;
    expect(line.keep).toBe(true);
    expect(line.reason).toContain(`pin ${pin.id} until ${pin.record.expires_at}`);
    expect(line.reason).toContain("training job 7");
    expect(report.warnings).toContainEqual(`pin ${expired.id} on version ${expired.version} ignored: expired at ${expired.expires_at}`);
    expect(report.warnings.some((w) => w.includes(`${PINS_PREFIX}broken.json ignored: malformed`))).toBe(true);
    // The version the expired pin named went: it did not hold.
    expect(report.versions_removed).toContain(expired.version);

    // The reader still reads every row of its version, through LanceDB.
    expect(await readAt(dbUri, pinned)).toEqual(before);

    // Renewing moves the expiry; the clock then passes it: the next cleanup removes the version.
    const renewed = await pin.renew(3 * HOUR);
    expect(Date.parse(renewed.expires_at)).toBeGreaterThan(Date.parse(pin.record.expires_at) - 1);
    const later = new Date(Date.parse(renewed.expires_at) + 1000);
    const after = await runCleanup(store, { settings: { olderThanMs: 0 }, now: () => later });
    expect(after.versions_removed).toEqual([pinned]);
    expect(after.warnings).toContainEqual(`pin ${pin.id} on version ${pinned} ignored: expired at ${renewed.expires_at}`);
    await expect(readAt(dbUri, pinned)).rejects.toThrow();

    // close() releases what the handle still holds.
    await handle.close();
    expect((await readPins(store, later)).expired.map((p) => p.id)).not.toContain(pin.id);
  });

  it("close() releases the handle's pins; a released pin no longer keeps its version", async () => {
    const { tableUri, written } = await table();
    const handle = await openTable(tableUri);
    const pin = await handle.pin(written[0]!.version, { ttlMs: HOUR });
    const store = new LocalStore(tableUri);
    expect((await readPins(store)).active.map((p) => p.id)).toEqual([pin.id]);
    await handle.close();
    expect((await readPins(store)).active).toEqual([]);
    const report = await runCleanup(store, { settings: { olderThanMs: 0 }, now: () => new Date(Date.now() + 1000) });
    expect(report.versions_removed).toContain(written[0]!.version);
  });

  it("CLI: pin prints the id, pins list shows it, a pin from another process keeps the version, unpin removes it", async () => {
    const { tableUri, written } = await table();
    const version = written[1]!.version;
    // Another process writes the pin.
    const pinned = await runLakewarden(["pin", tableUri, String(version), "--ttl", "2h", "--note", "nightly export"]);
    expect(pinned.stderr).toBe("");
    expect(pinned.code).toBe(0);
    const id = pinned.stdout.trim();
    expect(id).toMatch(/^[0-9a-f-]{36}$/);

    const listed = await cli("pins", "list", tableUri, "--json");
    expect(listed.code).toBe(0);
    const doc = JSON.parse(listed.stdout) as { active: { id: string; version: number; version_id: string; expires_at: string; note: string; pid: number }[] };
    expect(doc.active).toHaveLength(1);
    expect(doc.active[0]).toMatchObject({ id, version, version_id: String(version), note: "nightly export" });
    const text = await cli("pins", "list", tableUri);
    expect(text.stdout).toContain(id);
    expect(text.stdout).toContain(doc.active[0]!.expires_at);

    const dry = await cli("cleanup", tableUri, "--dry-run", "--older-than", "0s", "--allow-short-retention", "--json");
    expect(dry.code).toBe(0);
    const plan = JSON.parse(dry.stdout) as { versions_removed: number[]; versions: { version: number; reason: string }[] };
    expect(plan.versions_removed).not.toContain(version);
    expect(plan.versions.find((v) => v.version === version)!.reason).toContain(`pin ${id} until ${doc.active[0]!.expires_at}`);

    expect((await cli("unpin", tableUri, id)).stdout).toBe(`unpinned ${id}\n`);
    const again = await cli("unpin", tableUri, id);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`no pin ${id}`);
    const dry2 = JSON.parse((await cli("cleanup", tableUri, "--dry-run", "--older-than", "0s", "--allow-short-retention", "--json")).stdout) as { versions_removed: number[] };
    expect(dry2.versions_removed).toContain(version);

    expect((await cli("pin", tableUri, "999", "--ttl", "1h")).code).toBe(1);
    expect((await cli("pin", tableUri, String(version), "--ttl", "soon")).code).toBe(2);
    expect((await cli("pin", tableUri, String(version))).code).toBe(2);
    expect((await cli("unpin", tableUri, "../lease")).code).toBe(2);
  });
});
