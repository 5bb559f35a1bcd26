/**
 * The sectioned head (header version 2):
 *
 *   [64-byte header (header.ts), version 2]
 *   [section directory]        header length - 64 bytes, CRC-32 in header byte 32
 *   [section] [section] ...    each independently compressed, in directory order
 *
 * Directory: u16 LE section count, then per section: u8 name length | name (UTF-8) |
 * u8 compression (0 none, 1 gzip, 2 zstd) | u32 LE stored length | u32 LE raw length |
 * u32 LE CRC-32 of the stored bytes. Sections follow one another from the header length on.
 *
 * Each section is one model table (or the properties, first, as "@properties") encoded alone
 * by the head's codec. Small sections come first (properties, summary, the versions since the
 * checkpoint, config, schema), then the live files, then the large optional ones (referenced
 * files, the format's raw metadata, footers), so one ranged GET of a fixed prefix
 * (HEAD_PREFIX_BYTES) holds the header, the directory and the timeline, and a reader
 * decompresses only the sections it asks for. Referenced files name live paths by reference
 * (path-dedup.ts): each path is stored once.
 */
import { crc32 } from "node:zlib";
import type { HeadCodec } from "./codec.ts";
import { canDecompress, compress, decompress } from "./compression.ts";
import { CorruptHeadError, UnsupportedHeadError } from "./errors.ts";
import { COMPRESSION_CODES, HEAD_HEADER_BYTES, decodeHeader, encodeHeader } from "./header.ts";
import type { BodyCompression, HeadHeader } from "./header.ts";
import type { HeadModel, HeadTable } from "./model.ts";
import { packReferencedFiles, unpackReferencedFiles } from "./path-dedup.ts";
import type { HeadCodecRegistry } from "./registry.ts";

export const SECTIONED_HEADER_VERSION = 2;
export const PROPERTIES_SECTION = "@properties";
/** What a timeline reader GETs first: header, directory and the small sections of any realistic head. */
export const HEAD_PREFIX_BYTES = 64 * 1024;
/**
 * What a loader GETs first. Larger than the timeline's prefix: a loader of a current head needs
 * all of it (every section's checksum is verified), and a second round trip (~20 ms on S3)
 * costs more than the transfer of a few MiB, so a head of up to ~100K live files (1.4 MiB) is
 * one GET. A stale head costs no more for it: the rest of a larger one is fetched anyway while
 * its currency is decided (head-reader.ts); it is still rejected from its properties, nothing
 * else decompressed.
 */
export const LOAD_PREFIX_BYTES = 4 * 1024 * 1024;

/** Write order: small first. Tables not listed here follow, in model order. */
export const SECTION_ORDER: readonly string[] = [PROPERTIES_SECTION, "summary", "recent_versions", "config", "schema", "live_files", "referenced_files", "raw_metadata", "footers"];

export interface EncodedSection {
  name: string;
  compression: BodyCompression;
  stored: Uint8Array;
  rawLength: number;
  crc32: number;
}

export interface SectionEntry {
  name: string;
  compression: BodyCompression;
  /** Absolute offset in the head object. */
  offset: number;
  storedLength: number;
  rawLength: number;
  crc32: number;
}

/** Sections smaller than this are stored uncompressed: a decompressor's setup costs more than their bytes. */
export const MIN_COMPRESSED_SECTION_BYTES = 4096;

export function encodeSection(name: string, raw: Uint8Array, compression: BodyCompression): EncodedSection {
  if (raw.length < MIN_COMPRESSED_SECTION_BYTES) compression = "none";
  const stored = compress(raw, compression);
  return { name, compression, stored, rawLength: raw.length, crc32: crc32(stored) };
}

/** One table (or the properties) encoded alone by the codec. */
export function encodeModelSection(codec: HeadCodec, name: string, model: HeadModel, compression: BodyCompression): EncodedSection {
  return encodeSection(name, codec.encode(model), compression);
}

/** The model's sections, in write order, each as the codec encodes it alone (referenced paths packed). */
export function modelSections(model: HeadModel): { name: string; model: HeadModel }[] {
  const live = model.tables.find((t) => t.name === "live_files");
  const tables = model.tables.map((table) => {
    if (table.name !== "referenced_files" || !live) return table;
    return packReferencedFiles(live, table) ?? table;
  });
  const rank = (name: string) => {
    const at = SECTION_ORDER.indexOf(name);
    return at === -1 ? SECTION_ORDER.length : at;
  };
  const ordered = tables.map((table, i) => ({ table, i })).sort((a, b) => rank(a.table.name) - rank(b.table.name) || a.i - b.i);
  return [
    { name: PROPERTIES_SECTION, model: { properties: model.properties, tables: [] } },
    ...ordered.map(({ table }) => ({ name: table.name, model: { properties: {}, tables: [table] } })),
  ];
}

export interface AssembledHead {
  bytes: Uint8Array;
  header: HeadHeader;
}

/** Header + directory + sections; `sections` in the order to store them. */
export function assembleSectionedHead(tableVersion: number, codec: string, compression: BodyCompression, sections: readonly EncodedSection[]): AssembledHead {
  const encoder = new TextEncoder();
  const names = sections.map((section) => encoder.encode(section.name));
  const directoryLength = 2 + sections.reduce((sum, _s, i) => sum + 1 + names[i]!.length + 1 + 12, 0);
  const headerLength = HEAD_HEADER_BYTES + directoryLength;
  if (headerLength > 0xffff) throw new Error(`head directory of ${sections.length} sections is too large`);
  const bodyLength = sections.reduce((sum, section) => sum + section.stored.length, 0);
  const bytes = new Uint8Array(headerLength + bodyLength);
  const view = new DataView(bytes.buffer);
  let at = HEAD_HEADER_BYTES;
  view.setUint16(at, sections.length, true);
  at += 2;
  sections.forEach((section, i) => {
    const name = names[i]!;
    if (name.length === 0 || name.length > 255) throw new Error(`head section name ${JSON.stringify(section.name)} must be 1-255 bytes`);
    bytes[at] = name.length;
    bytes.set(name, at + 1);
    at += 1 + name.length;
    bytes[at] = COMPRESSION_CODES.indexOf(section.compression);
    view.setUint32(at + 1, section.stored.length, true);
    view.setUint32(at + 5, section.rawLength, true);
    view.setUint32(at + 9, section.crc32, true);
    at += 13;
  });
  for (const section of sections) {
    bytes.set(section.stored, at);
    at += section.stored.length;
  }
  const headerBytes = encodeHeader(
    {
      tableVersion,
      bodyLength,
      decodedLength: sections.reduce((sum, section) => sum + section.rawLength, 0),
      bodyCrc32: crc32(bytes.subarray(HEAD_HEADER_BYTES, headerLength)),
      compression,
      codec,
    },
    { headerVersion: SECTIONED_HEADER_VERSION, headerLength },
  );
  bytes.set(headerBytes, 0);
  return { bytes, header: decodeHeader(bytes.subarray(0, HEAD_HEADER_BYTES), "(new head)") };
}

export function encodeSectionedHead(model: HeadModel, options: { tableVersion: number; codec: HeadCodec; compression: BodyCompression }): AssembledHead {
  const sections = modelSections(model).map((s) => encodeModelSection(options.codec, s.name, s.model, options.compression));
  return assembleSectionedHead(options.tableVersion, options.codec.name, options.compression, sections);
}

/** The directory, from bytes holding at least the header length; checked against the header. */
export function readDirectory(bytes: Uint8Array, header: HeadHeader, uri: string): SectionEntry[] {
  if (bytes.length < header.headerLength) throw new CorruptHeadError(uri, `head is ${bytes.length} bytes, shorter than its ${header.headerLength}-byte header and directory`);
  const directory = bytes.subarray(HEAD_HEADER_BYTES, header.headerLength);
  if (crc32(directory) !== header.bodyCrc32) throw new CorruptHeadError(uri, "head section directory checksum mismatch");
  const view = new DataView(directory.buffer, directory.byteOffset, directory.byteLength);
  const need = (at: number, n: number) => {
    if (at + n > directory.length) throw new CorruptHeadError(uri, "head section directory is truncated");
  };
  need(0, 2);
  const count = view.getUint16(0, true);
  const entries: SectionEntry[] = [];
  const decoder = new TextDecoder("utf-8", { fatal: true });
  let at = 2;
  let offset = header.headerLength;
  let raw = 0;
  for (let i = 0; i < count; i++) {
    need(at, 1);
    const nameLength = directory[at]!;
    need(at + 1, nameLength + 13);
    let name: string;
    try {
      name = decoder.decode(directory.subarray(at + 1, at + 1 + nameLength));
    } catch {
      throw new CorruptHeadError(uri, `head section ${i} name is not UTF-8`);
    }
    at += 1 + nameLength;
    const compression = COMPRESSION_CODES[directory[at]!];
    if (!compression) throw new UnsupportedHeadError(uri, `head section ${name} compression code ${directory[at]} is not supported`);
    const entry: SectionEntry = {
      name,
      compression,
      offset,
      storedLength: view.getUint32(at + 1, true),
      rawLength: view.getUint32(at + 5, true),
      crc32: view.getUint32(at + 9, true),
    };
    at += 13;
    if (entries.some((e) => e.name === name)) throw new CorruptHeadError(uri, `head has section ${name} twice`);
    entries.push(entry);
    offset += entry.storedLength;
    raw += entry.rawLength;
  }
  if (at !== directory.length) throw new CorruptHeadError(uri, `head section directory has ${directory.length - at} bytes after its last entry`);
  if (offset - header.headerLength !== header.bodyLength || raw !== header.decodedLength) {
    throw new CorruptHeadError(uri, "head section directory disagrees with the header's lengths");
  }
  if (entries[0]?.name !== PROPERTIES_SECTION) throw new CorruptHeadError(uri, "head does not start with its properties section");
  return entries;
}

/**
 * A sectioned head as far as its bytes have been read: sections are decompressed and decoded
 * on first use (and kept), each checked against its directory entry first.
 */
export class SectionedHead {
  readonly uri: string;
  readonly header: HeadHeader;
  readonly entries: readonly SectionEntry[];
  readonly codec: HeadCodec;
  /** The first bytes of the object (all of it once `withRest` was given the remainder). */
  readonly bytes: Uint8Array;
  readonly #tables = new Map<string, HeadTable | null>();
  #properties: Record<string, string> | null = null;

  constructor(uri: string, header: HeadHeader, entries: readonly SectionEntry[], codec: HeadCodec, bytes: Uint8Array) {
    this.uri = uri;
    this.header = header;
    this.entries = entries;
    this.codec = codec;
    this.bytes = bytes;
  }

  /** Parses header and directory from the first bytes of a head (they must hold the directory). */
  static open(bytes: Uint8Array, uri: string, registry: HeadCodecRegistry, header: HeadHeader = decodeHeader(bytes, uri)): SectionedHead {
    if (header.headerVersion !== SECTIONED_HEADER_VERSION) throw new UnsupportedHeadError(uri, `head header version ${header.headerVersion} is not sectioned`);
    const codec = registry.get(header.codec);
    if (!codec) throw new UnsupportedHeadError(uri, `head codec ${JSON.stringify(header.codec)} is not known here (known: ${registry.names().join(", ")})`);
    return new SectionedHead(uri, header, readDirectory(bytes, header, uri), codec, bytes);
  }

  /** Total length of the object the header describes. */
  get totalLength(): number {
    return this.header.headerLength + this.header.bodyLength;
  }

  /** Whether the bytes read so far hold all of the named sections (absent sections count as held). */
  holds(names: readonly string[]): boolean {
    return names.every((name) => {
      const entry = this.entries.find((e) => e.name === name);
      return !entry || entry.offset + entry.storedLength <= this.bytes.length;
    });
  }

  /** The same head with the rest of its bytes (`rest` starts where `bytes` ended). */
  withRest(rest: Uint8Array): SectionedHead {
    const whole = new Uint8Array(this.bytes.length + rest.length);
    whole.set(this.bytes, 0);
    whole.set(rest, this.bytes.length);
    if (whole.length !== this.totalLength) throw new CorruptHeadError(this.uri, `head truncated or overlong: ${whole.length} bytes, its header promises ${this.totalLength}`);
    const head = new SectionedHead(this.uri, this.header, this.entries, this.codec, whole);
    head.#properties = this.#properties;
    for (const [name, table] of this.#tables) head.#tables.set(name, table);
    return head;
  }

  /** Checks every section's CRC-32 (cheap next to decompressing): after it, only a writer's bug can fail a section. */
  verifyChecksums(): void {
    for (const entry of this.entries) {
      const end = entry.offset + entry.storedLength;
      if (end > this.bytes.length) throw new CorruptHeadError(this.uri, `head section ${entry.name} lies beyond the ${this.bytes.length} bytes read`);
      if (crc32(this.bytes.subarray(entry.offset, end)) !== entry.crc32) throw new CorruptHeadError(this.uri, `head section ${entry.name} checksum mismatch`);
    }
  }

  has(name: string): boolean {
    return this.entries.some((e) => e.name === name);
  }

  /** The raw (decompressed, checked) bytes of a section. */
  raw(name: string): Uint8Array {
    const entry = this.entries.find((e) => e.name === name);
    if (!entry) throw new CorruptHeadError(this.uri, `head lacks section ${name}`);
    const end = entry.offset + entry.storedLength;
    if (end > this.bytes.length) throw new CorruptHeadError(this.uri, `head section ${name} lies beyond the ${this.bytes.length} bytes read`);
    const stored = this.bytes.subarray(entry.offset, end);
    if (crc32(stored) !== entry.crc32) throw new CorruptHeadError(this.uri, `head section ${name} checksum mismatch`);
    if (!canDecompress(entry.compression))
      throw new UnsupportedHeadError(this.uri, `head section ${name} is ${entry.compression}-compressed, which this runtime cannot decompress`);
    let raw: Uint8Array;
    try {
      raw = decompress(stored, entry.compression, entry.rawLength);
    } catch (error) {
      throw new CorruptHeadError(this.uri, `head section ${name} does not decompress: ${(error as Error).message}`, { cause: error });
    }
    if (raw.length !== entry.rawLength) throw new CorruptHeadError(this.uri, `head section ${name} decodes to ${raw.length} bytes, its entry promises ${entry.rawLength}`);
    return raw;
  }

  private decodeSection(name: string): HeadModel {
    try {
      return this.codec.decode(this.raw(name));
    } catch (error) {
      if (error instanceof CorruptHeadError || error instanceof UnsupportedHeadError) throw error;
      throw new CorruptHeadError(this.uri, `head section ${name} (codec ${this.codec.name}) does not decode: ${(error as Error).message}`, { cause: error });
    }
  }

  properties(): Record<string, string> {
    if (this.#properties) return this.#properties;
    const model = this.decodeSection(PROPERTIES_SECTION);
    if (model.tables.length !== 0) throw new CorruptHeadError(this.uri, "head properties section holds tables");
    return (this.#properties = model.properties);
  }

  /** A section's table (referenced paths unpacked); undefined when the head has no such section. */
  table(name: string): HeadTable | undefined {
    const cached = this.#tables.get(name);
    if (cached !== undefined) return cached ?? undefined;
    if (!this.has(name)) {
      this.#tables.set(name, null);
      return undefined;
    }
    const model = this.decodeSection(name);
    const table = model.tables[0];
    if (model.tables.length !== 1 || table?.name !== name || Object.keys(model.properties).length !== 0) {
      throw new CorruptHeadError(this.uri, `head section ${name} does not hold exactly its table`);
    }
    let result = table;
    if (name === "referenced_files") {
      try {
        result = unpackReferencedFiles(this.table("live_files"), table);
      } catch (error) {
        throw new CorruptHeadError(this.uri, `head section ${name}: ${(error as Error).message}`, { cause: error });
      }
    }
    this.#tables.set(name, result);
    return result;
  }

  /** Every section decoded: the whole model. */
  model(): HeadModel {
    const tables: HeadTable[] = [];
    for (const entry of this.entries) {
      if (entry.name === PROPERTIES_SECTION) continue;
      tables.push(this.table(entry.name)!);
    }
    return { properties: this.properties(), tables };
  }
}

/** decodeHead for header version 2: the whole object, every section checked and decoded. */
export function decodeSectionedHead(bytes: Uint8Array, header: HeadHeader, uri: string, registry: HeadCodecRegistry): { header: HeadHeader; model: HeadModel } {
  const head = SectionedHead.open(bytes, uri, registry, header);
  if (bytes.length < head.totalLength) throw new CorruptHeadError(uri, `head truncated: ${bytes.length} bytes, header promises ${head.totalLength}`);
  if (bytes.length > head.totalLength) throw new CorruptHeadError(uri, `head has ${bytes.length - head.totalLength} bytes after its body`);
  return { header, model: head.model() };
}
