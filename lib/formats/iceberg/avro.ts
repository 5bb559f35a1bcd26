/**
 * Avro object container files (manifest lists, manifests) decoded with avsc, every Avro `long`
 * as a `bigint` (snapshot ids, sequence numbers and sizes are 64-bit). Codecs: null and
 * deflate (avsc's own; every fixture is deflate), zstandard through Node's zlib. Snappy is
 * refused by name rather than misread.
 */
import { Readable } from "node:stream";
import * as zlib from "node:zlib";
import avro from "avsc";
import { decompress as zstdDecompressPortable } from "fzstd";
import { CorruptFileError, UnsupportedFeatureError } from "../errors.ts";

export type AvroRecord = Record<string, unknown>;

export interface AvroContainer {
  /** Header metadata (`avro.schema`, `avro.codec` and the writer's own keys), as text. */
  meta: Record<string, string>;
  /** The writer schema as JSON (with Iceberg's `field-id` annotations). */
  schema: unknown;
  records: AvroRecord[];
}

/** An Avro long decoded as bigint, exact beyond 2^53. */
const bigintLong = avro.types.LongType.__with({
  fromBuffer: (buf: Buffer) => buf.readBigInt64LE(),
  toBuffer: (n: bigint) => {
    const buf = Buffer.alloc(8);
    buf.writeBigInt64LE(BigInt(n));
    return buf;
  },
  fromJSON: (value: unknown) => BigInt(value as string | number),
  toJSON: (n: bigint) => Number(n),
  isValid: (n: unknown) => typeof n === "bigint",
  compare: (a: bigint, b: bigint) => (a === b ? 0 : a < b ? -1 : 1),
});

/**
 * forSchema options that make every `long` a bigint (also for writing test files). A fresh
 * object each time: avsc keeps its registry of named types in the options it is given.
 */
export function bigintLongOptions(): Partial<avro.ForSchemaOptions> {
  return {
    typeHook: (schema: unknown): avro.Type | undefined => {
      if (schema === "long" || (typeof schema === "object" && schema !== null && (schema as { type?: unknown }).type === "long" && !("logicalType" in schema))) {
        return bigintLong;
      }
      return undefined;
    },
  };
}

const CODECS = {
  null: (buf: Buffer, cb: (error: Error | null, out?: Buffer) => void) => cb(null, buf),
  deflate: avro.streams.BlockDecoder.defaultCodecs().deflate!,
  // zstd is in node:zlib from Node 22.15; an older Node (20) decompresses with fzstd (pure JavaScript).
  zstandard: (buf: Buffer, cb: (error: Error | null, out?: Buffer) => void) => {
    const decompress = (zlib as { zstdDecompress?: (b: Buffer, c: (error: Error | null, out?: Buffer) => void) => void }).zstdDecompress;
    if (decompress) return decompress(buf, cb);
    let out: Uint8Array;
    try {
      out = zstdDecompressPortable(buf);
    } catch (error) {
      return cb(error as Error);
    }
    cb(null, Buffer.from(out.buffer, out.byteOffset, out.byteLength));
  },
};

/** Decodes a whole container file. `uri` names it in errors. */
export async function decodeAvroContainer(bytes: Uint8Array, uri: string): Promise<AvroContainer> {
  const decoder = new avro.streams.BlockDecoder({
    codecs: CODECS,
    parseHook: (schema: avro.Schema) => avro.Type.forSchema(schema, bigintLongOptions()),
  });
  let meta: Record<string, string> = {};
  let schema: unknown = null;
  decoder.on("metadata", (_type: avro.Type, codec: string, header: { meta: Record<string, Buffer> }) => {
    meta = Object.fromEntries(Object.entries(header.meta).map(([k, v]) => [k, v.toString("utf8")]));
    schema = JSON.parse(meta["avro.schema"] ?? "null");
    void codec;
  });
  const records: AvroRecord[] = [];
  try {
    await new Promise<void>((resolve, reject) => {
      decoder.on("data", (record: AvroRecord) => records.push(record));
      decoder.on("end", resolve);
      decoder.on("error", reject);
      Readable.from([Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)]).on("error", reject).pipe(decoder);
    });
  } catch (error) {
    const message = (error as Error).message;
    if (/unknown codec/.test(message)) throw new UnsupportedFeatureError(uri, `Avro file uses a codec this reader lacks (${message})`, { cause: error });
    throw new CorruptFileError(uri, `not a readable Avro container file (${message})`, { cause: error });
  }
  return { meta, schema, records };
}
