/**
 * `npm run report:screenshots`: regenerates bench/results/report-10.png and report-10000.png,
 * the pictures of `lakewarden report` in docs/cli.md: a real 10-version LanceDB table and a
 * 10,000-version history generated from it (test/support/report-tables.ts), rendered by headless
 * Chromium (Debian's chromium package). Builds everything in a temp dir it removes.
 */
import { copyFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { renderReport } from "../lib/html-report/render.ts";
import { makeTempDir, removeDir } from "../test/support/lance-datasets.ts";
import { buildReportTable, reportDataPair } from "../test/support/report-tables.ts";
import { screenshot } from "../test/support/chromium.ts";

const results = fileURLToPath(new URL("./results/", import.meta.url));
const work = await makeTempDir("lw-report-screenshots-");
try {
  const { small, large } = await reportDataPair(await buildReportTable(join(work, "db")));
  for (const [name, data] of [
    ["report-10", small],
    ["report-10000", large],
  ] as const) {
    // The table's location is a temp path: show a stable one instead.
    const html = renderReport({ ...data, table: "file:///data/lake/events.lance" });
    const page = join(work, `${name}.html`);
    await writeFile(page, html);
    const png = join(work, `${name}.png`);
    const shot = await screenshot(work, page, png, 1400, 1700);
    if (shot.code !== 0 || shot.console.length > 0) throw new Error(`chromium failed on ${name}: ${shot.stderr.slice(-2000)}`);
    await copyFile(png, join(results, `${name}.png`));
    console.log(`bench/results/${name}.png: ${data.versions.length} versions, ${data.runs.length} cleanup runs`);
  }
} finally {
  await removeDir(work);
}
