/**
 * The HTML report of a table's life: one self-contained file (inline SVG and CSS, no script,
 * no network, no external font). Three pictures:
 *   1. the timeline: rows and bytes of every version over commit time (versions whose totals
 *      are unknown are skipped), operations as a coloured strip, tags and reader pins as
 *      markers, the history protection boundary, cleaned-up versions in grey;
 *   2. storage by category at each cleanup run, where receipts record it;
 *   3. what each cleanup run reclaimed (bytes) and the requests it made.
 * Readable at 10 and at 10,000 versions: points are decimated to one column per pixel pair,
 * tick labels are thinned until none overlap, and tag and pin labels that do not fit are
 * counted instead of drawn over each other.
 */
import { RUNS_PREFIX } from "../model/layout.ts";
import { formatBytes, plural } from "../text/human-units.ts";
import type { ReportData, ReportRun, ReportVersion } from "./data.ts";
import { describeHistoryProblem } from "../checkpoint/damaged.ts";
import type { Box } from "./svg.ts";
import { FONT_FAMILY, byteTicks, escapeXml, fmt, linearScale, niceTicks, placeLabels, text, textBox, textWidth, thinLabels, timeTicks } from "./svg.ts";

const WIDTH = 1200;
const LEFT = 96;
const RIGHT = 24;
const PLOT_W = WIDTH - LEFT - RIGHT;
const FONT = 11;
const KEPT_ROWS = "#1f77b4";
const KEPT_BYTES = "#d62728";
const CLEANED = "#b8b8b8";
const TAG = "#2ca02c";
const PIN = "#9467bd";
const BOUNDARY = "#ff7f0e";
const OPERATION_COLORS = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1"];
const OTHER_OPERATION = "#9c9c9c";
/** Above this many points a plot draws one min-max column per pixel pair instead of a dot each. */
const MAX_DOTS = 600;

export function renderReport(data: ReportData): string {
  const versions = data.versions;
  const live = versions.filter((v) => !v.is_cleaned_up).length;
  const latest = versions.at(-1);
  const summary = [
    `${plural(versions.length, "version")} (${live} live, ${versions.length - live} cleaned up)`,
    latest ? `latest version ${versionName(latest)} at ${new Date(latest.timestamp_millis).toISOString()}` : "no versions",
    latest?.total_rows != null ? plural(latest.total_rows, "row") : null,
    latest?.total_files_size != null ? formatBytes(latest.total_files_size) : null,
    plural(data.tags.length, "tag"),
    plural(data.pins.length, "reader pin"),
    data.protect_before !== null ? `history protected below version ${data.protect_before}` : null,
    `${plural(data.runs.length, "cleanup run")} on record`,
  ].filter((s): s is string => s !== null);
  const storageRuns = data.runs.filter((r) => r.storage !== null);
  const parts: string[] = [
    `<!doctype html>`,
    `<html lang="en"><head><meta charset="utf-8"><title>${escapeXml(`lakewarden report: ${data.table}`)}</title>`,
    `<style>${CSS}</style></head><body>`,
    `<h1>Table report</h1>`,
    `<p class="table">${escapeXml(data.table)} <span>(${escapeXml(data.format)})</span></p>`,
    `<p>${escapeXml(summary.join(" · "))}. Generated ${escapeXml(data.generated_at)} by lakewarden.</p>`,
    // Said where it cannot be missed: a damaged history means the versions table may lack rows.
    data.history_problems.length > 0 ? `<h2>History incomplete</h2><ul>${data.history_problems.map((p) => `<li>${escapeXml(describeHistoryProblem(p))}</li>`).join("")}</ul>` : "",
    `<h2>Versions over time</h2>`,
    versions.length > 0 ? timelineSvg(data) : `<p>No versions.</p>`,
    `<h2>Storage by category at each cleanup run</h2>`,
    storageRuns.length > 0
      ? barChart({
          id: "storage",
          runs: storageRuns,
          series: STORAGE_SERIES.map((s) => ({ name: s.name, color: s.color, value: (run: ReportRun) => s.value(run.storage!.before) })),
          yTitle: "bytes (before the run)",
          bytes: true,
        })
      : `<p>No cleanup receipt records storage yet (receipts from before this lakewarden do not).</p>`,
    `<h2>Cleanup runs: bytes reclaimed and requests</h2>`,
    data.runs.length > 0
      ? [
          barChart({
            id: "reclaimed",
            runs: data.runs,
            series: [{ name: "bytes reclaimed", color: KEPT_BYTES, value: (run) => run.bytes_removed }],
            yTitle: "bytes reclaimed",
            bytes: true,
          }),
          barChart({
            id: "requests",
            runs: data.runs,
            series: (["get", "head", "list", "put", "delete"] as const).map((kind, i) => ({
              name: `${kind} requests`,
              color: OPERATION_COLORS[i]!,
              value: (run: ReportRun) => run.requests[kind] ?? 0,
            })),
            yTitle: "requests",
            bytes: false,
          }),
          runsTable(data.runs),
        ].join("\n")
      : `<p>No cleanup receipts under ${RUNS_PREFIX}.</p>`,
    refsTables(data),
    data.warnings.length > 0 ? `<h2>Warnings</h2><ul>${data.warnings.map((w) => `<li>${escapeXml(w)}</li>`).join("")}</ul>` : "",
    `</body></html>`,
  ];
  return `${parts.join("\n")}\n`;
}

/**
 * A version as `lakewarden versions` numbers it (`version`), with the format's own id beside it
 * where that differs (an Iceberg snapshot id), so the report and the CLI name the same version alike.
 */
function versionName(version: ReportVersion): string {
  return version.version_id === String(version.version) ? String(version.version) : `${version.version} (id ${version.version_id})`;
}

const CSS = [
  "body{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:1240px}",
  "h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 6px}",
  ".table{font-family:monospace;font-size:13px}.table span{color:#666}",
  "svg{display:block;background:#fff;border:1px solid #ddd;max-width:100%;height:auto}",
  "svg text{fill:#333}",
  "table{border-collapse:collapse;font-size:12px;margin-top:8px}td,th{border:1px solid #ddd;padding:2px 6px;text-align:right}th{background:#f4f4f4}td.l,th.l{text-align:left}",
].join("");

const STORAGE_SERIES: { name: string; color: string; value: (p: NonNullable<ReportRun["storage"]>["before"]) => number }[] = [
  { name: "live", color: KEPT_ROWS, value: (p) => p.live.bytes },
  { name: "history", color: TAG, value: (p) => p.history.bytes },
  { name: "reclaimable", color: KEPT_BYTES, value: (p) => p.reclaimable.bytes },
  { name: "unknown", color: PIN, value: (p) => p.unknown.bytes },
  { name: "other", color: OTHER_OPERATION, value: (p) => p.other.bytes + p.lakewarden.bytes },
];

interface LegendItem {
  label: string;
  swatch: string;
}

/** A legend laid out left to right, wrapping at the width; returns its SVG and its bottom. */
function legend(items: readonly LegendItem[], top: number, boxes: Box[]): { svg: string; bottom: number } {
  const out: string[] = [`<g class="legend">`];
  let x = LEFT;
  let y = top + FONT;
  for (const item of items) {
    const width = 16 + textWidth(item.label, FONT) + 18;
    if (x + width > WIDTH - RIGHT && x > LEFT) {
      x = LEFT;
      y += FONT + 8;
    }
    out.push(item.swatch.replaceAll("{x}", fmt(x)).replaceAll("{y}", fmt(y - FONT * 0.35)));
    out.push(text(x + 14, y, item.label, FONT));
    boxes.push(textBox(x + 14, y, item.label, FONT, "start"));
    x += width;
  }
  out.push(`</g>`);
  return { svg: out.join(""), bottom: y + 8 };
}

const dot = (color: string) => `<circle cx="{x}" cy="{y}" r="4" fill="${color}"/>`;
const square = (color: string) => `<rect x="{x}" y="{y}" width="9" height="9" transform="translate(0,-4.5)" fill="${color}"/>`;
const triangle = (color: string) => `<path d="M0,-5 L5,4 L-5,4 Z" transform="translate({x},{y}) translate(4,0)" fill="${color}"/>`;
const diamond = (color: string) => `<path d="M0,-5 L5,0 L0,5 L-5,0 Z" transform="translate({x},{y}) translate(4,0)" fill="${color}"/>`;
const dashed = (color: string) => `<rect x="{x}" y="{y}" width="3" height="12" transform="translate(3,-6)" fill="${color}"/>`;

/** Operations by how often they occur: the six commonest get a colour each, the rest share "other". */
function operationColors(versions: readonly ReportVersion[]): { colorOf: (op: string | null) => string; items: LegendItem[] } {
  const counts = new Map<string, number>();
  for (const v of versions) counts.set(v.operation_type ?? "unknown", (counts.get(v.operation_type ?? "unknown") ?? 0) + 1);
  const ranked = [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  const named = ranked.slice(0, ranked.length > OPERATION_COLORS.length ? OPERATION_COLORS.length - 1 : OPERATION_COLORS.length).map(([op]) => op);
  const color = new Map(named.map((op, i) => [op, OPERATION_COLORS[i]!]));
  const items = named.map((op) => ({ label: op, swatch: square(color.get(op)!) }));
  if (ranked.length > named.length) items.push({ label: `other (${ranked.length - named.length} kinds)`, swatch: square(OTHER_OPERATION) });
  return { colorOf: (op) => color.get(op ?? "unknown") ?? OTHER_OPERATION, items };
}

function timelineSvg(data: ReportData): string {
  const versions = data.versions;
  const labelBoxes: Box[] = [];
  const ops = operationColors(versions);
  const top = legend(
    [
      { label: "live version", swatch: dot(KEPT_ROWS) },
      { label: "cleaned-up version", swatch: dot(CLEANED) },
      { label: "tag", swatch: triangle(TAG) },
      { label: "reader pin", swatch: diamond(PIN) },
      { label: "protection boundary", swatch: dashed(BOUNDARY) },
      { label: "operations:", swatch: "" },
      ...ops.items,
    ],
    10,
    labelBoxes,
  );
  const rowsTop = top.bottom + 30;
  const plotH = 150;
  const bytesTop = rowsTop + plotH + 40;
  const axisY = bytesTop + plotH;
  const stripTop = axisY + 44;
  const laneY = stripTop + 36;
  const laneRows = 4;
  const height = laneY + 16 * laneRows + 34;

  const tMin = versions[0]!.timestamp_millis;
  const tMax = Math.max(versions.at(-1)!.timestamp_millis, tMin + 1);
  const x = linearScale(tMin, tMax, LEFT, LEFT + PLOT_W);
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" id="timeline" viewBox="0 0 ${WIDTH} ${height}" width="${WIDTH}" height="${height}" font-family="${FONT_FAMILY}" role="img" aria-label="versions over time">`,
    top.svg,
  ];

  // x axis: round times, labels thinned until none overlap.
  const time = timeTicks(tMin, tMax, 8);
  const xTicks = thinLabels(
    time.ticks.filter((t) => insideWidth(textBox(x(t), axisY + 18, time.label(t), FONT, "middle"))),
    (t) => textBox(x(t), axisY + 18, time.label(t), FONT, "middle"),
  );
  const xAxis: string[] = [`<g class="axis x-axis">`, `<line x1="${LEFT}" x2="${LEFT + PLOT_W}" y1="${axisY}" y2="${axisY}" stroke="#333"/>`];
  for (const t of xTicks) {
    xAxis.push(`<line x1="${fmt(x(t))}" x2="${fmt(x(t))}" y1="${axisY}" y2="${axisY + 5}" stroke="#333"/>`);
    xAxis.push(text(x(t), axisY + 18, time.label(t), FONT, "middle"));
    labelBoxes.push(textBox(x(t), axisY + 18, time.label(t), FONT, "middle"));
  }
  const xTitle = `commit time (UTC${spanNote(tMin, tMax)})`;
  xAxis.push(text(LEFT + PLOT_W, axisY + 34, xTitle, FONT, "end"));
  labelBoxes.push(textBox(LEFT + PLOT_W, axisY + 34, xTitle, FONT, "end"));
  xAxis.push(`</g>`);

  out.push(
    plot({
      id: "rows",
      title: "rows",
      top: rowsTop,
      height: plotH,
      x,
      versions,
      value: (v) => v.total_rows,
      color: KEPT_ROWS,
      format: (n) => compactNumber(n),
      bytes: false,
      gridTicks: xTicks,
      labelBoxes,
    }),
  );
  out.push(
    plot({
      id: "bytes",
      title: "bytes",
      top: bytesTop,
      height: plotH,
      x,
      versions,
      value: (v) => v.total_files_size,
      color: KEPT_BYTES,
      format: (n) => formatBytes(n),
      bytes: true,
      gridTicks: xTicks,
      labelBoxes,
    }),
  );
  out.push(xAxis.join(""));

  // Operations strip: one column per pixel, coloured by the commonest operation in it.
  out.push(`<g class="operations">`);
  out.push(text(LEFT - 8, stripTop + 10, "operation", FONT, "end"));
  labelBoxes.push(textBox(LEFT - 8, stripTop + 10, "operation", FONT, "end"));
  const columns = new Map<number, Map<string, number>>();
  for (const v of versions) {
    const col = Math.min(PLOT_W - 1, Math.floor(x(v.timestamp_millis) - LEFT));
    const counts = columns.get(col) ?? new Map<string, number>();
    const color = ops.colorOf(v.operation_type);
    counts.set(color, (counts.get(color) ?? 0) + 1);
    columns.set(col, counts);
  }
  for (const [col, counts] of [...columns.entries()].sort((a, b) => a[0] - b[0])) {
    const color = [...counts.entries()].sort((a, b) => b[1] - a[1])[0]![0];
    out.push(`<rect x="${LEFT + col - (versions.length <= MAX_DOTS ? 1 : 0)}" y="${stripTop}" width="${versions.length <= MAX_DOTS ? 3 : 1}" height="12" fill="${color}"/>`);
  }
  out.push(`</g>`);

  // Protection boundary: a dashed line at the first version at or above it.
  if (data.protect_before !== null) {
    const at = versions.find((v) => v.version >= data.protect_before!);
    if (at) {
      const bx = x(at.timestamp_millis);
      out.push(`<g class="protection"><line x1="${fmt(bx)}" x2="${fmt(bx)}" y1="${rowsTop}" y2="${axisY}" stroke="${BOUNDARY}" stroke-width="2" stroke-dasharray="6,4"/>`);
      const label = `protected below version ${data.protect_before}`;
      const anchor = bx > LEFT + PLOT_W / 2 ? "end" : "start";
      const lx = anchor === "end" ? bx - 4 : bx + 4;
      const box = textBox(lx, rowsTop - 6, label, FONT, anchor);
      if (!labelBoxes.some((b) => overlapsAny(b, box))) {
        out.push(text(lx, rowsTop - 6, label, FONT, anchor));
        labelBoxes.push(box);
      }
      out.push(`</g>`);
    }
  }

  // Tags and pins: markers on a lane, labels placed where they overlap nothing, the rest counted.
  const byVersion = new Map(versions.map((v) => [v.version, v]));
  type Marker = { kind: "tag" | "pin"; version: number; label: string };
  const markers: Marker[] = [
    ...data.tags.map((t) => ({ kind: "tag" as const, version: t.version, label: truncate(t.name, 28) })),
    ...data.pins.map((p) => ({ kind: "pin" as const, version: p.version, label: truncate(`pin ${p.note ?? p.id.slice(0, 8)}`, 28) })),
  ]
    .filter((m) => byVersion.has(m.version))
    .sort((a, b) => a.version - b.version || a.kind.localeCompare(b.kind));
  out.push(`<g class="markers">`);
  out.push(text(LEFT - 8, laneY + 4, "tags, pins", FONT, "end"));
  labelBoxes.push(textBox(LEFT - 8, laneY + 4, "tags, pins", FONT, "end"));
  out.push(`<line x1="${LEFT}" x2="${LEFT + PLOT_W}" y1="${laneY}" y2="${laneY}" stroke="#ddd"/>`);
  for (const m of markers) {
    const mx = x(byVersion.get(m.version)!.timestamp_millis);
    out.push(m.kind === "tag" ? `<path d="M${fmt(mx)},${laneY - 6} l5,9 l-10,0 Z" fill="${TAG}"/>` : `<path d="M${fmt(mx)},${laneY - 6} l5,6 l-5,6 l-5,-6 Z" fill="${PIN}"/>`);
  }
  const { placed, dropped } = placeLabels(
    markers,
    (m) => ({ x: x(byVersion.get(m.version)!.timestamp_millis) - 4, text: m.label }),
    laneY + 18,
    -15,
    laneRows,
    FONT,
    labelBoxes,
    WIDTH - 4,
  );
  for (const p of placed) {
    out.push(text(p.x, p.y, p.text, FONT, "start", `class="marker-label" fill="${p.item.kind === "tag" ? "#1b6e1b" : "#5b3a82"}"`));
    labelBoxes.push(p.box);
  }
  if (dropped.length > 0) {
    const tags = dropped.filter((d) => d.kind === "tag").length;
    const pins = dropped.length - tags;
    const note = `+ ${[tags ? plural(tags, "more tag") : "", pins ? plural(pins, "more pin") : ""].filter(Boolean).join(", ")} not labelled here (listed below)`;
    const ny = laneY + 18 + 15 * laneRows;
    out.push(text(LEFT, ny, note, FONT, "start"));
    labelBoxes.push(textBox(LEFT, ny, note, FONT, "start"));
  }
  out.push(`</g>`);
  out.push(`</svg>`);
  return out.join("\n");
}

/** A label drawn wholly inside the picture (none is clipped at an edge). */
function insideWidth(box: Box): boolean {
  return box.x >= 0 && box.x + box.width <= WIDTH;
}

function overlapsAny(a: Box, b: Box): boolean {
  return a.x < b.x + b.width + 2 && b.x < a.x + a.width + 2 && a.y < b.y + b.height + 2 && b.y < a.y + a.height + 2;
}

interface PlotInput {
  id: string;
  title: string;
  top: number;
  height: number;
  x: (t: number) => number;
  versions: readonly ReportVersion[];
  value: (v: ReportVersion) => number | null;
  color: string;
  format: (n: number) => string;
  bytes: boolean;
  gridTicks: readonly number[];
  labelBoxes: Box[];
}

/** One panel of the timeline: a y axis with units, grid lines, and the points (or min-max columns). */
function plot(input: PlotInput): string {
  const { top, height, x, versions, value, color } = input;
  const points = versions.filter((v) => value(v) !== null).map((v) => ({ t: v.timestamp_millis, y: value(v)!, cleaned: v.is_cleaned_up }));
  if (points.length === 0) return emptyPlot(input);
  let max = 0;
  for (const p of points) max = Math.max(max, p.y);
  const yTicks = input.bytes ? byteTicks(max * 1.05 || 1, 4) : niceTicks(0, max * 1.05 || 1, 4, 1);
  const yMax = Math.max(yTicks.at(-1)!, max) || 1;
  const y = linearScale(0, yMax, top + height, top);
  const out: string[] = [`<g class="plot" id="plot-${input.id}">`, `<g class="axis y-axis">`];
  out.push(`<line x1="${LEFT}" x2="${LEFT}" y1="${top}" y2="${top + height}" stroke="#333"/>`);
  for (const t of yTicks) {
    out.push(`<line x1="${LEFT}" x2="${LEFT + PLOT_W}" y1="${fmt(y(t))}" y2="${fmt(y(t))}" stroke="#eee"/>`);
    out.push(`<line x1="${LEFT - 5}" x2="${LEFT}" y1="${fmt(y(t))}" y2="${fmt(y(t))}" stroke="#333"/>`);
    out.push(text(LEFT - 8, y(t) + 4, input.format(t), FONT, "end"));
    input.labelBoxes.push(textBox(LEFT - 8, y(t) + 4, input.format(t), FONT, "end"));
  }
  const title = `${input.title}${points.length < versions.length ? ` (${plural(versions.length - points.length, "version")} without a total skipped)` : ""}`;
  out.push(text(LEFT, top - 8, title, FONT + 1, "start", `font-weight="bold"`));
  input.labelBoxes.push(textBox(LEFT, top - 8, title, FONT + 1, "start"));
  out.push(`</g>`);
  for (const t of input.gridTicks) out.push(`<line x1="${fmt(x(t))}" x2="${fmt(x(t))}" y1="${top}" y2="${top + height}" stroke="#f0f0f0"/>`);
  out.push(`<g class="series">`);
  if (points.length <= MAX_DOTS) {
    if (points.length > 1)
      out.push(`<polyline fill="none" stroke="${color}" stroke-opacity="0.35" stroke-width="1.5" points="${points.map((p) => `${fmt(x(p.t))},${fmt(y(p.y))}`).join(" ")}"/>`);
    for (const p of points)
      out.push(`<circle cx="${fmt(x(p.t))}" cy="${fmt(y(p.y))}" r="3.5" fill="${p.cleaned ? CLEANED : color}"><title>${p.cleaned ? "cleaned up" : "live"}</title></circle>`);
  } else {
    // One column per two pixels: the range of values in it, grey when every version in it is cleaned up.
    const columns = new Map<number, { min: number; max: number; live: boolean }>();
    for (const p of points) {
      const col = Math.floor((x(p.t) - LEFT) / 2);
      const c = columns.get(col);
      if (!c) columns.set(col, { min: p.y, max: p.y, live: !p.cleaned });
      else {
        c.min = Math.min(c.min, p.y);
        c.max = Math.max(c.max, p.y);
        c.live ||= !p.cleaned;
      }
    }
    for (const [col, c] of columns) {
      const cx = LEFT + col * 2 + 1;
      out.push(`<line x1="${cx}" x2="${cx}" y1="${fmt(y(c.min) + 1)}" y2="${fmt(y(c.max) - 1)}" stroke="${c.live ? color : CLEANED}" stroke-width="2"/>`);
    }
  }
  out.push(`</g></g>`);
  return out.join("");
}

/**
 * A panel no version has a number for: its axis and a line saying so, not a scale of nothing
 * (which drew ticks of 0.5 B for a table whose versions had no totals).
 */
function emptyPlot(input: PlotInput): string {
  const { top, height } = input;
  const note = `no version records its ${input.title}: nothing to draw`;
  const out: string[] = [`<g class="plot empty" id="plot-${input.id}">`, `<g class="axis y-axis">`];
  out.push(`<line x1="${LEFT}" x2="${LEFT}" y1="${top}" y2="${top + height}" stroke="#333"/>`);
  out.push(text(LEFT, top - 8, `${input.title} (unknown)`, FONT + 1, "start", `font-weight="bold"`));
  input.labelBoxes.push(textBox(LEFT, top - 8, `${input.title} (unknown)`, FONT + 1, "start"));
  out.push(`</g>`);
  out.push(text(LEFT + PLOT_W / 2, top + height / 2, note, FONT, "middle", `class="no-data"`));
  input.labelBoxes.push(textBox(LEFT + PLOT_W / 2, top + height / 2, note, FONT, "middle"));
  out.push(`</g>`);
  return out.join("");
}

interface BarSeries {
  name: string;
  color: string;
  value: (run: ReportRun) => number;
}

/** Stacked bars, one per run in order, with a legend, a y axis with units and run times below. */
function barChart(input: { id: string; runs: readonly ReportRun[]; series: readonly BarSeries[]; yTitle: string; bytes: boolean }): string {
  const labelBoxes: Box[] = [];
  const head = legend(
    input.series.map((s) => ({ label: s.name, swatch: square(s.color) })),
    10,
    labelBoxes,
  );
  const top = head.bottom + 26;
  const height = 170;
  const axisY = top + height;
  const total = axisY + 48;
  const totals = input.runs.map((run) => input.series.reduce((sum, s) => sum + s.value(run), 0));
  let max = 0;
  for (const t of totals) max = Math.max(max, t);
  const ticks = input.bytes ? byteTicks(max * 1.05 || 1, 4) : niceTicks(0, max * 1.05 || 1, 4, 1);
  const yMax = Math.max(ticks.at(-1)!, max) || 1;
  const y = linearScale(0, yMax, axisY, top);
  const n = input.runs.length;
  const slot = PLOT_W / n;
  const barW = Math.max(1, Math.min(40, slot * 0.7));
  const fmtY = (v: number) => (input.bytes ? formatBytes(v) : compactNumber(v));
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" id="chart-${input.id}" viewBox="0 0 ${WIDTH} ${total}" width="${WIDTH}" height="${total}" font-family="${FONT_FAMILY}" role="img" aria-label="${escapeXml(input.yTitle)} per cleanup run">`,
    head.svg,
    `<g class="axis y-axis"><line x1="${LEFT}" x2="${LEFT}" y1="${top}" y2="${axisY}" stroke="#333"/>`,
  ];
  for (const t of ticks) {
    out.push(
      `<line x1="${LEFT}" x2="${LEFT + PLOT_W}" y1="${fmt(y(t))}" y2="${fmt(y(t))}" stroke="#eee"/><line x1="${LEFT - 5}" x2="${LEFT}" y1="${fmt(y(t))}" y2="${fmt(y(t))}" stroke="#333"/>`,
    );
    out.push(text(LEFT - 8, y(t) + 4, fmtY(t), FONT, "end"));
  }
  out.push(text(LEFT, top - 8, input.yTitle, FONT + 1, "start", `font-weight="bold"`));
  out.push(`</g><g class="series">`);
  input.runs.forEach((run, i) => {
    let base = 0;
    const cx = LEFT + slot * (i + 0.5);
    for (const s of input.series) {
      const v = s.value(run);
      if (v <= 0) continue;
      out.push(
        `<rect x="${fmt(cx - barW / 2)}" y="${fmt(y(base + v))}" width="${fmt(barW)}" height="${fmt(Math.max(0.5, y(base) - y(base + v)))}" fill="${s.color}"><title>${escapeXml(`${run.started_at}: ${s.name} ${fmtY(v)}`)}</title></rect>`,
      );
      base += v;
    }
  });
  out.push(`</g><g class="axis x-axis"><line x1="${LEFT}" x2="${LEFT + PLOT_W}" y1="${axisY}" y2="${axisY}" stroke="#333"/>`);
  const label = (i: number) => input.runs[i]!.started_at.slice(0, 16).replace("T", " ");
  const indices = thinLabels(
    input.runs.map((_, i) => i).filter((i) => insideWidth(textBox(LEFT + slot * (i + 0.5), axisY + 18, label(i), FONT, "middle"))),
    (i) => textBox(LEFT + slot * (i + 0.5), axisY + 18, label(i), FONT, "middle"),
  );
  for (const i of indices) {
    const cx = LEFT + slot * (i + 0.5);
    out.push(`<line x1="${fmt(cx)}" x2="${fmt(cx)}" y1="${axisY}" y2="${axisY + 5}" stroke="#333"/>`);
    out.push(text(cx, axisY + 18, label(i), FONT, "middle"));
  }
  out.push(text(LEFT + PLOT_W, axisY + 34, `cleanup run, by start time (UTC), ${plural(n, "run")}`, FONT, "end"));
  out.push(`</g></svg>`);
  return out.join("\n");
}

function runsTable(runs: readonly ReportRun[]): string {
  const shown = runs.slice(-30);
  const rows = shown
    .map((r) => {
      const requests = r.requests.get + r.requests.head + r.requests.list + r.requests.put + r.requests.delete;
      return `<tr><td class="l">${escapeXml(r.started_at)}</td><td class="l">${escapeXml(r.status)}</td><td>${r.versions_removed}</td><td>${r.files_removed}</td><td>${escapeXml(formatBytes(r.bytes_removed))}</td><td>${requests}</td><td class="l">${r.requests.get} get, ${r.requests.list} list, ${r.requests.put} put, ${r.requests.delete} delete, ${r.requests.head} head</td></tr>`;
    })
    .join("");
  const note = runs.length > shown.length ? `<p>The newest ${shown.length} of ${runs.length} runs.</p>` : "";
  return `${note}<table><tr><th class="l">started</th><th class="l">status</th><th>versions removed</th><th>files removed</th><th>bytes reclaimed</th><th>requests</th><th class="l">by kind</th></tr>${rows}</table>`;
}

function refsTables(data: ReportData): string {
  const out: string[] = [];
  if (data.tags.length > 0) {
    out.push(
      `<h2>Tags</h2><table><tr><th class="l">tag</th><th>version</th></tr>${data.tags.map((t) => `<tr><td class="l">${escapeXml(t.name)}</td><td>${t.version}</td></tr>`).join("")}</table>`,
    );
  }
  if (data.pins.length > 0) {
    out.push(
      `<h2>Reader pins</h2><table><tr><th class="l">pin</th><th>version</th><th class="l">expires at</th><th class="l">note</th></tr>${data.pins
        .map((p) => `<tr><td class="l">${escapeXml(p.id)}</td><td>${p.version}</td><td class="l">${escapeXml(p.expires_at)}</td><td class="l">${escapeXml(p.note ?? "")}</td></tr>`)
        .join("")}</table>`,
    );
  }
  return out.join("\n");
}

function truncate(s: string, n: number): string {
  return [...s].length > n ? `${[...s].slice(0, n - 1).join("")}…` : s;
}

/** 950 → "950", 12_500 → "12.5k", 3_000_000 → "3M". */
function compactNumber(n: number): string {
  const abs = Math.abs(n);
  const trim = (v: number) => String(Number(v.toFixed(1)));
  if (abs >= 1e9) return `${trim(n / 1e9)}G`;
  if (abs >= 1e6) return `${trim(n / 1e6)}M`;
  if (abs >= 1e4) return `${trim(n / 1e3)}k`;
  return trim(n);
}

/** " , YYYY-MM-DD" when every commit is on one day and the tick labels show only times. */
function spanNote(tMin: number, tMax: number): string {
  const day = (t: number) => new Date(t).toISOString().slice(0, 10);
  return tMax - tMin < 86_400_000 && day(tMin) === day(tMax) ? `, ${day(tMin)}` : "";
}
