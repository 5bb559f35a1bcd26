/**
 * Reading the head object as stored: its first bytes (for writers: which version, which codec,
 * which ETag) or the whole of it (for readers). Both tolerate anything at the key, a foreign or
 * empty object included: they report what they found instead of throwing.
 */
import type { ObjectStore } from "../store/object-store.ts";
import { InvalidRangeError, NotFoundError } from "../store/errors.ts";
import { decodeHead } from "./container.ts";
import { CorruptHeadError } from "./errors.ts";
import { SECTIONED_HEADER_VERSION, SectionedHead } from "./sectioned.ts";
import { sectionedContent } from "./sectioned-content.ts";
import { modelToContent } from "./content.ts";
import type { HeadContent } from "./content.ts";
import { HEAD_HEADER_BYTES, decodeHeader, peekTableVersion } from "./header.ts";
import type { HeadHeader } from "./header.ts";
import { headCodecs } from "./registry.ts";
import type { HeadCodecRegistry } from "./registry.ts";

/** Where the head lives, relative to the table root (DESIGN.md: everything of ours is under `_lakewarden/`). */
export { HEAD_KEY } from "../model/layout.ts";
import { HEAD_KEY } from "../model/layout.ts";

export interface StoredHeadProbe {
  etag: string;
  size: number;
  /** The table version the head holds; null when the object is not a readable lakewarden head. */
  tableVersion: number | null;
  /** The parsed header; null when this reader cannot parse it (foreign object, newer header version). */
  header: HeadHeader | null;
}

/** One ranged GET of the header; null when there is no head. */
export async function probeStoredHead(store: ObjectStore): Promise<StoredHeadProbe | null> {
  let first: { etag: string; size: number; body: Uint8Array };
  try {
    first = await store.get(HEAD_KEY, { offset: 0, length: HEAD_HEADER_BYTES });
  } catch (error) {
    if (error instanceof NotFoundError) return null;
    // An empty object has no byte 0 to read (S3 answers 416): it is there, but no head.
    if (!(error instanceof InvalidRangeError)) throw error;
    const info = await store.head(HEAD_KEY);
    return { etag: info.etag, size: info.size, tableVersion: null, header: null };
  }
  return { etag: first.etag, size: first.size, ...parseProbe(first.body, store.uriOf(HEAD_KEY)) };
}

function parseProbe(bytes: Uint8Array, uri: string): Pick<StoredHeadProbe, "tableVersion" | "header"> {
  let header: HeadHeader | null = null;
  try {
    header = decodeHeader(bytes, uri);
  } catch {
    header = null;
  }
  return { tableVersion: header?.tableVersion ?? peekTableVersion(bytes), header };
}

export type StoredHead =
  | { state: "missing" }
  /** Something is stored but cannot be used; `problem` says why (one line, naming the object). */
  | { state: "unreadable"; probe: StoredHeadProbe; problem: string; error: unknown }
  | { state: "readable"; probe: StoredHeadProbe; content: HeadContent; bytes: number };

/** One GET of the whole head, decoded and checked. Store errors other than 404 propagate. */
export async function readStoredHead(store: ObjectStore, registry: HeadCodecRegistry = headCodecs): Promise<StoredHead> {
  const uri = store.uriOf(HEAD_KEY);
  let object: { etag: string; size: number; body: Uint8Array };
  try {
    object = await store.get(HEAD_KEY);
  } catch (error) {
    if (error instanceof NotFoundError) return { state: "missing" };
    throw error;
  }
  return interpretStoredHead(object, uri, registry);
}

/** Decodes bytes read from the head key (a GET made elsewhere, e.g. in parallel with a LIST). */
export function interpretStoredHead(object: { etag: string; size: number; body: Uint8Array }, uri: string, registry: HeadCodecRegistry = headCodecs): StoredHead {
  const probe: StoredHeadProbe = { etag: object.etag, size: object.size, ...parseProbe(object.body, uri) };
  try {
    if (probe.header?.headerVersion === SECTIONED_HEADER_VERSION) {
      // Sections are decoded as they are used; every checksum is verified first.
      const head = SectionedHead.open(object.body, uri, registry, probe.header);
      if (object.body.length !== head.totalLength) {
        throw new CorruptHeadError(uri, `head truncated or overlong: ${object.body.length} bytes, its header promises ${head.totalLength}`);
      }
      head.verifyChecksums();
      return { state: "readable", probe, content: sectionedContent(head), bytes: object.body.length };
    }
    const { header, model } = decodeHead(object.body, uri, registry);
    const content = modelToContent(model, uri);
    if (content.tableVersion !== header.tableVersion) {
      return unreadable(probe, `${uri}: header says version ${header.tableVersion}, body says ${content.tableVersion}`, null);
    }
    return { state: "readable", probe, content, bytes: object.body.length };
  } catch (error) {
    return unreadable(probe, error instanceof Error ? error.message : String(error), error);
  }
}

function unreadable(probe: StoredHeadProbe, problem: string, error: unknown): StoredHead {
  return { state: "unreadable", probe, problem, error };
}
