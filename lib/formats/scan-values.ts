/**
 * Values of the planner's types (lib/formats/scan-files.ts) from text, and their order: shared by
 * the formats (partition values and stats written as text) and the planner (filter literals), so
 * both read a date or a timestamp the same way.
 */
import type { ScanValue } from "./scan-files.ts";

const MICROS_PER_MS = 1000n;

/** Days since 1970-01-01 of `YYYY-MM-DD`, or undefined. */
export function daysOf(text: string): number | undefined {
  const m = /^(-?\d{4,})-(\d{2})-(\d{2})$/.exec(text);
  if (!m) return undefined;
  const month = Number(m[2]);
  const day = Number(m[3]);
  if (month < 1 || month > 12 || day < 1 || day > 31) return undefined;
  const ms = Date.UTC(Number(m[1]), month - 1, day);
  return Number.isFinite(ms) ? ms / 86_400_000 : undefined;
}

/**
 * Microseconds of a timestamp text (`2024-01-01 10:00:00[.ffffff]`, ISO with `T`, a date alone,
 * optional `Z` or offset). `zoned`: whether the text said its zone; one without is read as UTC
 * wall time.
 */
export function timestampMicros(text: string): { micros: bigint; zoned: boolean } | undefined {
  const m = /^(-?\d{4,})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?(Z|[+-]\d{2}:?\d{2})?$/.exec(text.trim());
  if (!m) return undefined;
  const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4] ?? 0), Number(m[5] ?? 0), Number(m[6] ?? 0));
  if (!Number.isFinite(ms)) return undefined;
  const fraction = BigInt((m[7] ?? "").padEnd(6, "0").slice(0, 6) || "0");
  let micros = BigInt(ms) * MICROS_PER_MS + fraction;
  const zone = m[8];
  if (zone && zone !== "Z") {
    const z = /^([+-])(\d{2}):?(\d{2})$/.exec(zone)!;
    const offset = BigInt((Number(z[2]) * 60 + Number(z[3])) * 60_000_000);
    micros = z[1] === "+" ? micros - offset : micros + offset;
  }
  return { micros, zoned: zone !== undefined };
}

/** An exact decimal text at `scale` as its unscaled value, or undefined when it needs more digits. */
export function unscaledDecimal(text: string, scale: number): bigint | undefined {
  const m = /^([+-]?)(\d*)(?:\.(\d*))?$/.exec(text.trim());
  if (!m || (m[2] === "" && (m[3] ?? "") === "")) return undefined;
  const fraction = (m[3] ?? "").replace(/0+$/, "");
  if (fraction.length > scale) return undefined;
  const digits = BigInt((m[2] || "0") + fraction.padEnd(scale, "0"));
  return m[1] === "-" ? -digits : digits;
}

/** Strings by code point (the order of their UTF-8 bytes, which Parquet and Iceberg bounds use), not by UTF-16 unit. */
function compareStrings(a: string, b: string): number {
  const x = a[Symbol.iterator]();
  const y = b[Symbol.iterator]();
  for (;;) {
    const p = x.next();
    const q = y.next();
    if (p.done || q.done) return p.done && q.done ? 0 : p.done ? -1 : 1;
    const d = p.value.codePointAt(0)! - q.value.codePointAt(0)!;
    if (d !== 0) return d < 0 ? -1 : 1;
  }
}

/**
 * The order of two values of one column (numbers and bigints compare exactly with each other),
 * or null when they do not compare (different kinds, NaN).
 */
export function compareValues(a: ScanValue, b: ScanValue): number | null {
  if ((typeof a === "number" || typeof a === "bigint") && (typeof b === "number" || typeof b === "bigint")) {
    if (typeof a === "number" && Number.isNaN(a)) return null;
    if (typeof b === "number" && Number.isNaN(b)) return null;
    return a < b ? -1 : a > b ? 1 : 0;
  }
  if (typeof a === "string" && typeof b === "string") return compareStrings(a, b);
  if (typeof a === "boolean" && typeof b === "boolean") return a === b ? 0 : a ? 1 : -1;
  if (a instanceof Uint8Array && b instanceof Uint8Array) {
    const n = Math.min(a.length, b.length);
    for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1;
    return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
  }
  return null;
}
