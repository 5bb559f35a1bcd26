/**
 * The row positions a Delta deletion vector deletes (PROTOCOL.md "Deletion Vector Format"): the
 * bytes are a 4-byte magic (1681511377, little-endian) and a RoaringTreemap in its portable
 * form (an 8-byte count of 32-bit bitmaps, each a 4-byte high key and a portable Roaring bitmap).
 * Stored in a file (`u`, `p`), they sit at the descriptor's offset behind a 4-byte big-endian
 * length and are followed by a CRC; inline (`i`) they are Z85 text.
 */
import type { ObjectStore } from "../../store/object-store.ts";
import { CorruptFileError, UnsupportedFeatureError } from "../errors.ts";
import type { ScanDeleteFile } from "../scan-files.ts";
import { decodeZ85 } from "./deletion-vectors.ts";

const DV_MAGIC = 1681511377;
const SERIAL_COOKIE_NO_RUN = 12346;
const SERIAL_COOKIE = 12347;
const NO_OFFSET_THRESHOLD = 4;
const ARRAY_LIMIT = 4096;

/** Appends the values of one portable Roaring bitmap at `at` (with `high` as the upper 32 bits); returns where it ends. */
function readRoaring(view: DataView, at: number, high: bigint, out: Set<number>, where: string): number {
  let p = at;
  const cookie = view.getUint32(p, true);
  p += 4;
  let size: number;
  let runs: Uint8Array | null = null;
  if ((cookie & 0xffff) === SERIAL_COOKIE) {
    size = (cookie >>> 16) + 1;
    runs = new Uint8Array(view.buffer, view.byteOffset + p, Math.ceil(size / 8));
    p += runs.length;
  } else if (cookie === SERIAL_COOKIE_NO_RUN) {
    size = view.getUint32(p, true);
    p += 4;
  } else {
    throw new CorruptFileError(where, `deletion vector bitmap has an unknown Roaring cookie ${cookie}`);
  }
  const keys: number[] = [];
  const cardinalities: number[] = [];
  for (let i = 0; i < size; i++) {
    keys.push(view.getUint16(p, true));
    cardinalities.push(view.getUint16(p + 2, true) + 1);
    p += 4;
  }
  if (!runs || size >= NO_OFFSET_THRESHOLD) p += 4 * size;
  const base = (key: number): number => Number((high << 32n) | (BigInt(key) << 16n));
  for (let i = 0; i < size; i++) {
    const offset = base(keys[i]!);
    if (runs && runs[i >> 3]! & (1 << (i & 7))) {
      const n = view.getUint16(p, true);
      p += 2;
      for (let r = 0; r < n; r++) {
        const start = view.getUint16(p, true);
        const length = view.getUint16(p + 2, true);
        p += 4;
        for (let v = start; v <= start + length; v++) out.add(offset + v);
      }
    } else if (cardinalities[i]! <= ARRAY_LIMIT) {
      for (let c = 0; c < cardinalities[i]!; c++) out.add(offset + view.getUint16(p + 2 * c, true));
      p += 2 * cardinalities[i]!;
    } else {
      for (let w = 0; w < 2048; w++) {
        const word = view.getUint32(p + 4 * w, true);
        for (let b = 0; b < 32; b++) if (word & (1 << b)) out.add(offset + w * 32 + b);
      }
      p += 8192;
    }
  }
  return p;
}

/** Decodes a deletion vector's bytes (magic + RoaringTreemap) into row positions. */
export function decodeDeletionVector(bytes: Uint8Array, where: string): Set<number> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.length < 12 || view.getUint32(0, true) !== DV_MAGIC) throw new CorruptFileError(where, "deletion vector does not start with its magic number");
  const count = view.getBigUint64(4, true);
  const out = new Set<number>();
  let p = 12;
  try {
    for (let i = 0n; i < count; i++) {
      const high = BigInt(view.getUint32(p, true));
      p = readRoaring(view, p + 4, high, out, where);
    }
  } catch (error) {
    if (error instanceof CorruptFileError) throw error;
    throw new CorruptFileError(where, "deletion vector bitmap ends early", { cause: error });
  }
  return out;
}

/** The row positions a data file's deletion vector deletes (one ranged GET for a stored one). */
export async function readDeletionVector(store: ObjectStore, dv: ScanDeleteFile, dataFile: string): Promise<Set<number>> {
  const where = store.uriOf(dataFile);
  if (dv.storage === "i") {
    const bytes = decodeZ85(dv.inline ?? "");
    if (!bytes) throw new CorruptFileError(where, "inline deletion vector is not Z85 text");
    return decodeDeletionVector(bytes, where);
  }
  if (!dv.path) throw new UnsupportedFeatureError(where, `deletion vector (storage ${dv.storage}) lies outside the table root`);
  const length = dv.length ?? 0;
  const got = await store.get(dv.path, { offset: dv.offset ?? 1, length: length + 4 });
  const view = new DataView(got.body.buffer, got.body.byteOffset, got.body.byteLength);
  if (got.body.length < 4 || view.getUint32(0, false) !== length) {
    throw new CorruptFileError(store.uriOf(dv.path), `deletion vector at offset ${dv.offset} does not have the ${length} bytes its descriptor records`);
  }
  return decodeDeletionVector(got.body.subarray(4, 4 + length), store.uriOf(dv.path));
}
