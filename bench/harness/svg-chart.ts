/**
 * Small dependency-free SVG charts: log-scale line charts in a grid of panels (one per
 * dataset size / storage), and grouped bar charts. Enough for results a reader scans;
 * values are in the markdown tables next to them.
 */
const PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#17becf"];
const FONT = `font-family="system-ui, -apple-system, 'Segoe UI', sans-serif"`;

export interface Point {
  x: number;
  y: number;
}

export interface Series {
  name: string;
  points: Point[];
  /** Dashed line, e.g. for the baseline tool. */
  dashed?: boolean;
}

export interface Panel {
  title: string;
  series: Series[];
}

export interface LineChart {
  title: string;
  /** Small print under the chart: command, machine, date (a chart travels without its markdown). */
  caption?: string;
  xLabel: string;
  yLabel: string;
  panels: Panel[];
  /** Panels per row. */
  columns: number;
  formatY?: (y: number) => string;
}

const PANEL_W = 300;
const PANEL_H = 220;
const MARGIN = { left: 58, right: 12, top: 26, bottom: 40 };

export function renderLineChart(chart: LineChart): string {
  const names = uniqueNames(chart.panels.flatMap((p) => p.series));
  const rows = Math.ceil(chart.panels.length / chart.columns);
  const width = chart.columns * PANEL_W + 20;
  const dashedNames = new Set(chart.panels.flatMap((p) => p.series.filter((s) => s.dashed).map((s) => s.name)));
  const legendBox = legend(
    names,
    width,
    44,
    (name, i, x, y) =>
      `<line x1="${x}" y1="${y - 4}" x2="${x + 24}" y2="${y - 4}" stroke="${color(i)}" stroke-width="2.5"${dashedNames.has(name) ? ` stroke-dasharray="6 3"` : ""}/>`,
  );
  const legendH = legendBox.height;
  const height = 40 + legendH + rows * PANEL_H + 10 + captionHeight(chart.caption);
  const parts: string[] = [];
  parts.push(text(width / 2, 24, chart.title, { size: 16, anchor: "middle", weight: "bold" }));
  parts.push(...legendBox.parts);
  chart.panels.forEach((panel, i) => {
    const ox = 10 + (i % chart.columns) * PANEL_W;
    const oy = 40 + legendH + Math.floor(i / chart.columns) * PANEL_H;
    parts.push(renderPanel(panel, ox, oy, chart, names));
  });
  parts.push(...captionParts(chart.caption, height));
  return svgDocument(width, height, parts);
}

function renderPanel(panel: Panel, ox: number, oy: number, chart: LineChart, names: string[]): string {
  const points = panel.series.flatMap((s) => s.points).filter((p) => p.x > 0 && p.y > 0);
  const parts: string[] = [];
  const plotW = PANEL_W - MARGIN.left - MARGIN.right;
  const plotH = PANEL_H - MARGIN.top - MARGIN.bottom;
  const px = ox + MARGIN.left;
  const py = oy + MARGIN.top;
  parts.push(text(px + plotW / 2, oy + 16, panel.title, { size: 12, anchor: "middle", weight: "bold" }));
  parts.push(`<rect x="${px}" y="${py}" width="${plotW}" height="${plotH}" fill="none" stroke="#999"/>`);
  if (points.length === 0) {
    parts.push(text(px + plotW / 2, py + plotH / 2, "not measured", { size: 11, anchor: "middle", fill: "#888" }));
    return parts.join("\n");
  }
  const xs = logDomain(points.map((p) => p.x));
  const ys = logDomain(points.map((p) => p.y));
  const sx = (x: number) => px + ((Math.log10(x) - xs.lo) / (xs.hi - xs.lo || 1)) * plotW;
  const sy = (y: number) => py + plotH - ((Math.log10(y) - ys.lo) / (ys.hi - ys.lo || 1)) * plotH;
  for (const tick of logTicks(ys)) {
    const y = sy(tick);
    parts.push(`<line x1="${px}" y1="${y}" x2="${px + plotW}" y2="${y}" stroke="#e4e4e4"/>`);
    parts.push(text(px - 4, y + 4, (chart.formatY ?? String)(tick), { size: 10, anchor: "end" }));
  }
  for (const x of [...new Set(points.map((p) => p.x))].sort((a, b) => a - b)) {
    parts.push(text(sx(x), py + plotH + 14, String(x), { size: 10, anchor: "middle" }));
  }
  parts.push(text(px + plotW / 2, py + plotH + 30, chart.xLabel, { size: 11, anchor: "middle" }));
  parts.push(text(ox + 12, py + plotH / 2, chart.yLabel, { size: 11, anchor: "middle", rotate: true }));
  for (const series of panel.series) {
    const pts = series.points.filter((p) => p.x > 0 && p.y > 0).sort((a, b) => a.x - b.x);
    if (pts.length === 0) continue;
    const c = color(names.indexOf(series.name));
    const d = pts.map((p, k) => `${k ? "L" : "M"}${sx(p.x).toFixed(1)},${sy(p.y).toFixed(1)}`).join(" ");
    parts.push(`<path d="${d}" fill="none" stroke="${c}" stroke-width="2"${series.dashed ? ` stroke-dasharray="6 3"` : ""}/>`);
    for (const p of pts) parts.push(`<circle cx="${sx(p.x).toFixed(1)}" cy="${sy(p.y).toFixed(1)}" r="2.5" fill="${c}"/>`);
  }
  return parts.join("\n");
}

export interface BarGroup {
  label: string;
  /** One value per series name, in `BarChart.seriesNames` order; NaN = not measured. */
  values: number[];
}

export interface BarChart {
  title: string;
  /** Small print under the chart: command, machine, date. */
  caption?: string;
  yLabel: string;
  seriesNames: string[];
  groups: BarGroup[];
  logScale?: boolean;
  formatY?: (y: number) => string;
}

export function renderBarChart(chart: BarChart): string {
  const barsW = 26 * chart.seriesNames.length;
  const left = 70;
  const width = Math.max(left + (barsW + 24) * chart.groups.length + 20, 520);
  const plotW = width - left - 20;
  const groupW = plotW / Math.max(1, chart.groups.length);
  const plotH = 240;
  const legendBox = legend(chart.seriesNames, width, 44, (_, i, x, y) => `<rect x="${x + 5}" y="${y - 10}" width="14" height="10" fill="${color(i)}"/>`);
  const top = 40 + legendBox.height + 8;
  const height = top + plotH + 60 + captionHeight(chart.caption);
  const fmt = chart.formatY ?? String;
  const values = chart.groups.flatMap((g) => g.values).filter((v) => Number.isFinite(v) && v > 0);
  const parts: string[] = [text(width / 2, 24, chart.title, { size: 16, anchor: "middle", weight: "bold" }), ...legendBox.parts];
  parts.push(`<rect x="${left}" y="${top}" width="${plotW}" height="${plotH}" fill="none" stroke="#999"/>`);
  parts.push(...captionParts(chart.caption, height));
  if (values.length === 0) return svgDocument(width, height, parts);
  const log = chart.logScale ?? false;
  const domain = log ? logDomain(values) : { lo: 0, hi: niceCeil(Math.max(...values)) };
  const scale = (v: number) => (log ? (Math.log10(v) - domain.lo) / (domain.hi - domain.lo || 1) : v / (domain.hi || 1));
  const ticks = log ? logTicks(domain) : [0, 0.25, 0.5, 0.75, 1].map((f) => f * domain.hi);
  for (const tick of ticks) {
    const y = top + plotH - scale(tick) * plotH;
    parts.push(`<line x1="${left}" y1="${y}" x2="${left + plotW}" y2="${y}" stroke="#e4e4e4"/>`);
    parts.push(text(left - 4, y + 4, fmt(tick), { size: 10, anchor: "end" }));
  }
  parts.push(text(16, top + plotH / 2, chart.yLabel, { size: 11, anchor: "middle", rotate: true }));
  chart.groups.forEach((group, g) => {
    const gx = left + g * groupW + (groupW - barsW) / 2;
    group.values.forEach((v, s) => {
      if (!(Number.isFinite(v) && v > 0)) return;
      const h = Math.max(1, scale(v) * plotH);
      const x = gx + s * 26;
      parts.push(
        `<rect x="${x}" y="${(top + plotH - h).toFixed(1)}" width="22" height="${h.toFixed(1)}" fill="${color(s)}"><title>${escapeXml(`${chart.seriesNames[s]}: ${fmt(v)}`)}</title></rect>`,
      );
    });
    parts.push(text(gx + barsW / 2, top + plotH + 16, group.label, { size: 11, anchor: "middle" }));
  });
  return svgDocument(width, height, parts);
}

/**
 * Legend entries flowing left to right, wrapping at the chart's width. Text width is
 * estimated (no font metrics in a plain SVG writer): ~6.8 px per character at 12 px.
 */
function legend(names: string[], width: number, firstBaseline: number, swatch: (name: string, index: number, x: number, y: number) => string): { parts: string[]; height: number } {
  const parts: string[] = [];
  let x = 20;
  let y = firstBaseline;
  names.forEach((name, i) => {
    const itemWidth = 30 + name.length * 6.8 + 24;
    if (x > 20 && x + itemWidth > width - 10) {
      x = 20;
      y += 22;
    }
    parts.push(swatch(name, i, x, y));
    parts.push(text(x + 30, y, name, { size: 12 }));
    x += itemWidth;
  });
  return { parts, height: y - firstBaseline + 22 };
}

const CAPTION_LINE = 13;

function captionLines(caption: string | undefined): string[] {
  return caption ? caption.split("\n") : [];
}

function captionHeight(caption: string | undefined): number {
  return captionLines(caption).length * CAPTION_LINE + (caption ? 6 : 0);
}

function captionParts(caption: string | undefined, height: number): string[] {
  const lines = captionLines(caption);
  return lines.map((line, i) => text(10, height - 6 - (lines.length - 1 - i) * CAPTION_LINE, line, { size: 10, fill: "#666" }));
}

function svgDocument(width: number, height: number, parts: string[]): string {
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    ...parts,
    `</svg>`,
    "",
  ].join("\n");
}

function text(x: number, y: number, content: string, o: { size: number; anchor?: string; weight?: string; fill?: string; rotate?: boolean }): string {
  const rotate = o.rotate ? ` transform="rotate(-90 ${x} ${y})"` : "";
  return `<text x="${x.toFixed(1)}" y="${y.toFixed(1)}" ${FONT} font-size="${o.size}" text-anchor="${o.anchor ?? "start"}"${o.weight ? ` font-weight="${o.weight}"` : ""} fill="${o.fill ?? "#222"}"${rotate}>${escapeXml(content)}</text>`;
}

function logDomain(values: number[]): { lo: number; hi: number } {
  const lo = Math.floor(Math.log10(Math.min(...values)));
  const hi = Math.ceil(Math.log10(Math.max(...values)));
  return { lo, hi: hi === lo ? lo + 1 : hi };
}

function logTicks(domain: { lo: number; hi: number }): number[] {
  const ticks: number[] = [];
  for (let e = domain.lo; e <= domain.hi; e++) ticks.push(10 ** e);
  return ticks;
}

function niceCeil(v: number): number {
  const magnitude = 10 ** Math.floor(Math.log10(v));
  for (const step of [1, 2, 2.5, 5, 10]) if (v <= step * magnitude) return step * magnitude;
  return 10 * magnitude;
}

function uniqueNames(series: Series[]): string[] {
  return [...new Set(series.map((s) => s.name))];
}

function color(i: number): string {
  return PALETTE[i % PALETTE.length]!;
}

function escapeXml(s: string): string {
  return s.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll('"', "&quot;");
}
