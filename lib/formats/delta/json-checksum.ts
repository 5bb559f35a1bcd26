/**
 * The `_last_checkpoint` checksum (PROTOCOL.md "JSON checksum"): MD5 hex of a canonical form of the
 * JSON. Every leaf becomes `path=value`; path segments are quoted, URL-encoded names (array
 * positions unquoted) joined by `+`; strings are quoted and URL-encoded (uppercase hex, unreserved
 * = `A-Za-z0-9-._~`); pairs are sorted by the UTF-8 bytes of their path and joined by `,`; the
 * top-level `checksum` key is left out.
 */
import { createHash } from "node:crypto";

function encode(text: string): string {
  const bytes = new TextEncoder().encode(text);
  let out = "";
  for (const b of bytes) {
    const c = String.fromCharCode(b);
    out += /[A-Za-z0-9\-._~]/.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

function leaf(value: unknown): string {
  if (value === null) return "null";
  if (typeof value === "string") return `"${encode(value)}"`;
  return String(value);
}

function collect(value: unknown, path: string[], out: [string, string][]): void {
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) collect(item, [...path, String(i)], out);
  } else if (value !== null && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) collect(item, [...path, `"${encode(key)}"`], out);
  } else {
    out.push([path.join("+"), leaf(value)]);
  }
}

function compareUtf8(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
}

export function canonicalJson(value: Record<string, unknown>): string {
  const pairs: [string, string][] = [];
  for (const [key, item] of Object.entries(value)) {
    if (key === "checksum") continue;
    collect(item, [`"${encode(key)}"`], pairs);
  }
  pairs.sort((a, b) => compareUtf8(a[0], b[0]));
  return pairs.map(([p, v]) => `${p}=${v}`).join(",");
}

export function jsonChecksum(value: Record<string, unknown>): string {
  return createHash("md5").update(canonicalJson(value), "utf8").digest("hex");
}
