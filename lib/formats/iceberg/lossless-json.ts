/**
 * Iceberg metadata JSON holds 64-bit integers (snapshot ids such as 9158179788527662767) that a
 * plain `JSON.parse` silently rounds to the nearest double. Parsing here keeps every integer
 * that is not a safe JavaScript integer as a `bigint` built from its source text (Node 22's
 * reviver `context.source`), and serializing writes such a `bigint` back as the same digits.
 * Everything else (strings, safe integers, fractions) is exactly what `JSON.parse` gives.
 */

export type JsonValue = null | boolean | number | bigint | string | JsonValue[] | { [key: string]: JsonValue };

const INTEGER_TEXT = /^-?\d+$/;

type Reviver = (this: unknown, key: string, value: unknown, context: { source?: string }) => unknown;

const keepBigIntegers: Reviver = (_key, value, context) => {
  if (typeof value === "number" && !Number.isSafeInteger(value) && context?.source !== undefined && INTEGER_TEXT.test(context.source)) {
    return BigInt(context.source);
  }
  return value;
};

/** Parses JSON text; integers beyond 2^53 - 1 come back as `bigint`, exact. Throws SyntaxError like JSON.parse. */
export function parseJsonLossless(text: string): JsonValue {
  return (JSON.parse as (text: string, reviver: Reviver) => JsonValue)(text, keepBigIntegers);
}

interface RawJsonApi {
  rawJSON(text: string): unknown;
}

/** Serializes a value parsed by parseJsonLossless (or built with `bigint`s), writing each bigint as its exact digits. */
export function stringifyJsonLossless(value: JsonValue, indent?: number): string {
  const raw = JSON as unknown as RawJsonApi;
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
