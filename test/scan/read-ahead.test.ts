/**
 * A scan reads its planned files at once, not one after another (lib/scan/rows.ts readAhead): on
 * S3 each file read is a round trip, so reading 10 files in turn cost 10 of them (the cold-query
 * benchmark found it). A store that holds every GET a few milliseconds counts the reads in flight;
 * the batches still come out in plan order, and a small limit still reads one file at a time.
 */
import { execFileSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { openTable } from "../../lib/head/loader.ts";
import { writeTableHead } from "../../lib/head/write-table-head.ts";
import { READ_AHEAD_FILES, scanValues } from "../../lib/scan/rows.ts";
import { openStore } from "../../lib/store/index.ts";
import type { ByteRange, ObjectStore } from "../../lib/store/object-store.ts";
import { toolPython } from "../tools/python-env.ts";

const SCRIPT = join(dirname(fileURLToPath(import.meta.url)), "scan_tables.py");
let root = "";
afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

/** The store, each GET held 5 ms, with the most GETs ever in flight at once. */
function slow(store: ObjectStore, seen: { now: number; most: number }): ObjectStore {
  return new Proxy(store, {
    get(target, name, receiver) {
      if (name === "get") {
        return async (key: string, range?: ByteRange) => {
          seen.most = Math.max(seen.most, ++seen.now);
          try {
            await new Promise((resolve) => setTimeout(resolve, 5));
            return await target.get(key, range);
          } finally {
            seen.now--;
          }
        };
      }
      const value = Reflect.get(target, name, receiver) as unknown;
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

describe("scan read-ahead", () => {
  it("reads the planned files at once, yields them in plan order, and one at a time under a small limit", async () => {
    root = await mkdtemp(join(tmpdir(), "lw-read-ahead-"));
    const dir = join(root, "delta");
    execFileSync(toolPython(), [SCRIPT, "write", "delta", dir, "--layout", "parts", "--seed", "7"], { stdio: "ignore" });
    await writeTableHead(openStore(dir));
    const state = await (await openTable(dir)).latest();
    const plan = await (await openTable(dir)).plan();
    expect(plan.files.length).toBeGreaterThan(READ_AHEAD_FILES);

    const seen = { now: 0, most: 0 };
    const store = slow(openStore(dir), seen);
    const firstIds: bigint[] = [];
    for await (const batch of scanValues({ ...state, store }, { columns: ["id"] })) firstIds.push(batch.values.get("id")![0] as bigint);
    expect(seen.most).toBeGreaterThan(1);
    expect(seen.most).toBeLessThanOrEqual(READ_AHEAD_FILES);

    // Plan order: the same first ids as reading each planned file alone, in turn.
    const alone: bigint[] = [];
    for (const file of plan.files) {
      const batch = await state.format.readRows(openStore(dir), state.snapshot, file, ["id"]);
      if (batch.rows > 0) alone.push(batch.columns.get("id")![0] as bigint);
    }
    expect(firstIds).toEqual(alone);

    seen.most = 0;
    let rows = 0;
    for await (const batch of scanValues({ ...state, store }, { limit: 1 })) rows += batch.rows;
    expect(rows).toBe(1);
    expect(seen.most).toBe(1);
  });
});
