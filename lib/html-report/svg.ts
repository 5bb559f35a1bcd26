/**
 * Small SVG helpers for the report: scales, nice ticks, time ticks, text measured the way it
 * is drawn (a monospace font, so a label's width is its length times 0.6 em), and label
 * placement that never overlaps (labels that do not fit are dropped and counted instead).
 */

/** Every label is drawn in this font at an explicit size, so its extent is computable. */
export const FONT_FAMILY = "'DejaVu Sans Mono', 'Liberation Mono', Menlo, Consolas, monospace";
/** Advance width of one character of a monospace font, in em. */
export const CHAR_WIDTH_EM = 0.6;

export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

export type Anchor = "start" | "middle" | "end";

export function escapeXml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

export function textWidth(text: string, size: number): number {
  return [...text].length * size * CHAR_WIDTH_EM;
}

/**
 * The box a label covers: `y` is the baseline; the box spans the font's ascent and descent
 * (DejaVu Sans Mono: 0.93 and 0.24 em; rounded up).
 */
export function textBox(x: number, y: number, text: string, size: number, anchor: Anchor): Box {
  const width = textWidth(text, size);
  const left = anchor === "start" ? x : anchor === "middle" ? x - width / 2 : x - width;
  return { x: left, y: y - size * 0.95, width, height: size * 1.2 };
}

export function overlaps(a: Box, b: Box, gap = 0): boolean {
  return a.x < b.x + b.width + gap && b.x < a.x + a.width + gap && a.y < b.y + b.height + gap && b.y < a.y + a.height + gap;
}

export function text(x: number, y: number, content: string, size: number, anchor: Anchor = "start", attrs = ""): string {
  return `<text x="${fmt(x)}" y="${fmt(y)}" font-size="${size}" text-anchor="${anchor}"${attrs ? ` ${attrs}` : ""}>${escapeXml(content)}</text>`;
}

export function fmt(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(1);
}

export interface Scale {
  (value: number): number;
  domain: [number, number];
}

export function linearScale(d0: number, d1: number, r0: number, r1: number): Scale {
  const span = d1 - d0 || 1;
  const scale = ((value: number) => r0 + ((value - d0) / span) * (r1 - r0)) as Scale;
  scale.domain = [d0, d1];
  return scale;
}

/**
 * About `count` round ticks covering [min, max] (1, 2, 5 × 10^n steps). `minStep`: no step finer
 * than this (1 for things counted in whole units: rows, files, bytes, requests).
 */
export function niceTicks(min: number, max: number, count: number, minStep = 0): number[] {
  if (!(max > min)) return [min];
  const raw = Math.max((max - min) / Math.max(1, count), minStep);
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? 10 * power;
  const ticks: number[] = [];
  for (let t = Math.ceil(min / step) * step; t <= max + step * 1e-9; t += step) ticks.push(Number(t.toPrecision(12)));
  return ticks;
}

/** Byte ticks on powers of 1024 so labels read "256 KiB", "512 KiB"; never a fraction of a byte. */
export function byteTicks(max: number, count: number): number[] {
  if (!(max > 0)) return [0];
  const unit = 1024 ** Math.max(0, Math.floor(Math.log(max) / Math.log(1024)));
  return niceTicks(0, max / unit, count, 1 / unit).map((t) => t * unit);
}

const TIME_STEPS: readonly [number, string][] = [
  [1, "ms"],
  [2, "ms"],
  [5, "ms"],
  [10, "ms"],
  [20, "ms"],
  [50, "ms"],
  [100, "ms"],
  [200, "ms"],
  [500, "ms"],
  [1000, "s"],
  [2000, "s"],
  [5000, "s"],
  [15_000, "s"],
  [30_000, "s"],
  [60_000, "min"],
  [5 * 60_000, "min"],
  [15 * 60_000, "min"],
  [30 * 60_000, "min"],
  [3_600_000, "h"],
  [3 * 3_600_000, "h"],
  [6 * 3_600_000, "h"],
  [12 * 3_600_000, "h"],
  [86_400_000, "d"],
  [2 * 86_400_000, "d"],
  [7 * 86_400_000, "d"],
  [14 * 86_400_000, "d"],
  [30 * 86_400_000, "mo"],
  [61 * 86_400_000, "mo"],
  [91 * 86_400_000, "mo"],
  [182 * 86_400_000, "mo"],
  [365 * 86_400_000, "y"],
];

/** Round time ticks (UTC) across [min, max], about `count` of them, with a label format fitting the step. */
export function timeTicks(min: number, max: number, count: number): { ticks: number[]; label: (t: number) => string } {
  const span = Math.max(1, max - min);
  const step = TIME_STEPS.find(([s]) => span / s <= count)?.[0] ?? 365 * 86_400_000;
  const ticks: number[] = [];
  for (let t = Math.ceil(min / step) * step; t <= max; t += step) ticks.push(t);
  if (ticks.length === 0) ticks.push(min);
  const iso = (t: number) => new Date(t).toISOString();
  const label =
    step < 1000
      ? (t: number) => iso(t).slice(11, 23)
      : step < 60_000
        ? (t: number) => iso(t).slice(11, 19)
        : step < 86_400_000
          ? (t: number) => (span > 86_400_000 ? iso(t).slice(5, 16).replace("T", " ") : iso(t).slice(11, 16))
          : step < 365 * 86_400_000
            ? (t: number) => iso(t).slice(0, 10)
            : (t: number) => iso(t).slice(0, 4);
  return { ticks, label };
}

/**
 * Keeps tick labels apart: drops every other tick until no two labels (as drawn, with a gap)
 * overlap along the axis.
 */
export function thinLabels<T>(items: readonly T[], boxOf: (item: T) => Box, gap = 6): T[] {
  let kept = [...items];
  for (let stride = 2; stride <= items.length; stride *= 2) {
    const boxes = kept.map(boxOf);
    if (boxes.every((box, i) => i === 0 || !overlaps(boxes[i - 1]!, box, gap))) return kept;
    kept = items.filter((_, i) => i % stride === 0);
  }
  return kept.slice(0, 1);
}

/**
 * Greedy placement of point labels (tags, pins) in up to `rows` rows above their points: a
 * label goes in the first row where it overlaps nothing placed; labels that fit nowhere are
 * returned as dropped, so the caller can say how many.
 */
export function placeLabels<T>(
  items: readonly T[],
  at: (item: T) => { x: number; text: string },
  baseY: number,
  rowHeight: number,
  rows: number,
  size: number,
  taken: readonly Box[] = [],
  xMax = Infinity,
): { placed: { item: T; x: number; y: number; text: string; box: Box }[]; dropped: T[] } {
  const placed: { item: T; x: number; y: number; text: string; box: Box }[] = [];
  const dropped: T[] = [];
  const boxes: Box[] = [...taken];
  for (const item of items) {
    const { x, text: label } = at(item);
    let done = false;
    for (let row = 0; row < rows && !done; row++) {
      const y = baseY - row * rowHeight;
      // A label that would run past the right edge ends there instead.
      const width = textWidth(label, size);
      const box = textBox(Math.min(x, xMax - width), y, label, size, "start");
      if (boxes.some((other) => overlaps(box, other, 3))) continue;
      boxes.push(box);
      placed.push({ item, x: box.x, y, text: label, box });
      done = true;
    }
    if (!done) dropped.push(item);
  }
  return { placed, dropped };
}
