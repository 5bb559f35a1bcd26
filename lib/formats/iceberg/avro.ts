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

const MAGIC = [0x4f, 0x62, 0x6a, 0x01]; // "Obj\x01"
const SYNC_BYTES = 16;

/**
 * Walks the container's framing (Avro spec "Object Container Files": magic, header map, sync
 * marker, then blocks of count, byte size, data and the sync marker again) and returns the number
 * of records its blocks hold. avsc's decoder stops quietly at a cut: a truncated manifest list
 * would decode as a shorter (or empty) list, and every file it no longer names would look
 * unreferenced. So the file must end exactly after a block's sync marker, or it is not whole.
 */
export function containerRecordCount(bytes: Uint8Array, uri: string): number {
  const cut = (where: string): never => {
    throw new CorruptFileError(uri, `truncated Avro container file: it ends inside ${where} (${bytes.length} bytes)`);
  };
  if (bytes.length < MAGIC.length || MAGIC.some((b, i) => bytes[i] !== b)) {
    throw new CorruptFileError(uri, `not a readable Avro container file: ${bytes.length === 0 ? "it is empty (0 bytes)" : "no Obj magic at its start"}`);
  }
  let pos = MAGIC.length;
  const long = (where: string): number => {
    let result = 0;
    let shift = 1;
    for (;;) {
      if (pos >= bytes.length) return cut(where);
      const byte = bytes[pos++]!;
      result += (byte & 0x7f) * shift;
      if (byte < 0x80) break;
      shift *= 128;
      if (shift > 2 ** 63) throw new CorruptFileError(uri, `not a readable Avro container file: a malformed number in ${where}`);
    }
    // Zigzag: 0, -1, 1, -2 ... as 0, 1, 2, 3 ...
    return result % 2 === 0 ? result / 2 : -(result + 1) / 2;
  };
  const skip = (n: number, where: string): void => {
    if (n < 0) throw new CorruptFileError(uri, `not a readable Avro container file: a negative length in ${where}`);
    if (pos + n > bytes.length) cut(where);
    pos += n;
  };
  for (;;) {
    let count = long("the header");
    if (count === 0) break;
    if (count < 0) {
      count = -count;
      long("the header");
    }
    for (let i = 0; i < count; i++) {
      skip(long("the header"), "the header");
      skip(long("the header"), "the header");
    }
  }
  const syncAt = pos;
  skip(SYNC_BYTES, "the header");
  let records = 0;
  let block = 0;
  while (pos < bytes.length) {
    const where = `block ${block}`;
    const count = long(where);
    if (count < 0) throw new CorruptFileError(uri, `not a readable Avro container file: ${where} has ${count} records`);
    skip(long(where), where);
    const markerAt = pos;
    skip(SYNC_BYTES, where);
    for (let i = 0; i < SYNC_BYTES; i++) {
      if (bytes[markerAt + i] !== bytes[syncAt + i]) throw new CorruptFileError(uri, `not a readable Avro container file: ${where} does not end with the file's sync marker`);
    }
    records += count;
    block++;
  }
  return records;
}

/** Decodes a whole container file (every block, to its last byte). `uri` names it in errors. */
export async function decodeAvroContainer(bytes: Uint8Array, uri: string): Promise<AvroContainer> {
  const expected = containerRecordCount(bytes, uri);
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
      Readable.from([Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)])
        .on("error", reject)
        .pipe(decoder);
    });
  } catch (error) {
    const message = (error as Error).message;
    if (/unknown codec/.test(message)) throw new UnsupportedFeatureError(uri, `Avro file uses a codec this reader lacks (${message})`, { cause: error });
    throw new CorruptFileError(uri, `not a readable Avro container file (${message})`, { cause: error });
  }
  if (records.length !== expected) throw new CorruptFileError(uri, `damaged Avro container file: its blocks hold ${expected} records, ${records.length} decode`);
  return { meta, schema, records };
}
