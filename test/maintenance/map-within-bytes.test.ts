import { describe, expect, it } from "vitest";
import { mapWithinBytes } from "../../lib/maintenance/map-within-bytes.ts";

/** Runs `sizes` through mapWithinBytes, each call a few turns long, recording the bytes and calls in flight at every start. */
async function run(sizes: number[], concurrency: number, bytes: number) {
  let calls = 0;
  let held = 0;
  const seen: { calls: number; held: number }[] = [];
  const results = await mapWithinBytes(sizes, { concurrency, bytes, sizeOf: (size) => size }, async (size, index) => {
    calls++;
    held += size;
    seen.push({ calls, held });
    for (let turn = 0; turn < 3 + (index % 4); turn++) await new Promise((resolve) => setImmediate(resolve));
    calls--;
    held -= size;
    return size * 2;
  });
  return { results, seen };
}

describe("mapWithinBytes", () => {
  it("keeps the output in input order with at most `concurrency` calls and `bytes` in flight", async () => {
    const sizes = Array.from({ length: 40 }, (_, i) => (i * 37) % 11);
    const wide = await run(sizes, 4, 1000);
    expect(wide.results).toEqual(sizes.map((size) => size * 2));
    expect(Math.max(...wide.seen.map((s) => s.calls))).toBe(4);
    const narrow = await run(sizes, 4, 12);
    expect(narrow.results).toEqual(sizes.map((size) => size * 2));
    expect(Math.max(...narrow.seen.map((s) => s.held))).toBeLessThanOrEqual(12);
    expect(Math.max(...narrow.seen.map((s) => s.held))).toBeGreaterThan(10);
  });

  it("runs an item bigger than the whole budget, alone", async () => {
    const { results, seen } = await run([5, 50, 5, 5], 8, 10);
    expect(results).toEqual([10, 100, 10, 10]);
    expect(seen.find((s) => s.held >= 50)).toEqual({ calls: 1, held: 50 });
  });

  it("rejects with the first failure once the calls in flight have settled, and starts no new one after it", async () => {
    const started: number[] = [];
    const done: number[] = [];
    const failing = mapWithinBytes([1, 1, 1, 1, 1, 1], { concurrency: 2, bytes: 100, sizeOf: () => 1 }, async (_, index) => {
      started.push(index);
      await new Promise((resolve) => setImmediate(resolve));
      if (index === 1) throw new Error("read failed");
      await new Promise((resolve) => setImmediate(resolve));
      done.push(index);
    });
    await expect(failing).rejects.toThrow("read failed");
    expect(started).toEqual([0, 1]);
    expect(done).toEqual([0]);
  });
});
