/** Byte ranges as S3 understands them: checked up front, resolved against a size like S3 does. */
import { InvalidRangeError } from "./errors.ts";
import type { ByteRange } from "./object-store.ts";

/** Rejects malformed ranges before any request is made. */
export function checkRange(range: ByteRange, uri: string): void {
  if ("suffixLength" in range) {
    if (!Number.isSafeInteger(range.suffixLength) || range.suffixLength <= 0) {
      throw new InvalidRangeError(`${uri}: invalid suffix range of ${range.suffixLength} bytes (must be a positive integer)`, { uri });
    }
    return;
  }
  if (!Number.isSafeInteger(range.offset) || range.offset < 0 || !Number.isSafeInteger(range.length) || range.length <= 0) {
    throw new InvalidRangeError(`${uri}: invalid range offset ${range.offset} length ${range.length} (offset >= 0 and length > 0 integers)`, { uri });
  }
}

/** The HTTP Range header value. */
export function rangeHeader(range: ByteRange): string {
  if ("suffixLength" in range) return `bytes=-${range.suffixLength}`;
  return `bytes=${range.offset}-${range.offset + range.length - 1}`;
}

/**
 * [start, end) of the bytes S3 would return for `range` on an object of `size` bytes: a range
 * running past the end is clamped; one starting at or past the end (or any range on an empty
 * object) is unsatisfiable (416).
 */
export function resolveRange(range: ByteRange, size: number, uri: string): { start: number; end: number } {
  if (size === 0) throw new InvalidRangeError(`${uri}: range not satisfiable on an empty object`, { uri });
  if ("suffixLength" in range) return { start: Math.max(0, size - range.suffixLength), end: size };
  if (range.offset >= size) {
    throw new InvalidRangeError(`${uri}: range starts at byte ${range.offset} but the object has ${size} bytes`, { uri });
  }
  return { start: range.offset, end: Math.min(size, range.offset + range.length) };
}
