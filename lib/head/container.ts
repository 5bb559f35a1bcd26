/**
 * A whole head object of header version 1: header + (compressed) codec body, the layout
 * written before the sectioned heads (sectioned.ts); `encodeHead` still writes it (tests,
 * `headerVersion: 1`), `decodeHead` reads both. Decoding checks everything the header
 * promises (length, checksum, codec, decoded length) before a codec sees a byte, so a truncated
 * or bit-flipped head is rejected instead of decoded into a wrong answer.
 */
import { crc32 } from "node:zlib";
import { compress, decompress } from "./compression.ts";
import type { HeadCodec } from "./codec.ts";
import { CorruptHeadError, UnsupportedHeadError } from "./errors.ts";
import { HEAD_HEADER_VERSION_1, decodeHeader, encodeHeader } from "./header.ts";
import { decodeSectionedHead } from "./sectioned.ts";
import type { BodyCompression, HeadHeader } from "./header.ts";
import type { HeadModel } from "./model.ts";
import { headCodecs } from "./registry.ts";
import type { HeadCodecRegistry } from "./registry.ts";

export interface EncodeHeadOptions {
  tableVersion: number;
  codec: HeadCodec;
  compression: BodyCompression;
}

export interface EncodedHead {
  bytes: Uint8Array;
  header: HeadHeader;
}

export function encodeHead(model: HeadModel, options: EncodeHeadOptions): EncodedHead {
  const decoded = options.codec.encode(model);
  const body = compress(decoded, options.compression);
  const fields = {
    tableVersion: options.tableVersion,
    bodyLength: body.length,
    decodedLength: decoded.length,
    bodyCrc32: crc32(body),
    compression: options.compression,
    codec: options.codec.name,
  };
  const headerBytes = encodeHeader(fields);
  const bytes = new Uint8Array(headerBytes.length + body.length);
  bytes.set(headerBytes, 0);
  bytes.set(body, headerBytes.length);
  return { bytes, header: decodeHeader(headerBytes, "(new head)") };
}

export interface DecodedHead {
  header: HeadHeader;
  model: HeadModel;
}

/** Decodes a whole head object; `uri` names it in errors (CorruptHeadError / UnsupportedHeadError). */
export function decodeHead(bytes: Uint8Array, uri: string, registry: HeadCodecRegistry = headCodecs): DecodedHead {
  const header = decodeHeader(bytes, uri);
  if (header.headerVersion !== HEAD_HEADER_VERSION_1) return decodeSectionedHead(bytes, header, uri, registry);
  const expected = header.headerLength + header.bodyLength;
  if (bytes.length < expected) throw new CorruptHeadError(uri, `head truncated: ${bytes.length} bytes, header promises ${expected}`);
  if (bytes.length > expected) throw new CorruptHeadError(uri, `head has ${bytes.length - expected} bytes after its body`);
  const body = bytes.subarray(header.headerLength, expected);
  if (crc32(body) !== header.bodyCrc32) throw new CorruptHeadError(uri, "head body checksum mismatch");
  const codec = registry.get(header.codec);
  if (!codec) throw new UnsupportedHeadError(uri, `head codec ${JSON.stringify(header.codec)} is not known here (known: ${registry.names().join(", ")})`);
  let decoded: Uint8Array;
  try {
    decoded = decompress(body, header.compression, header.decodedLength);
  } catch (error) {
    throw new CorruptHeadError(uri, `head body does not decompress: ${(error as Error).message}`, { cause: error });
  }
  if (decoded.length !== header.decodedLength) {
    throw new CorruptHeadError(uri, `head body decodes to ${decoded.length} bytes, header promises ${header.decodedLength}`);
  }
  try {
    return { header, model: codec.decode(decoded) };
  } catch (error) {
    throw new CorruptHeadError(uri, `head body (codec ${codec.name}) does not decode: ${(error as Error).message}`, { cause: error });
  }
}
