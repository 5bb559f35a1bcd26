/**
 * Parquet page checksums, read without a Parquet library: hyparquet decodes pages but checks no
 * CRC, and a changed byte inside a compressed literal decodes to a different value without error.
 */
import { crc32 } from "node:zlib";

/** PageType: DATA_PAGE (0) and DICTIONARY_PAGE (2). */
const CHECKSUMMED_PAGES: ReadonlySet<number> = new Set([0, 2]);

interface PageHeader {
  type: number;
  compressedSize: number;
  crc: number | null;
  /** Where the page's stored bytes start. */
  next: number;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Walks the page headers of one column chunk (Thrift compact PageHeader: 1 type, 2 uncompressed
 * size, 3 compressed size, 4 crc) and checks each page's CRC-32 over its stored bytes, where the
 * writer recorded one (parquet-mr does by default) on a data page v1 or dictionary page; a v2
 * data page's checksum is left alone, as writers have disagreed on what it covers. The pages
 * must tile the chunk exactly.
 */
export function pageChecksumProblem(bytes: Uint8Array, start: number, end: number): string | null {
  let at = start;
  let page = 0;
  while (at < end) {
    let header: PageHeader;
    try {
      header = readPageHeader(bytes, at, end);
    } catch (error) {
      return `page ${page} at byte ${at}: its header does not decode (${messageOf(error)})`;
    }
    const body = header.next + header.compressedSize;
    if (header.compressedSize < 0 || body > end) return `page ${page} at byte ${at} runs past the column chunk's end (${end})`;
    if (header.crc !== null && CHECKSUMMED_PAGES.has(header.type) && (crc32(bytes.subarray(header.next, body)) | 0) !== header.crc)
      return `page ${page} at byte ${at}: checksum mismatch`;
    at = body;
    page++;
  }
  return null;
}

class ThriftReader {
  private readonly bytes: Uint8Array;
  private readonly end: number;
  at: number;

  constructor(bytes: Uint8Array, at: number, end: number) {
    this.bytes = bytes;
    this.at = at;
    this.end = end;
  }

  byte(): number {
    if (this.at >= this.end) throw new Error("ends early");
    return this.bytes[this.at++]!;
  }

  varint(): bigint {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      const b = this.byte();
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result;
      shift += 7n;
      if (shift > 70n) throw new Error("varint too long");
    }
  }

  zigzag(): number {
    const n = this.varint();
    return Number((n >> 1n) ^ -(n & 1n));
  }

  skip(type: number, depth = 0): void {
    if (depth > 32) throw new Error("nested too deep");
    switch (type) {
      case 1:
      case 2:
        return; // booleans live in the type nibble
      case 3:
        this.byte();
        return;
      case 4:
      case 5:
      case 6:
        this.varint();
        return;
      case 7:
        this.at += 8;
        return;
      case 8: {
        const length = Number(this.varint());
        this.at += length;
        if (this.at > this.end) throw new Error("ends early");
        return;
      }
      case 9:
      case 10: {
        const head = this.byte();
        const count = head >> 4 === 15 ? Number(this.varint()) : head >> 4;
        for (let i = 0; i < count; i++) this.skip(head & 0x0f, depth + 1);
        return;
      }
      case 11: {
        const count = Number(this.varint());
        if (count === 0) return;
        const types = this.byte();
        for (let i = 0; i < count; i++) {
          this.skip(types >> 4, depth + 1);
          this.skip(types & 0x0f, depth + 1);
        }
        return;
      }
      case 12:
        this.struct(() => false, depth + 1);
        return;
      default:
        throw new Error(`unknown field type ${type}`);
    }
  }

  /** Reads a struct's fields; `read(id, type)` consumes the ones it wants and returns true. */
  struct(read: (id: number, type: number) => boolean, depth = 0): void {
    let id = 0;
    for (;;) {
      const head = this.byte();
      if (head === 0) return;
      const type = head & 0x0f;
      id = head >> 4 === 0 ? this.zigzag() : id + (head >> 4);
      if (!read(id, type)) this.skip(type, depth);
    }
  }
}

function readPageHeader(bytes: Uint8Array, at: number, end: number): PageHeader {
  const reader = new ThriftReader(bytes, at, end);
  let pageType: number | null = null;
  let compressedSize: number | null = null;
  let crc: number | null = null;
  reader.struct((id, type) => {
    if (type !== 5) return false;
    if (id === 1) pageType = reader.zigzag();
    else if (id === 3) compressedSize = reader.zigzag();
    else if (id === 4) crc = reader.zigzag();
    else return false;
    return true;
  });
  if (pageType === null) throw new Error("no page type");
  if (compressedSize === null) throw new Error("no compressed page size");
  return { type: pageType, compressedSize, crc, next: reader.at };
}
