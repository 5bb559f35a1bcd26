/**
 * The planner reads one column's entry out of a file's metric maps without parsing the map
 * (lib/formats/iceberg/scan-file-view.ts mapEntry): it must give what JSON.parse gives, for the
 * maps the head writes and for any other text.
 */
import { describe, expect, it } from "vitest";
import { mapEntry } from "../../../lib/formats/iceberg/scan-file-view.ts";
import { random } from "../../scan/random-filters.ts";

const parsedEntry = (text: string, id: number): unknown => {
  try {
    const parsed = JSON.parse(text) as unknown;
    return parsed && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as Record<string, unknown>)[String(id)] : undefined;
  } catch {
    return undefined;
  }
};

/** A map as live-files.ts mapJson writes it: ids ascending, counts as numbers (or digits past 2^53), bounds as hex. */
function writtenMap(rand: () => number): string {
  const out: Record<string, string | number> = {};
  const ids = [...new Set(Array.from({ length: Math.floor(rand() * 6) }, () => 1 + Math.floor(rand() * 120)))].sort((a, b) => a - b);
  for (const id of ids) {
    const r = rand();
    if (r < 0.4) out[String(id)] = Math.floor(rand() * 1e6);
    else if (r < 0.5) out[String(id)] = "9007199254740993";
    else out[String(id)] = Buffer.from(Array.from({ length: Math.floor(rand() * 9) }, () => Math.floor(rand() * 256))).toString("hex");
  }
  return JSON.stringify(out);
}

describe("mapEntry", () => {
  it("gives JSON.parse's entry for 2,000 maps as the head writes them, every id asked", () => {
    const rand = random(25);
    for (let n = 0; n < 2_000; n++) {
      const text = writtenMap(rand);
      for (let id = 0; id <= 121; id++) expect(mapEntry(text, id), `${text} #${id}`).toEqual(parsedEntry(text, id));
    }
  });

  it("reads other text as JSON: spaces, escapes, nesting, arrays, numbers in other forms, not JSON", () => {
    const texts = [
      '{ "1": "00ff", "2": 5 }',
      '{"1":"a\\"b","2":7}',
      '{"1":{"2":3},"2":4}',
      '{"1":1.5,"2":-0,"3":1e3}',
      '{"1":"AB","11":2}',
      '{"11":2,"1":3}',
      '{"1":2,"1":3}',
      "[1,2,3]",
      "null",
      "",
      '{"1":',
      "{}",
    ];
    for (const text of texts) for (const id of [1, 2, 3, 11]) expect(mapEntry(text, id), `${text} #${id}`).toEqual(parsedEntry(text, id));
    expect(mapEntry(null, 1)).toBeUndefined();
    expect(mapEntry(5, 1)).toBeUndefined();
  });
});
