/**
 * Rows as JSON objects for `lakewarden scan`: JSON numbers only where they are exact in every
 * reader (32-bit ints, floats); 64-bit ints and decimals as strings, dates as `YYYY-MM-DD`,
 * timestamps as ISO 8601 text with microseconds (`Z` for a zoned column), NaN and the
 * infinities as "NaN", "Infinity", "-Infinity", binary as base64.
 */
import type { ScanColumn, ScanValue } from "../formats/scan-files.ts";

const MICROS_PER_MS = 1000n;
const SMALL_INTS = new Set(["int", "integer", "short", "byte"]);

function decimalText(unscaled: bigint, scale: number): string {
  const digits = (unscaled < 0n ? -unscaled : unscaled).toString().padStart(scale + 1, "0");
  const whole = digits.slice(0, digits.length - scale);
  return `${unscaled < 0n ? "-" : ""}${whole}${scale > 0 ? `.${digits.slice(digits.length - scale)}` : ""}`;
}

function timestampText(micros: bigint, zoned: boolean): string {
  const ms = micros / MICROS_PER_MS - (micros % MICROS_PER_MS < 0n ? 1n : 0n);
  const fraction = micros - ms * MICROS_PER_MS;
  const iso = new Date(Number(ms)).toISOString();
  return `${iso.slice(0, 23)}${fraction.toString().padStart(3, "0")}${zoned ? "Z" : ""}`;
}

export function jsonValue(column: ScanColumn, value: ScanValue | null): unknown {
  if (value === null) return null;
  switch (column.type) {
    case "int":
      return SMALL_INTS.has(column.formatType) ? Number(value) : String(value);
    case "float":
      return Number.isFinite(value) ? value : String(value);
    case "decimal":
      return typeof value === "bigint" ? decimalText(value, column.scale ?? 0) : String(value);
    case "date":
      return new Date(Number(value) * 86_400_000).toISOString().slice(0, 10);
    case "timestamp":
    case "timestamptz":
      return typeof value === "bigint" ? timestampText(value, column.type === "timestamptz") : String(value);
    case "time":
      return typeof value === "bigint" ? timestampText(value, false).slice(11) : String(value);
    case "binary":
      return value instanceof Uint8Array ? Buffer.from(value).toString("base64") : value;
    default:
      return typeof value === "object" && !(value instanceof Uint8Array) ? JSON.parse(JSON.stringify(value, (_k, v) => (typeof v === "bigint" ? String(v) : v))) : value;
  }
}
