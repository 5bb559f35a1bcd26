/**
 * Avro object container files (manifest lists, manifests) decoded with avsc, every Avro `long`
 * as a `bigint` (snapshot ids, sequence numbers and sizes are 64-bit). Codecs: null and
 * deflate (avsc's own; every fixture is deflate), zstandard through Node's zlib. Snappy is
 * refused by name rather than misread.
 */
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

type Decompress = (data: Uint8Array) => Uint8Array;

/** zstd is in node:zlib from Node 22.15; an older Node (20) decompresses with fzstd (pure JavaScript). */
const zstdSync = (zlib as { zstdDecompressSync?: (data: Uint8Array) => Buffer }).zstdDecompressSync;

/**
 * Block codecs, each synchronous: a block is decompressed whole and at once (Avro writers keep
 * blocks to tens of KiB), with no stream or callback per block. A 10,000-file table's cleanup
 * decoded its manifests through avsc's streaming BlockDecoder, whose per-block zlib stream
 * (its buffers, its callbacks) cost more CPU than decoding the records did.
 */
const CODECS: Record<string, Decompress> = {
  null: (data) => data,
  // Output in chunks of about what a block inflates to, not zlib's 16 KiB: pyiceberg writes a block per record (~200 bytes).
  deflate: (data) => zlib.inflateRawSync(data, { chunkSize: Math.min(Math.max(data.length * 4, 1024), 1 << 20) }),
  zstandard: (data) => (zstdSync ? zstdSync(data) : zstdDecompressPortable(data)),
};

const MAGIC = [0x4f, 0x62, 0x6a, 0x01]; // "Obj\x01"
const SYNC_BYTES = 16;

/** A container file's header metadata and its blocks, still encoded. */
interface ContainerBlocks {
  meta: Record<string, string>;
  blocks: { count: number; data: Uint8Array }[];
}

/**
 * Walks the container's framing (Avro spec "Object Container Files": magic, header map, sync
 * marker, then blocks of count, byte size, data and the sync marker again) and returns its
 * metadata and blocks. A decoder that stops quietly at a cut would read a truncated manifest list
 * as a shorter (or empty) list, and every file it no longer names would look unreferenced. So the
 * file must end exactly after a block's sync marker, or it is not whole.
 */
export function containerBlocks(bytes: Uint8Array, uri: string): ContainerBlocks {
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
  const take = (n: number, where: string): Uint8Array => {
    if (n < 0) throw new CorruptFileError(uri, `not a readable Avro container file: a negative length in ${where}`);
    if (pos + n > bytes.length) cut(where);
    pos += n;
    return bytes.subarray(pos - n, pos);
  };
  const text = new TextDecoder();
  const meta: Record<string, string> = {};
  for (;;) {
    let count = long("the header");
    if (count === 0) break;
    if (count < 0) {
      count = -count;
      long("the header");
    }
    for (let i = 0; i < count; i++) {
      const key = text.decode(take(long("the header"), "the header"));
      meta[key] = text.decode(take(long("the header"), "the header"));
    }
  }
  const syncAt = pos;
  take(SYNC_BYTES, "the header");
  const blocks: ContainerBlocks["blocks"] = [];
  while (pos < bytes.length) {
    const where = `block ${blocks.length}`;
    const count = long(where);
    if (count < 0) throw new CorruptFileError(uri, `not a readable Avro container file: ${where} has ${count} records`);
    const data = take(long(where), where);
    const markerAt = pos;
    take(SYNC_BYTES, where);
    for (let i = 0; i < SYNC_BYTES; i++) {
      if (bytes[markerAt + i] !== bytes[syncAt + i]) throw new CorruptFileError(uri, `not a readable Avro container file: ${where} does not end with the file's sync marker`);
    }
    blocks.push({ count, data });
  }
  return { meta, blocks };
}

/** Record types by writer schema: manifests of one table share a few schemas, and building a type costs more than decoding a small file. */
const types = new Map<string, avro.Type>();
const TYPES_HELD = 32;

function recordType(schemaText: string): avro.Type {
  let type = types.get(schemaText);
  if (!type) {
    type = avro.Type.forSchema(JSON.parse(schemaText) as avro.Schema, bigintLongOptions());
    if (types.size >= TYPES_HELD) types.delete(types.keys().next().value!);
    types.set(schemaText, type);
  }
  return type;
}

/** Decodes a whole container file (every block, to its last byte). `uri` names it in errors. */
export async function decodeAvroContainer(bytes: Uint8Array, uri: string): Promise<AvroContainer> {
  const records: AvroRecord[] = [];
  const { meta, schema } = visitAvroRecords(bytes, uri, () => (record) => void records.push(record));
  return { meta, schema, records };
}

/** What a container file's header says: its metadata and writer schema (as JSON). */
export type AvroHeader = Omit<AvroContainer, "records">;

/**
 * Decodes a whole container file (every block, to its last byte, as decodeAvroContainer) and
 * hands each record to the visitor `start` returns for the file's header, as it is decoded: a
 * caller that keeps a few fields of each record never holds the file's records all at once
 * (a 10,000-entry manifest's records, their statistics maps included, are tens of MB).
 * A visitor's own CorruptFileError passes as it is; anything else it or the decoding throws is
 * the file's corruption.
 */
export function visitAvroRecords(bytes: Uint8Array, uri: string, start: (header: AvroHeader) => (record: AvroRecord, index: number) => void): AvroHeader {
  const { meta, blocks } = containerBlocks(bytes, uri);
  const codec = meta["avro.codec"] ?? "null";
  const decompress = CODECS[codec];
  if (!decompress) throw new UnsupportedFeatureError(uri, `Avro file uses a codec this reader lacks (unknown codec: ${codec})`);
  let schema: unknown;
  try {
    schema = JSON.parse(meta["avro.schema"] ?? "null");
    const type = recordType(meta["avro.schema"] ?? "null");
    const visit = start({ meta, schema });
    let index = 0;
    for (const [blockIndex, block] of blocks.entries()) {
      const out = decompress(block.data);
      const data = Buffer.isBuffer(out) ? out : Buffer.from(out.buffer, out.byteOffset, out.byteLength);
      let pos = 0;
      for (let i = 0; i < block.count; i++) {
        const { value, offset } = type.decode(data, pos);
        if (offset < 0) throw new Error(`block ${blockIndex} ends inside record ${i} of ${block.count}`);
        visit(value as AvroRecord, index++);
        pos = offset;
      }
    }
  } catch (error) {
    if (error instanceof CorruptFileError) throw error;
    throw new CorruptFileError(uri, `not a readable Avro container file (${(error as Error).message})`, { cause: error });
  }
  return { meta, schema };
}
