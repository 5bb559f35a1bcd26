/**
 * Iceberg's bucket transform (spec "Bucket Transform Details"): the 32-bit Murmur3 hash (x86
 * variant, seed 0) of the value's hash bytes, `(hash & Integer.MAX_VALUE) % N`. int, long, date,
 * time and timestamps hash as an 8-byte little-endian long; strings as UTF-8; binary as is;
 * decimals as the unscaled value's minimal big-endian two's complement bytes.
 */
import type { ScanColumn, ScanValue } from "../scan-files.ts";

function rotl(x: number, r: number): number {
  return ((x << r) | (x >>> (32 - r))) >>> 0;
}

export function murmur3(bytes: Uint8Array, seed = 0): number {
  const c1 = 0xcc9e2d51;
  const c2 = 0x1b873593;
  let h = seed >>> 0;
  const blocks = bytes.length >>> 2;
  for (let i = 0; i < blocks; i++) {
    const o = i * 4;
    let k = (bytes[o]! | (bytes[o + 1]! << 8) | (bytes[o + 2]! << 16) | (bytes[o + 3]! << 24)) >>> 0;
    k = Math.imul(k, c1) >>> 0;
    k = rotl(k, 15);
    k = Math.imul(k, c2) >>> 0;
    h ^= k;
    h = rotl(h, 13);
    h = (Math.imul(h, 5) + 0xe6546b64) >>> 0;
  }
  const tail = blocks * 4;
  const rest = bytes.length & 3;
  if (rest > 0) {
    let k = 0;
    if (rest === 3) k ^= bytes[tail + 2]! << 16;
    if (rest >= 2) k ^= bytes[tail + 1]! << 8;
    k ^= bytes[tail]!;
    k = Math.imul(k, c1) >>> 0;
    k = rotl(k, 15);
    k = Math.imul(k, c2) >>> 0;
    h ^= k;
  }
  h ^= bytes.length;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b) >>> 0;
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35) >>> 0;
  h ^= h >>> 16;
  return h | 0;
}

function longBytes(v: bigint): Uint8Array {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigInt64(0, BigInt.asIntN(64, v), true);
  return out;
}

/** Minimal big-endian two's complement bytes of an unscaled decimal (Java's BigInteger.toByteArray). */
export function decimalBytes(v: bigint): Uint8Array {
  let n = 1;
  while (BigInt.asIntN(n * 8, v) !== v) n++;
  const out = new Uint8Array(n);
  let x = BigInt.asUintN(n * 8, v);
  for (let i = n - 1; i >= 0; i--) {
    out[i] = Number(x & 0xffn);
    x >>= 8n;
  }
  return out;
}

/** The hash bytes of a value of `column`, or null for a type the bucket transform does not take. */
function hashBytes(column: ScanColumn, value: ScanValue): Uint8Array | null {
  switch (column.type) {
    case "int":
    case "time":
    case "timestamp":
    case "timestamptz":
      return typeof value === "bigint" ? longBytes(value) : null;
    case "date":
      return typeof value === "number" && Number.isSafeInteger(value) ? longBytes(BigInt(value)) : null;
    case "string":
      return typeof value === "string" ? new TextEncoder().encode(value) : null;
    case "binary":
      return value instanceof Uint8Array ? value : null;
    case "decimal":
      return typeof value === "bigint" ? decimalBytes(value) : null;
    default:
      return null;
  }
}

/** The bucket of `value` among `n`, or null when the column's type or the value cannot say. */
export function bucketOf(column: ScanColumn, value: ScanValue, n: number): number | null {
  const bytes = hashBytes(column, value);
  return bytes === null ? null : (murmur3(bytes) & 0x7fffffff) % n;
}
