/**
 * The Arrow head codec reads and writes columns through their buffers (lib/arrow/column-buffers.ts).
 * Checked against apache-arrow's own value-by-value API in both directions: what it writes,
 * apache-arrow reads back value for value; what apache-arrow writes (vectorFromArray), it reads
 * back equal. Nulls, negative and 2^53-adjacent int64, non-ASCII strings, empty and null lists.
 */
import { Binary, Bool, Field, Float64, Int64, List, Table, Utf8, tableFromIPC, tableToIPC, vectorFromArray } from "apache-arrow";
import { describe, expect, it } from "vitest";
import { arrowCodec } from "../../lib/head/codecs/arrow.ts";
import type { HeadColumn, HeadModel } from "../../lib/head/model.ts";

const MAX = Number.MAX_SAFE_INTEGER;
const columns: HeadColumn[] = [
  { name: "i", type: "int64", values: [0, 1, -1, MAX, -MAX, null, 2 ** 32, -(2 ** 32) - 1, 123456789012345] },
  { name: "f", type: "float64", values: [0, 1.5, -2.25, null, Number.MAX_VALUE, 1e-300, 3, 4, 5] },
  { name: "b", type: "bool", values: [true, false, null, true, true, false, false, true, null] },
  { name: "s", type: "utf8", values: ["", "a", null, "zoë", "日本語", "data/x.lance", "🙂", "x".repeat(1000), "end"] },
  {
    name: "bin",
    type: "binary",
    values: [
      new Uint8Array([]),
      new Uint8Array([1, 2, 3]),
      null,
      new Uint8Array(300).fill(7),
      new Uint8Array([0]),
      null,
      new Uint8Array([255]),
      new Uint8Array([9, 9]),
      new Uint8Array([1]),
    ],
  },
  { name: "l", type: "utf8_list", values: [[], ["a"], null, ["b", "c", "ü"], [], ["x".repeat(70)], null, ["1", "2", "3", "4"], [""]] },
];
const model: HeadModel = { properties: { k: "v" }, tables: [{ name: "t", columns }] };

function referenceValues(bytes: Uint8Array): Record<string, unknown[]> {
  // Unframe the one table section (after "@properties") and read it value by value.
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 4;
  const sections: Uint8Array[] = [];
  for (let i = 0; i < view.getUint32(0, true); i++) {
    at += 2 + view.getUint16(at, true);
    const length = view.getUint32(at, true);
    sections.push(bytes.subarray(at + 4, at + 4 + length));
    at += 4 + length;
  }
  const table = tableFromIPC(sections[1]!);
  return Object.fromEntries(
    table.schema.fields.map((field, i) => [
      field.name,
      [...table.getChildAt(i)!].map((v: unknown) => {
        if (typeof v === "bigint") return Number(v);
        if (v instanceof Uint8Array) return [...v];
        if (v !== null && typeof v === "object" && Symbol.iterator in v) return [...(v as Iterable<unknown>)];
        return v;
      }),
    ]),
  );
}

describe("arrow codec from buffers", () => {
  it("round-trips every column type with nulls", () => {
    expect(arrowCodec.decode(arrowCodec.encode(model))).toEqual(model);
  });

  it("round-trips ASCII-only string and list columns (sliced out of one string per buffer)", () => {
    const paths = Array.from({ length: 300 }, (_, i) => `data/${String(i).padStart(40, "0")}.lance`);
    const ascii: HeadModel = {
      properties: {},
      tables: [
        {
          name: "t",
          columns: [
            { name: "s", type: "utf8", values: ["", "a", null, ...paths.slice(0, 297)] },
            { name: "l", type: "utf8_list", values: [[], null, ["short", ""], ...paths.slice(0, 297).map((p, i) => (i % 3 === 0 ? [p, p.toUpperCase()] : [p]))] },
          ],
        },
      ],
    };
    expect(arrowCodec.decode(arrowCodec.encode(ascii))).toEqual(ascii);
    const read = referenceValues(arrowCodec.encode(ascii));
    expect(read.s).toEqual(ascii.tables[0]!.columns[0]!.values);
    expect(read.l).toEqual(ascii.tables[0]!.columns[1]!.values);
  });

  it("writes what apache-arrow reads value by value", () => {
    const read = referenceValues(arrowCodec.encode(model));
    for (const column of columns) {
      const expected = column.values.map((v) => (v instanceof Uint8Array ? [...v] : v));
      expect(read[column.name], column.name).toEqual(expected);
    }
  });

  it("reads what apache-arrow writes (vectorFromArray)", () => {
    const types = {
      int64: new Int64(),
      float64: new Float64(),
      bool: new Bool(),
      utf8: new Utf8(),
      binary: new Binary(),
      utf8_list: new List(new Field("item", new Utf8(), true)),
    };
    const vectors = Object.fromEntries(
      columns.map((c) => [c.name, vectorFromArray(c.type === "int64" ? c.values.map((v) => (v === null ? null : BigInt(v as number))) : c.values, types[c.type])]),
    );
    const stream = tableToIPC(new Table(vectors), "stream");
    const props = arrowCodec.encode({ properties: { k: "v" }, tables: [] });
    // Reframe: properties section of our encoding + the apache-arrow stream as table "t".
    const name = new TextEncoder().encode("t");
    const framed = new Uint8Array(props.length + 2 + name.length + 4 + stream.length);
    framed.set(props, 0);
    const view = new DataView(framed.buffer);
    view.setUint32(0, 2, true);
    view.setUint16(props.length, name.length, true);
    framed.set(name, props.length + 2);
    view.setUint32(props.length + 2 + name.length, stream.length, true);
    framed.set(stream, props.length + 2 + name.length + 4);
    expect(arrowCodec.decode(framed)).toEqual(model);
  });

  it.each([
    ["an int64 beyond 2^53", () => tableToIPC(new Table({ i: vectorFromArray([2n ** 60n], new Int64()) }), "stream"), /beyond 2\^53/],
    [
      "a null item in a list of strings",
      () => tableToIPC(new Table({ l: vectorFromArray([["a", null]], new List(new Field("item", new Utf8(), true))) }), "stream"),
      /null list item/,
    ],
  ])("refuses %s", (_what, make, problem) => {
    const stream = make();
    const props = arrowCodec.encode({ properties: {}, tables: [] });
    const framed = new Uint8Array(props.length + 2 + 1 + 4 + stream.length);
    framed.set(props, 0);
    const view = new DataView(framed.buffer);
    view.setUint32(0, 2, true);
    view.setUint16(props.length, 1, true);
    framed[props.length + 2] = "t".charCodeAt(0);
    view.setUint32(props.length + 3, stream.length, true);
    framed.set(stream, props.length + 7);
    expect(() => arrowCodec.decode(framed)).toThrow(problem);
  });
});
