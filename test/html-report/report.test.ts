/**
 * `lakewarden report`: the HTML report of a real 10-version LanceDB table (tags, a reader pin,
 * two cleanup runs, a protection boundary) and of a 10,000-version history generated from it.
 * The SVG is parsed: a timeline with its points, a legend, axes with units, and no two labels
 * overlapping (extents computed from the monospace font's advance). Then headless Chromium
 * renders both: no console message, a screenshot, and no two texts overlapping as laid out.
 */
import { cp, readFile, readdir, truncate, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BufferIO } from "../../lib/cli/io.ts";
import { runCli } from "../../lib/cli/run-cli.ts";
import type { ReportData } from "../../lib/html-report/data.ts";
import { renderReport } from "../../lib/html-report/render.ts";
import { makeTempDir, removeDir } from "../support/lance-datasets.ts";
import { buildReportTable, reportDataPair } from "../support/report-tables.ts";
import { dumpDom, pngSize, screenshot } from "../support/chromium.ts";

let dir: string;
let dbDir: string;
let tableUri: string;
let small: ReportData;
let large: ReportData;
let htmlSmall: string;
let htmlLarge: string;

beforeAll(async () => {
  dir = await makeTempDir("lw-report-");
  dbDir = await makeTempDir("lw-report-table-");
  tableUri = await buildReportTable(dbDir);
  ({ small, large } = await reportDataPair(tableUri));
  htmlSmall = renderReport(small);
  htmlLarge = renderReport(large);
}, 60_000);

afterAll(async () => {
  await removeDir(dir);
  await removeDir(dbDir);
});

interface Label {
  svg: string;
  text: string;
  x: number;
  y: number;
  size: number;
  anchor: string;
}

function svgs(html: string): { id: string; body: string }[] {
  return [...html.matchAll(/<svg [^>]*id="([^"]+)"[^>]*>([\s\S]*?)<\/svg>/g)].map((m) => ({ id: m[1]!, body: m[2]! }));
}

function labels(html: string): Label[] {
  const out: Label[] = [];
  for (const { id, body } of svgs(html)) {
    for (const m of body.matchAll(/<text x="([-\d.]+)" y="([-\d.]+)" font-size="(\d+)" text-anchor="(\w+)"[^>]*>([^<]*)<\/text>/g)) {
      out.push({
        svg: id,
        x: Number(m[1]),
        y: Number(m[2]),
        size: Number(m[3]),
        anchor: m[4]!,
        text: m[5]!
          .replace(/&lt;/g, "<")
          .replace(/&gt;/g, ">")
          .replace(/&quot;/g, '"')
          .replace(/&amp;/g, "&"),
      });
    }
  }
  return out;
}

/** The extent of a label in a monospace font: 0.6 em per character, ascent 0.95 em, descent 0.25 em. */
function extent(l: Label) {
  const width = [...l.text].length * l.size * 0.6;
  const left = l.anchor === "start" ? l.x : l.anchor === "middle" ? l.x - width / 2 : l.x - width;
  return { left, right: left + width, top: l.y - l.size * 0.95, bottom: l.y + l.size * 0.25 };
}

function overlappingLabels(html: string): string[] {
  const all = labels(html);
  const found: string[] = [];
  for (let i = 0; i < all.length; i++) {
    for (let j = i + 1; j < all.length; j++) {
      const a = all[i]!;
      const b = all[j]!;
      if (a.svg !== b.svg) continue;
      const ea = extent(a);
      const eb = extent(b);
      if (ea.left < eb.right && eb.left < ea.right && ea.top < eb.bottom && eb.top < ea.bottom) found.push(`${a.svg}: ${JSON.stringify(a.text)} / ${JSON.stringify(b.text)}`);
    }
  }
  return found;
}

function checkStructure(html: string, data: ReportData): void {
  // Self-contained: no script, no external resource, no web font.
  expect(html).not.toMatch(/<script|<link|<img|@import|url\(|@font-face/i);
  expect(html.replaceAll('xmlns="http://www.w3.org/2000/svg"', "")).not.toMatch(/https?:/);
  const ids = svgs(html).map((s) => s.id);
  expect(ids).toEqual(["timeline", "chart-storage", "chart-reclaimed", "chart-requests"]);
  const timeline = svgs(html).find((s) => s.id === "timeline")!.body;
  const texts = labels(html)
    .filter((l) => l.svg === "timeline")
    .map((l) => l.text);
  // A legend naming every mark.
  expect(timeline).toContain('<g class="legend">');
  for (const entry of ["live version", "cleaned-up version", "tag", "reader pin", "protection boundary", "operations:"]) expect(texts).toContain(entry);
  // Axes: a time axis with its title, and a y axis per panel with units on the bytes one.
  expect(timeline.match(/<g class="axis y-axis">/g)).toHaveLength(2);
  expect(timeline.match(/<g class="axis x-axis">/g)).toHaveLength(1);
  expect(texts.some((t) => t.startsWith("commit time (UTC"))).toBe(true);
  expect(texts.some((t) => t.startsWith("rows"))).toBe(true);
  expect(texts.some((t) => t.startsWith("bytes"))).toBe(true);
  const yBytes = texts.filter((t) => /^\d+(\.\d)? (B|KiB|MiB|GiB)$/.test(t));
  expect(yBytes.length).toBeGreaterThanOrEqual(3);
  const xAxis = timeline.slice(timeline.indexOf('<g class="axis x-axis">'));
  expect([...xAxis.matchAll(/<text [^>]*text-anchor="middle"[^>]*>/g)].length).toBeGreaterThanOrEqual(2);
  // The protection boundary is drawn.
  expect(timeline).toContain('<g class="protection">');
  // Every tag and pin has a marker.
  const markers = timeline.slice(timeline.indexOf('<g class="markers">'));
  expect([...markers.matchAll(/<path d="M[^"]*l5,9/g)].length).toBe(data.tags.length);
  expect([...markers.matchAll(/<path d="M[^"]*l5,6/g)].length).toBe(data.pins.length);
  expect(overlappingLabels(html)).toEqual([]);
  // No label runs past the picture's edges (each SVG is 1200 wide).
  expect(
    labels(html)
      .filter((l) => extent(l).left < 0 || extent(l).right > 1200)
      .map((l) => l.text),
  ).toEqual([]);
}

describe("lakewarden report", () => {
  it("the label check finds overlapping labels (it can fail)", () => {
    const html = `<svg xmlns="http://www.w3.org/2000/svg" id="x"><text x="10" y="20" font-size="11" text-anchor="start">long label here</text><text x="40" y="24" font-size="11" text-anchor="middle">other</text></svg>`;
    expect(overlappingLabels(html)).toHaveLength(1);
  });

  it("10 versions of a real table, via the CLI: timeline with every version, greyed cleaned-up ones, legend, axes, no overlapping labels", async () => {
    const out = join(dir, "report-10.html");
    const io = new BufferIO();
    expect(await runCli(["report", tableUri, "-o", out], io)).toBe(0);
    expect(io.stdout).toMatch(/^wrote .*report-10\.html \(\d+(\.\d)? KiB\): 10 versions, 2 cleanup runs\n$/);
    const html = await readFile(out, "utf8");
    expect(small.versions).toHaveLength(10);
    expect(small.runs).toHaveLength(2);
    expect(small.runs.every((r) => r.storage !== null)).toBe(true);
    checkStructure(html, small);
    const series = svgs(html).find((s) => s.id === "timeline")!.body;
    const points = [...series.matchAll(/<circle cx="[\d.]+" cy="[\d.]+" r="3.5" fill="(#[0-9a-f]+)"/g)].map((m) => m[1]);
    const withTotals = small.versions.filter((v) => v.total_rows !== null).length;
    expect(points).toHaveLength(2 * withTotals);
    const cleaned = small.versions.filter((v) => v.is_cleaned_up).length;
    expect(cleaned).toBeGreaterThan(0);
    expect(points.filter((c) => c === "#b8b8b8")).toHaveLength(2 * cleaned);
    // The tags and the pin are labelled by name.
    const texts = labels(html).map((l) => l.text);
    for (const tag of small.tags) expect(texts).toContain(tag.name);
    expect(texts).toContain("pin nightly export");
  });

  it("a damaged checkpoint: the report says the history is incomplete, naming the file, before the charts", async () => {
    const own = await makeTempDir("lw-report-damaged-");
    const copy = join(own, "damaged-history.lance");
    await cp(tableUri, copy, { recursive: true });
    const checkpoints = (await readdir(join(copy, "_lakewarden", "checkpoints"))).sort();
    const newest = checkpoints.at(-1)!;
    await truncate(join(copy, "_lakewarden", "checkpoints", newest), 10);
    const out = join(own, "report-damaged.html");
    expect(await runCli(["report", copy, "-o", out], new BufferIO())).toBe(0);
    const html = await readFile(out, "utf8");
    const section = html.indexOf("<h2>History incomplete</h2>");
    expect(section, "a History incomplete section").toBeGreaterThan(0);
    expect(section).toBeLessThan(html.indexOf("<h2>Versions over time</h2>"));
    expect(html.slice(section, html.indexOf("</ul>", section))).toContain(newest);
    expect(renderReport(small)).not.toContain("History incomplete");
    await removeDir(own);
  });

  it("10,000 versions: decimated to columns, labels thinned or counted, still no overlap; versions without totals are skipped", () => {
    expect(large.versions).toHaveLength(10_000);
    checkStructure(htmlLarge, large);
    const timeline = svgs(htmlLarge).find((s) => s.id === "timeline")!.body;
    expect(timeline).not.toContain('r="3.5"');
    const skipped = large.versions.filter((v) => v.total_rows === null).length;
    expect(labels(htmlLarge).map((l) => l.text)).toContain(`rows (${skipped} versions without a total skipped)`);
    // Bounded size: columns, not points.
    expect(htmlLarge.length).toBeLessThan(1_500_000);
  });

  it("headless Chromium renders both with no console message, lays out no overlapping texts, and screenshots them", async () => {
    // The console scan sees what a page logs (so an empty scan means something).
    const control = join(dir, "control.html");
    await writeFile(control, `<!doctype html><body><script>console.error("control message")</script></body>`);
    const logged = await dumpDom(dir, control);
    expect(logged.console.join("\n")).toContain("control message");

    for (const [name, html] of [
      ["report-10", htmlSmall],
      ["report-10000", htmlLarge],
    ] as const) {
      const page = join(dir, `${name}.html`);
      await writeFile(page, html);
      const png = join(dir, `${name}.png`);
      const shot = await screenshot(dir, page, png, 1400, 1700);
      expect(shot.code).toBe(0);
      expect(shot.console).toEqual([]);
      expect(pngSize(await readFile(png))).toEqual({ width: 1400, height: 1700 });

      // Laid out by Chromium with its fonts: measure every text of every SVG.
      const measured = join(dir, `${name}-measured.html`);
      await writeFile(measured, html.replace("</body>", `<script>${MEASURE}</script></body>`));
      const dom = await dumpDom(dir, measured);
      expect(dom.code).toBe(0);
      const count = Number(/data-text-count="(\d+)"/.exec(dom.stdout)?.[1]);
      expect(count).toBe(labels(html).length);
      const overlaps = JSON.parse((/data-overlaps="([^"]*)"/.exec(dom.stdout)?.[1] ?? "null").replace(/&quot;/g, '"').replace(/&amp;/g, "&")) as string[];
      expect(overlaps).toEqual([]);
    }
  }, 60_000);

  it("leaves only its own files in its temp dir", async () => {
    const names = await readdir(dir);
    expect(names.every((n) => /^(report-10(000)?(-measured)?\.(html|png)|control\.html)$/.test(n))).toBe(true);
  });
});

/** Runs in Chromium: every pair of texts in one SVG whose laid-out boxes overlap (by more than half a pixel). */
const MEASURE = `
const found = [];
let count = 0;
for (const svg of document.querySelectorAll("svg")) {
  const texts = [...svg.querySelectorAll("text")].map((t) => ({ s: t.textContent, r: t.getBoundingClientRect() }));
  count += texts.length;
  for (let i = 0; i < texts.length; i++) for (let j = i + 1; j < texts.length; j++) {
    const a = texts[i].r, b = texts[j].r;
    if (a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5) found.push(svg.id + ": " + texts[i].s + " / " + texts[j].s);
  }
}
document.body.setAttribute("data-text-count", String(count));
document.body.setAttribute("data-overlaps", JSON.stringify(found));
`;
