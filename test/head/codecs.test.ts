import { describe, expect, it } from "vitest";
import { arrowCodec } from "../../lib/head/codecs/arrow.ts";
import { jsonCodec } from "../../lib/head/codecs/json.ts";
import { decodeHead, encodeHead } from "../../lib/head/container.ts";
import { CorruptHeadError, HeadCodecError, UnsupportedHeadError } from "../../lib/head/errors.ts";
import { HEAD_HEADER_BYTES, decodeHeader, peekTableVersion } from "../../lib/head/header.ts";
import type { HeadModel } from "../../lib/head/model.ts";
import { HeadCodecRegistry, headCodecs } from "../../lib/head/registry.ts";

const URI = "file:///t.lance/_lakewarden/head";

function sampleModel(): HeadModel {
  return {
    properties: { format: "lance", table_version: "7", empty: "" },
    tables: [
      {
        name: "everything",
        columns: [
          { name: "s", type: "utf8", values: ["a", null, "ünïcode"] },
          { name: "i", type: "int64", values: [0, null, Number.MAX_SAFE_INTEGER] },
          { name: "f", type: "float64", values: [1.5, -2.25e-300, null] },
          { name: "b", type: "bool", values: [true, false, null] },
          { name: "bin", type: "binary", values: [new Uint8Array([0, 255, 7]), null, new Uint8Array(0)] },
          { name: "l", type: "utf8_list", values: [["x", "y"], [], null] },
        ],
      },
      { name: "empty_table", columns: [{ name: "k", type: "utf8", values: [] }] },
    ],
  };
}

describe.each([arrowCodec, jsonCodec])("$name codec", (codec) => {
  it("round-trips every column type, nulls and empty tables", () => {
    const model = sampleModel();
    const back = codec.decode(codec.encode(model));
    expect(back.properties).toEqual(model.properties);
    expect(back.tables.map((t) => t.name)).toEqual(["everything", "empty_table"]);
    expect(back.tables[0]!.columns).toEqual(model.tables[0]!.columns);
    expect(back.tables[1]!.columns).toEqual([{ name: "k", type: "utf8", values: [] }]);
  });

  it("refuses to encode an int beyond 2^53 instead of rounding it", () => {
    const model: HeadModel = { properties: {}, tables: [{ name: "t", columns: [{ name: "i", type: "int64", values: [2 ** 53] }] }] };
    expect(() => codec.encode(model)).toThrow(HeadCodecError);
  });

  it("refuses garbage bodies", () => {
    expect(() => codec.decode(new TextEncoder().encode("definitely not a head"))).toThrow();
    const good = codec.encode(sampleModel());
    expect(() => codec.decode(good.subarray(0, good.length - 9))).toThrow();
  });
});

describe("head container", () => {
  it("writes a 64-byte header that names version and codec", () => {
    const { bytes, header } = encodeHead(sampleModel(), { tableVersion: 42, codec: arrowCodec, compression: "gzip" });
    expect(new TextDecoder().decode(bytes.subarray(0, 4))).toBe("LWHD");
    expect(header).toMatchObject({ headerVersion: 1, headerLength: HEAD_HEADER_BYTES, tableVersion: 42, codec: "arrow", compression: "gzip" });
    expect(decodeHeader(bytes.subarray(0, HEAD_HEADER_BYTES), URI)).toEqual(header);
    expect(peekTableVersion(bytes.subarray(0, 16))).toBe(42);
    expect(bytes.length).toBe(HEAD_HEADER_BYTES + header.bodyLength);
  });

  it.each(["none", "gzip"] as const)("round-trips with compression %s for both codecs", (compression) => {
    for (const codec of [arrowCodec, jsonCodec]) {
      const { bytes } = encodeHead(sampleModel(), { tableVersion: 3, codec, compression });
      const decoded = decodeHead(bytes, URI);
      expect(decoded.header.codec).toBe(codec.name);
      expect(decoded.model.tables[0]!.columns).toEqual(sampleModel().tables[0]!.columns);
    }
  });

  it("rejects wrong magic, truncation, trailing bytes, bit flips and unknown codecs with the object named", () => {
    const { bytes } = encodeHead(sampleModel(), { tableVersion: 3, codec: arrowCodec, compression: "gzip" });
    const foreign = new TextEncoder().encode("PAR1 this is a parquet file, not a head at all....................");
    expect(() => decodeHead(foreign, URI)).toThrow(CorruptHeadError);
    expect(() => decodeHead(foreign, URI)).toThrow(/t\.lance\/_lakewarden\/head: not a lakewarden head/);
    expect(() => decodeHead(bytes.subarray(0, bytes.length - 1), URI)).toThrow(/truncated/);
    expect(() => decodeHead(bytes.subarray(0, 10), URI)).toThrow(CorruptHeadError);
    expect(() => decodeHead(new Uint8Array([...bytes, 0]), URI)).toThrow(/after its body/);
    const flipped = bytes.slice();
    flipped[flipped.length - 20]! ^= 0x40;
    expect(() => decodeHead(flipped, URI)).toThrow(/checksum/);
    const onlyJson = new HeadCodecRegistry([jsonCodec]);
    expect(() => decodeHead(bytes, URI, onlyJson)).toThrow(UnsupportedHeadError);
    expect(() => decodeHead(bytes, URI, onlyJson)).toThrow(/codec "arrow" is not known/);
  });

  it("registry knows arrow and json and refuses duplicate or malformed names", () => {
    expect(headCodecs.names()).toEqual(["arrow", "json"]);
    expect(() => new HeadCodecRegistry([jsonCodec, jsonCodec])).toThrow(/already registered/);
    expect(() => new HeadCodecRegistry([{ ...jsonCodec, name: "Bad Name" }])).toThrow(/not \[a-z0-9/);
  });
});

describe("json codec limits", () => {
  it("refuses non-finite floats rather than turning them into null", () => {
    const model: HeadModel = { properties: {}, tables: [{ name: "t", columns: [{ name: "f", type: "float64", values: [Number.NaN] }] }] };
    expect(() => jsonCodec.encode(model)).toThrow(/non-finite/);
    expect(arrowCodec.decode(arrowCodec.encode(model)).tables[0]!.columns[0]!.values).toEqual([Number.NaN]);
  });
});
