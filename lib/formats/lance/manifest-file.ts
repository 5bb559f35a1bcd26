/**
 * The binary layout of a Lance manifest file (lance.md §2):
 *
 *   [IndexSection: u32 LE len | proto]   ← Manifest.index_section (absolute offset)
 *   [Transaction:  u32 LE len | proto]   ← Manifest.transaction_section
 *   [Manifest:     u32 LE len | proto]   ← footer.manifest_pos
 *   footer: i64 LE manifest_pos | i16 LE major | i16 LE minor | "LANC"
 *
 * `decodeManifestFile` is pure (bytes in, messages out) so corrupt inputs are easy to
 * test; `readManifestFile` fetches the bytes with as few requests as the layout allows.
 */
import type { GetResult, ObjectStore } from "../../store/object-store.ts";
import { InvalidRangeError } from "../../store/errors.ts";
import { CorruptFileError } from "../errors.ts";
import { assertReadable } from "./feature-flags.ts";
import { decodeIndexSection, decodeManifest, decodeTransaction, type PbIndexSection, type PbManifest, type PbTransaction } from "./proto-messages.ts";
import { toBigInt, toSafeNumber } from "./safe-integer.ts";

export const MANIFEST_MAGIC = "LANC";
export const FOOTER_SIZE = 16;
/** First read of a manifest: its tail. Most manifests fit whole; bigger ones need one more read. */
export const MANIFEST_SUFFIX_READ = 64 * 1024;

const LENGTH_PREFIX_SIZE = 4;

export interface ManifestFooter {
  manifestPos: number;
  majorVersion: number;
  minorVersion: number;
}

export interface DecodedManifestFile {
  footer: ManifestFooter;
  manifest: PbManifest;
  /** null when the manifest has no index section. */
  indexSection: PbIndexSection | null;
  /** The inline transaction; null when the manifest has none (it may then name a transaction file). */
  inlineTransaction: PbTransaction | null;
}

function view(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

export function parseFooter(bytes: Uint8Array, uri: string): ManifestFooter {
  if (bytes.length < FOOTER_SIZE + LENGTH_PREFIX_SIZE) {
    throw new CorruptFileError(uri, `truncated manifest: ${bytes.length} bytes is too short for a footer`);
  }
  const magic = bytes.subarray(bytes.length - 4);
  if (new TextDecoder().decode(magic) !== MANIFEST_MAGIC) {
    const hex = Array.from(magic, (b) => b.toString(16).padStart(2, "0")).join(" ");
    throw new CorruptFileError(uri, `not a Lance manifest, or truncated: ends with bytes ${hex}, expected "LANC" (4c 41 4e 43)`);
  }
  const footer = view(bytes.subarray(bytes.length - FOOTER_SIZE));
  const manifestPos = footer.getBigInt64(0, true);
  const lastStart = BigInt(bytes.length - FOOTER_SIZE - LENGTH_PREFIX_SIZE);
  if (manifestPos < 0n || manifestPos > lastStart) {
    throw new CorruptFileError(uri, `manifest position ${manifestPos} in the footer is outside the file (${bytes.length} bytes): truncated or corrupt`);
  }
  return {
    manifestPos: Number(manifestPos),
    majorVersion: footer.getInt16(8, true),
    minorVersion: footer.getInt16(10, true),
  };
}

/**
 * The payload of a `u32 LE len | bytes` section at `offset`, which must end at or before
 * `end`. `what` names the section in errors.
 */
export function sectionAt(bytes: Uint8Array, offset: number, end: number, what: string, uri: string): Uint8Array {
  if (offset + LENGTH_PREFIX_SIZE > end) {
    throw new CorruptFileError(uri, `${what} offset ${offset} is outside the manifest file`);
  }
  const length = view(bytes).getUint32(offset, true);
  const start = offset + LENGTH_PREFIX_SIZE;
  if (start + length > end) {
    throw new CorruptFileError(uri, `${what} at offset ${offset} claims ${length} bytes but only ${end - start} are available`);
  }
  return bytes.subarray(start, start + length);
}

/** The footer and the Manifest message's bytes, checked against each other. */
export function manifestMessageBytes(bytes: Uint8Array, uri: string): { footer: ManifestFooter; manifestBytes: Uint8Array } {
  const footer = parseFooter(bytes, uri);
  const manifestEnd = bytes.length - FOOTER_SIZE;
  const manifestBytes = sectionAt(bytes, footer.manifestPos, manifestEnd, "manifest", uri);
  const expected = manifestEnd - footer.manifestPos - LENGTH_PREFIX_SIZE;
  if (manifestBytes.length !== expected) {
    throw new CorruptFileError(uri, `manifest length prefix says ${manifestBytes.length} bytes but ${expected} lie between it and the footer`);
  }
  return { footer, manifestBytes };
}

/**
 * Decodes a whole manifest file through protobufjs `toObject`: the reference decoding that
 * manifest-reader.ts is proved equal to, and what tests and benchmark generators use to
 * build or patch manifests. lakewarden reads manifests with manifest-reader.ts.
 * Refuses unknown reader feature flags before trusting the content.
 */
export function decodeManifestFile(bytes: Uint8Array, uri: string): DecodedManifestFile {
  const { footer, manifestBytes } = manifestMessageBytes(bytes, uri);
  const manifest = decodeManifest(manifestBytes, uri);
  assertReadable(toBigInt(manifest.reader_feature_flags), uri);

  // Sections precede the manifest message; nothing may overlap it.
  const sectionOffset = (value: string | undefined, what: string): number | null => (value === undefined ? null : toSafeNumber(value, `${what} offset`, uri));
  const indexOffset = sectionOffset(manifest.index_section, "index section");
  const transactionOffset = sectionOffset(manifest.transaction_section, "transaction section");
  const indexSection = indexOffset === null ? null : decodeIndexSection(sectionAt(bytes, indexOffset, footer.manifestPos, "index section", uri), uri);
  const inlineTransaction = transactionOffset === null ? null : decodeTransaction(sectionAt(bytes, transactionOffset, footer.manifestPos, "transaction section", uri), uri);
  return { footer, manifest, indexSection, inlineTransaction };
}

export interface ManifestFileBytes {
  bytes: Uint8Array;
  etag: string;
  lastModified: Date;
}

/**
 * Reads a whole manifest file in at most two requests: its last 64 KiB first (all of a
 * typical manifest), then, for a bigger one, the rest in one ranged read. With the size
 * known from the listing, a small manifest is one plain GET, and so is any manifest with
 * `whole` (a reader that needs all of it: no second request, no copy of the two parts). The two
 * reads must see the same ETag: manifests are written once, so a change in between means
 * something rewrote it.
 */
export async function readManifestFile(store: ObjectStore, key: string, knownSize?: number, options: { whole?: boolean } = {}): Promise<ManifestFileBytes> {
  if (knownSize !== undefined && (knownSize <= MANIFEST_SUFFIX_READ || options.whole)) {
    const whole = await store.get(key);
    return { bytes: whole.body, etag: whole.etag, lastModified: whole.lastModified };
  }
  let tail: GetResult;
  try {
    tail = await store.get(key, { suffixLength: MANIFEST_SUFFIX_READ });
  } catch (error) {
    // Some S3-compatible stores answer 416 to a suffix longer than the object instead of
    // clamping it as S3 does; the object is then smaller than the suffix: read it whole.
    if (!(error instanceof InvalidRangeError)) throw error;
    tail = await store.get(key);
  }
  if (tail.body.length >= tail.size) {
    return { bytes: tail.body, etag: tail.etag, lastModified: tail.lastModified };
  }
  const headLength = tail.size - tail.body.length;
  const head = await store.get(key, { offset: 0, length: headLength });
  if (head.etag !== tail.etag || head.body.length !== headLength) {
    throw new CorruptFileError(store.uriOf(key), "manifest changed while it was being read (ETag differs between reads)");
  }
  const bytes = new Uint8Array(tail.size);
  bytes.set(head.body, 0);
  bytes.set(tail.body, headLength);
  return { bytes, etag: tail.etag, lastModified: tail.lastModified };
}
