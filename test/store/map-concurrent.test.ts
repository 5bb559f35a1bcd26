import { describe, expect, it } from "vitest";
import { mapConcurrent } from "../../lib/store/map-concurrent.ts";

describe("mapConcurrent", () => {
  it("keeps input order and never exceeds the limit", async () => {
    let inFlight = 0;
    let peak = 0;
    const out = await mapConcurrent([5, 1, 4, 2, 3, 0], 2, async (n, i) => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      await new Promise((resolve) => setTimeout(resolve, n));
      inFlight--;
      return `${i}:${n}`;
    });
    expect(out).toEqual(["0:5", "1:1", "2:4", "3:2", "4:3", "5:0"]);
    expect(peak).toBe(2);
  });

  it("rejects with the first failure and starts nothing after it", async () => {
    const started: number[] = [];
    const run = mapConcurrent([0, 1, 2, 3, 4], 1, async (n) => {
      started.push(n);
      if (n === 1) throw new Error("boom at 1");
      return n;
    });
    await expect(run).rejects.toThrow("boom at 1");
    expect(started).toEqual([0, 1]);
  });

  it("handles an empty list", async () => {
    expect(await mapConcurrent([], 4, async () => 1)).toEqual([]);
  });
});
