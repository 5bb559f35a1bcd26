/** Randomized filters for the scan oracles (plan-oracle, rows-oracle): literals near the tables' own samples. */
import type { CompareOp, Expr, Literal } from "../../lib/scan/expression.ts";

/** A small seeded PRNG (mulberry32), so a failure names a seed that reproduces it. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export type Samples = Record<string, Literal[]>;

/** Literals near the samples: the sample itself, a neighbour, a prefix, NaN and NULL now and then. */
function literalFor(samples: Literal[], rand: () => number): Literal {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const nonNull = samples.filter((s) => s.type !== "null");
  const base = nonNull.length > 0 ? pick(nonNull) : { type: "null" as const };
  const r = rand();
  if (r < 0.04) return { type: "null" };
  if (base.type === "number") {
    if (r < 0.1) return { type: "number", text: "NaN" };
    if (base.text === "NaN" || r < 0.6) return base;
    const n = Number(base.text);
    const delta = pick([1, -1, 0.5, -0.5, 7, -7]);
    return { type: "number", text: Number.isInteger(n) && Math.abs(delta) >= 1 ? String(n + delta) : String(n + delta) };
  }
  if (base.type === "string") {
    if (r < 0.5) return base;
    const chars = [...base.value];
    return { type: "string", value: r < 0.75 ? chars.slice(0, Math.max(1, Math.floor(chars.length / 2))).join("") : `${base.value}z` };
  }
  if (base.type === "date" && r > 0.6) {
    const d = new Date(`${base.text}T00:00:00Z`);
    d.setUTCDate(d.getUTCDate() + pick([1, -1, 30]));
    return { type: "date", text: d.toISOString().slice(0, 10) };
  }
  if (base.type === "timestamp" && r > 0.6) return { type: "timestamp", text: `${base.text.slice(0, 10)} 00:00:00` };
  return base;
}

export function randomFilter(samples: Samples, rand: () => number, depth = 0): Expr {
  const columns = Object.keys(samples);
  const r = rand();
  if (depth < 2 && r < 0.35) {
    const left = randomFilter(samples, rand, depth + 1);
    const right = randomFilter(samples, rand, depth + 1);
    return { kind: rand() < 0.5 ? "and" : "or", left, right };
  }
  if (depth < 2 && r < 0.42) return { kind: "not", expr: randomFilter(samples, rand, depth + 1) };
  const column = columns[Math.floor(rand() * columns.length)]!;
  const kind = rand();
  if (kind < 0.1) return { kind: "null-check", column, negated: rand() < 0.5, position: 0 };
  if (kind < 0.25) {
    const values = Array.from({ length: 1 + Math.floor(rand() * 3) }, () => literalFor(samples[column]!, rand));
    return { kind: "in", column, values, negated: rand() < 0.3, position: 0 };
  }
  const ops: CompareOp[] = ["=", "=", "!=", "<", "<=", ">", ">="];
  return { kind: "compare", column, op: ops[Math.floor(rand() * ops.length)]!, value: literalFor(samples[column]!, rand), position: 0 };
}
