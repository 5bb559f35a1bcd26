/**
 * The report's charts on tables from other writers: a fresh copy of a Delta table draws a point
 * for every version (its totals come from the log's replay, no head or cleanup needed), with
 * y-axis ticks in whole rows and bytes; a history with no totals at all says so instead of
 * drawing a scale of fractions ("0.5 B"); an Iceberg report names the latest version by the
 * number `lakewarden versions` prints.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BufferIO } from "../../lib/cli/io.ts";
import { runCli } from "../../lib/cli/run-cli.ts";
import type { ReportData } from "../../lib/html-report/data.ts";
import { renderReport } from "../../lib/html-report/render.ts";
import { byteTicks, niceTicks } from "../../lib/html-report/svg.ts";
import { copyFixture } from "../support/fixtures.ts";

async function cli(...argv: string[]) {
  const io = new BufferIO();
  const code = await runCli(argv, io);
  return { code, stdout: io.stdout, stderr: io.stderr };
}

/** The `<g id="plot-…">` group of the timeline, as text. */
function plotGroup(html: string, id: string): string {
  const start = html.indexOf(`id="plot-${id}"`);
  expect(start).toBeGreaterThan(-1);
  const end = html.indexOf(`id="plot-`, start + 10);
  return html.slice(start, end === -1 ? html.indexOf("</svg>", start) : end);
}

/** The y-axis tick labels of a plot. */
function yLabels(group: string): string[] {
  const axis = group.slice(group.indexOf(`class="axis y-axis"`), group.indexOf("</g>"));
  return [...axis.matchAll(/text-anchor="end"[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]!);
}

describe("report charts", () => {
  it("ticks never split a row or a byte", () => {
    expect(niceTicks(0, 1.05, 4, 1)).toEqual([0, 1]);
    expect(byteTicks(1.05, 4)).toEqual([0, 1]);
    expect(byteTicks(3.15, 4)).toEqual([0, 1, 2, 3]);
    expect(byteTicks(5 * 1024, 4)).toEqual([0, 2048, 4096]);
  });

  it("a fresh Delta copy: a point per version in both plots, whole-number ticks, nothing skipped", async () => {
    const dir = await copyFixture("delta", "basic-dv-with-checkpoint");
    const out = join(dir, "..", "report.html");
    const run = await cli("report", dir, "-o", out);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const html = await readFile(out, "utf8");
    for (const id of ["rows", "bytes"]) {
      const group = plotGroup(html, id);
      expect(group).not.toContain("without a total skipped");
      expect((group.match(/<circle /g) ?? []).length).toBe(47);
      const ticks = yLabels(group);
      expect(ticks.length).toBeGreaterThan(1);
      for (const tick of ticks) expect(tick, `${id} tick ${tick}`).not.toMatch(/^0\.\d/);
    }
    expect(yLabels(plotGroup(html, "rows"))).toEqual(["0", "200", "400"]);
  });

  it("versions without any totals: the plot says so, with no scale of fractions", () => {
    const data: ReportData = {
      table: "file:///t",
      format: "delta",
      generated_at: "2026-12-01T00:00:00.000Z",
      versions: [0, 1, 2].map((v) => ({
        version: v,
        version_id: String(v),
        timestamp_millis: Date.parse("2026-11-01T00:00:00Z") + v * 3_600_000,
        total_rows: null,
        total_files_size: null,
        operation_type: "WRITE",
        is_cleaned_up: false,
        branch: null,
      })),
      tags: [],
      pins: [],
      protect_before: null,
      runs: [],
      history_problems: [],
      warnings: [],
    };
    const html = renderReport(data);
    for (const id of ["rows", "bytes"]) {
      const group = plotGroup(html, id);
      expect(group).toContain(`no version records its ${id}`);
      expect(group).not.toMatch(/>0\.5 B</);
      expect(group).not.toContain("<circle ");
      expect(yLabels(group)).toEqual([]);
    }
    expect(html).toContain("3 versions (3 live, 0 cleaned up)");
  });

  it("one version: '1 version', and a single skipped version in the singular", () => {
    const base = { version_id: "0", timestamp_millis: 1, operation_type: null, is_cleaned_up: false, branch: null };
    const data: ReportData = {
      table: "file:///t",
      format: "lance",
      generated_at: "2026-12-01T00:00:00.000Z",
      versions: [
        { ...base, version: 0, total_rows: 3, total_files_size: 100 },
        { ...base, version: 1, version_id: "1", timestamp_millis: 2, total_rows: null, total_files_size: 100 },
      ],
      tags: [],
      pins: [],
      protect_before: null,
      runs: [],
      history_problems: [],
      warnings: [],
    };
    expect(renderReport(data)).toContain("(1 version without a total skipped)");
    expect(renderReport({ ...data, versions: data.versions.slice(0, 1) })).toContain("1 version (1 live, 0 cleaned up)");
  });

  it("Iceberg: the report names the latest version as `versions` does, the snapshot id beside it", async () => {
    const dir = await copyFixture("iceberg", "spark-bunnies");
    const versions = await cli("versions", dir, "--json");
    expect(versions.code).toBe(0);
    const latest = (JSON.parse(versions.stdout) as { version: number; version_id: string }[]).at(-1)!;
    expect(latest.version_id).not.toBe(String(latest.version));
    const out = join(dir, "..", "report.html");
    expect((await cli("report", dir, "-o", out)).code).toBe(0);
    const html = await readFile(out, "utf8");
    expect(html).toContain(`latest version ${latest.version} (id ${latest.version_id}) at `);
  });
});
