/**
 * Iceberg metadata JSON holds 64-bit integers (snapshot ids such as 9158179788527662767) that a
 * plain `JSON.parse` silently rounds to the nearest double. Parsing here keeps every integer
 * that is not a safe JavaScript integer as a `bigint` built from its source text, and
 * serializing writes such a `bigint` back as the same digits. Everything else (strings, safe
 * integers, fractions) is exactly what `JSON.parse` gives.
 *
 * Node 22 has both halves natively (the reviver's `context.source`, `JSON.rawJSON`) and uses
 * them: the fast path. Node 20 has neither; there the `lossless-json` library parses and
 * serializes, configured to give the same values (duplicate keys: the last wins, as in JSON.parse).
 */
import { parse as parseWithLibrary, stringify as stringifyWithLibrary } from "lossless-json";

export type JsonValue = null | boolean | number | bigint | string | JsonValue[] | { [key: string]: JsonValue };

const INTEGER_TEXT = /^-?\d+$/;

type Reviver = (this: unknown, key: string, value: unknown, context: { source?: string }) => unknown;

const keepBigIntegers: Reviver = (_key, value, context) => {
  if (typeof value === "number" && !Number.isSafeInteger(value) && context?.source !== undefined && INTEGER_TEXT.test(context.source)) {
    return BigInt(context.source);
  }
  return value;
};

/** A JSON number's text as JSON.parse would give it, except an integer beyond 2^53 - 1: a bigint. */
function parseNumberText(text: string): number | bigint {
  const value = Number(text);
  return !Number.isSafeInteger(value) && INTEGER_TEXT.test(text) ? BigInt(text) : value;
}

interface NativeLosslessJson {
  parse(text: string, reviver: Reviver): JsonValue;
  rawJSON(text: string): unknown;
}

/** Whether this runtime's JSON has `context.source` and `rawJSON` (Node >= 22; not Node 20). */
export const NATIVE_LOSSLESS_JSON: boolean = (() => {
  let sourceSeen = false;
  JSON.parse("1", (_key, value: unknown, context?: { source?: string }) => {
    sourceSeen = context?.source === "1";
    return value;
  });
  return sourceSeen && typeof (JSON as unknown as Partial<NativeLosslessJson>).rawJSON === "function";
})();

/** The library path alone, whatever the runtime: what Node 20 runs (exported so Node 22's tests compare both). */
export function parseJsonLosslessPortable(text: string): JsonValue {
  return parseWithLibrary(text, undefined, { parseNumber: parseNumberText, onDuplicateKey: ({ newValue }) => newValue }) as JsonValue;
}

export function stringifyJsonLosslessPortable(value: JsonValue, indent?: number): string {
  // The library writes a bigint as its digits; it returns undefined only for a top-level undefined, never for a JsonValue.
  return stringifyWithLibrary(value, undefined, indent) as string;
}

/** Parses JSON text; integers beyond 2^53 - 1 come back as `bigint`, exact. Throws SyntaxError like JSON.parse. */
export function parseJsonLossless(text: string): JsonValue {
  if (!NATIVE_LOSSLESS_JSON) return parseJsonLosslessPortable(text);
  return (JSON as unknown as NativeLosslessJson).parse(text, keepBigIntegers);
}

/** Serializes a value parsed by parseJsonLossless (or built with `bigint`s), writing each bigint as its exact digits. */
export function stringifyJsonLossless(value: JsonValue, indent?: number): string {
  if (!NATIVE_LOSSLESS_JSON) return stringifyJsonLosslessPortable(value, indent);
  const raw = JSON as unknown as NativeLosslessJson;
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === "bigint" ? raw.rawJSON(v.toString()) : v), indent);
}

/**
 * An integer of the metadata as exact text: a safe number or a bigint (what parseJsonLossless
 * gives), else null. Ids are compared and stored as this text, never as a JavaScript number.
 */
export function integerText(value: JsonValue | undefined): string | null {
  if (typeof value === "bigint") return value.toString();
  if (typeof value === "number" && Number.isSafeInteger(value)) return String(value);
  return null;
}
