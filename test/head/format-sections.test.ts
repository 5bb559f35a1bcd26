/**
 * A format's own state (Delta's adds with partition values and stats, Iceberg's per-file rows)
 * travels in the head as it is: written by writeTableHead, given back by the loader as
 * `snapshot.sections`, in sectioned (v2) and version 1 heads alike.
 */
import { describe, expect, it } from "vitest";
import { formatByName } from "../../lib/formats/index.ts";
import type { FormatSection } from "../../lib/formats/table-format.ts";
import { loadTableState } from "../../lib/head/loader.ts";
import { writeTableHead } from "../../lib/head/write-table-head.ts";
import { LocalStore } from "../../lib/store/local-store.ts";
import { copyFixtureDir } from "../support/fixtures.ts";

/** Values as a head column holds them: a column of mixed types is text (numbers and booleans as JSON). */
function asStored(sections: readonly FormatSection[]): FormatSection[] {
  return sections.map((section) => ({
    name: section.name,
    columns: Object.fromEntries(
      Object.entries(section.columns).map(([name, values]) => {
        const present = values.filter((v) => v !== null);
        const oneType = present.length > 0 && present.every((v) => typeof v === typeof present[0]) && typeof present[0] !== "string";
        return [name, oneType ? values : values.map((v) => (v === null || typeof v === "string" ? v : JSON.stringify(v)))];
      }),
    ),
  }));
}

describe("format sections in the head", () => {
  for (const [format, fixture] of [
    ["delta", "table_with_deletion_logs"],
    ["delta", "checkpoint-cdf-table"],
    ["iceberg", "spark-bunnies"],
  ] as const) {
    for (const headerVersion of [2, 1] as const) {
      it(`${format} ${fixture}, head v${headerVersion}: the loader gives back the sections the format built`, async () => {
        const copy = await copyFixtureDir(format, fixture);
        try {
          const store = new LocalStore(copy.dir);
          const tableFormat = formatByName(format);
          const latest = (await tableFormat.latestVersionFile(store))!;
          const expected = (await tableFormat.readSnapshot(store, latest)).sections ?? [];
          expect(expected.length).toBeGreaterThan(0);
          await writeTableHead(store, { format: tableFormat, headerVersion });
          const state = await loadTableState(store);
          expect(state.source).toBe("head");
          expect(state.format).toBe(tableFormat);
          expect(state.snapshot.sections).toEqual(asStored(expected));
        } finally {
          await copy.remove();
        }
      });
    }
  }
});
