/**
 * Protobuf 64-bit integers arrive as decimal strings (protobufjs `longs: String`), so no
 * precision is lost in decoding. Counts and sizes become plain numbers only through this
 * check: a value above 2^53 - 1 would silently round, and a wrong row count or file size
 * is worse than a clear error.
 */
import { CorruptFileError } from "../errors.ts";

/** A u64/i64 decoded as a decimal string (or already a bigint) → bigint. */
export function toBigInt(value: string | number | bigint): bigint {
  return typeof value === "bigint" ? value : BigInt(value);
}

/**
 * A 64-bit integer → number, or CorruptFileError naming `uri` and the field (`what`)
 * when it is not a safe integer.
 */
export function toSafeNumber(value: string | number | bigint, what: string, uri: string): number {
  const big = toBigInt(value);
  if (big > BigInt(Number.MAX_SAFE_INTEGER) || big < BigInt(Number.MIN_SAFE_INTEGER)) {
    throw new CorruptFileError(uri, `${what} ${big} is beyond the safe integer range (2^53 - 1)`);
  }
  return Number(big);
}
