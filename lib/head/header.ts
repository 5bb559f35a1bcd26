/**
 * The fixed 64-byte header in front of every head body, so one small ranged GET tells a
 * writer which table version a head holds (and its ETag), and a reader how to decode it:
 *
 *   0  "LWHD"                 magic
 *   4  u16 header version     1
 *   6  u16 header length      bytes before the body (64 in version 1; readers skip to it)
 *   8  u64 table version
 *  16  u64 body length        stored (possibly compressed) body bytes
 *  24  u64 decoded length     body bytes after decompression
 *  32  u32 body CRC-32        of the stored body bytes
 *  36  u8  compression        0 none, 1 gzip, 2 zstd
 *  37  u8  codec name length
 *  38  codec name             ASCII, up to 26 bytes, zero padded to byte 64
 *
 * Header version 2 (sectioned.ts) keeps these 64 bytes with three changes of meaning: the
 * header length also covers the section directory that follows byte 64, byte 32 is the
 * directory's CRC-32, and the lengths and compression describe the sections taken together
 * (each section has its own in the directory).
 *
 * All integers little-endian, like Lance's own footers. Bytes 0-15 (magic, header version,
 * header length, table version) keep their place in every later header version, so even a
 * writer that cannot read a newer header can still tell which table version it holds and
 * never replaces a newer head with an older one.
 */
import { CorruptHeadError, UnsupportedHeadError } from "./errors.ts";

export const HEAD_MAGIC = "LWHD";
/** The header version this code writes (version 1 stays readable). */
export const HEAD_HEADER_VERSION = 2;
export const HEAD_HEADER_VERSION_1 = 1;
const READABLE_HEADER_VERSIONS = [1, 2];
export const HEAD_HEADER_BYTES = 64;
const MAX_CODEC_NAME_BYTES = HEAD_HEADER_BYTES - 38;

export type BodyCompression = "none" | "gzip" | "zstd";
export const COMPRESSION_CODES: readonly BodyCompression[] = ["none", "gzip", "zstd"];

export interface HeadHeader {
  headerVersion: number;
  headerLength: number;
  tableVersion: number;
  bodyLength: number;
  decodedLength: number;
  bodyCrc32: number;
  compression: BodyCompression;
  codec: string;
}

/** Version 1 by default (container.ts); sectioned.ts passes version 2 and its header length. */
export function encodeHeader(
  header: Omit<HeadHeader, "headerVersion" | "headerLength">,
  layout: { headerVersion: number; headerLength: number } = { headerVersion: HEAD_HEADER_VERSION_1, headerLength: HEAD_HEADER_BYTES },
): Uint8Array {
  const codec = new TextEncoder().encode(header.codec);
  if (codec.length === 0 || codec.length > MAX_CODEC_NAME_BYTES) throw new Error(`codec name ${header.codec} must be 1-${MAX_CODEC_NAME_BYTES} bytes`);
  const out = new Uint8Array(HEAD_HEADER_BYTES);
  const view = new DataView(out.buffer);
  out.set(new TextEncoder().encode(HEAD_MAGIC), 0);
  view.setUint16(4, layout.headerVersion, true);
  view.setUint16(6, layout.headerLength, true);
  view.setBigUint64(8, BigInt(header.tableVersion), true);
  view.setBigUint64(16, BigInt(header.bodyLength), true);
  view.setBigUint64(24, BigInt(header.decodedLength), true);
  view.setUint32(32, header.bodyCrc32, true);
  view.setUint8(36, COMPRESSION_CODES.indexOf(header.compression));
  view.setUint8(37, codec.length);
  out.set(codec, 38);
  return out;
}

/**
 * Parses the header from the first bytes of a head. Throws CorruptHeadError for bytes that are
 * not a lakewarden head and UnsupportedHeadError for a newer header version it cannot read.
 * `uri` names the object in the message.
 */
export function decodeHeader(bytes: Uint8Array, uri: string): HeadHeader {
  if (bytes.length < 8) throw new CorruptHeadError(uri, `head is ${bytes.length} bytes, shorter than its header`);
  const magic = new TextDecoder().decode(bytes.subarray(0, 4));
  if (magic !== HEAD_MAGIC) throw new CorruptHeadError(uri, `not a lakewarden head (magic ${JSON.stringify(magic)}, expected "${HEAD_MAGIC}")`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerVersion = view.getUint16(4, true);
  const headerLength = view.getUint16(6, true);
  if (!READABLE_HEADER_VERSIONS.includes(headerVersion)) {
    throw new UnsupportedHeadError(uri, `head header version ${headerVersion} is not supported (this reader knows ${READABLE_HEADER_VERSIONS.join(", ")})`);
  }
  if (headerLength < HEAD_HEADER_BYTES) throw new CorruptHeadError(uri, `head header length ${headerLength} is below ${HEAD_HEADER_BYTES}`);
  if (bytes.length < HEAD_HEADER_BYTES) throw new CorruptHeadError(uri, `head is ${bytes.length} bytes, shorter than its ${HEAD_HEADER_BYTES}-byte header`);
  const tableVersion = safeNumber(view.getBigUint64(8, true), "table version", uri);
  const bodyLength = safeNumber(view.getBigUint64(16, true), "body length", uri);
  const decodedLength = safeNumber(view.getBigUint64(24, true), "decoded length", uri);
  const bodyCrc32 = view.getUint32(32, true);
  const compression = COMPRESSION_CODES[view.getUint8(36)];
  if (!compression) throw new UnsupportedHeadError(uri, `head body compression code ${view.getUint8(36)} is not supported`);
  const codecLength = view.getUint8(37);
  if (codecLength === 0 || codecLength > MAX_CODEC_NAME_BYTES) throw new CorruptHeadError(uri, `head codec name length ${codecLength} is out of range`);
  const codec = new TextDecoder().decode(bytes.subarray(38, 38 + codecLength));
  return { headerVersion, headerLength, tableVersion, bodyLength, decodedLength, bodyCrc32, compression, codec };
}

function safeNumber(value: bigint, what: string, uri: string): number {
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw new CorruptHeadError(uri, `head ${what} ${value} is beyond 2^53`);
  return Number(value);
}

/**
 * The table version a head holds, read from the layout every header version shares; null when
 * the bytes are not a lakewarden head at all (wrong magic or too short).
 */
export function peekTableVersion(bytes: Uint8Array): number | null {
  if (bytes.length < 16 || new TextDecoder().decode(bytes.subarray(0, 4)) !== HEAD_MAGIC) return null;
  const version = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getBigUint64(8, true);
  return version > BigInt(Number.MAX_SAFE_INTEGER) ? null : Number(version);
}
