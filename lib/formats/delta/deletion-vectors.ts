/**
 * Deletion-vector descriptors → the file they live in (PROTOCOL.md "Deletion Vectors"):
 *   - `u`: `pathOrInlineDv` = optional random prefix + 20 chars of Z85 encoding the 16 UUID bytes;
 *     the file is `<prefix>/deletion_vector_<uuid>.bin` under the table root (no prefix: the root);
 *   - `p`: an absolute, URI-encoded path;
 *   - `i`: inline bitmap, no file.
 * The unique id of a descriptor (file identity during reconciliation) is
 * `storageType + pathOrInlineDv (+ "@" + offset when an offset is present)`.
 */
import type { DeletionVectorDescriptor } from "./actions.ts";

const Z85_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";
const Z85_VALUE = new Map<string, number>([...Z85_ALPHABET].map((c, i) => [c, i]));

/** Decodes Z85 text (length a multiple of 5) into bytes; null for text that is not Z85. */
export function decodeZ85(text: string): Uint8Array | null {
  if (text.length % 5 !== 0) return null;
  const out = new Uint8Array((text.length / 5) * 4);
  for (let block = 0; block < text.length / 5; block++) {
    let value = 0;
    for (let i = 0; i < 5; i++) {
      const digit = Z85_VALUE.get(text[block * 5 + i]!);
      if (digit === undefined) return null;
      value = value * 85 + digit;
    }
    if (value > 0xffffffff) return null;
    out[block * 4] = (value >>> 24) & 0xff;
    out[block * 4 + 1] = (value >>> 16) & 0xff;
    out[block * 4 + 2] = (value >>> 8) & 0xff;
    out[block * 4 + 3] = value & 0xff;
  }
  return out;
}

function uuidText(bytes: Uint8Array): string {
  const hex = [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export type DeletionVectorLocation =
  | { kind: "inline" }
  /** A path relative to the table root (not URL-encoded). */
  | { kind: "relative"; path: string }
  /** An absolute URI as written (still URI-encoded). */
  | { kind: "absolute"; uri: string }
  | { kind: "invalid"; reason: string };

export function deletionVectorLocation(dv: DeletionVectorDescriptor): DeletionVectorLocation {
  switch (dv.storageType) {
    case "i":
      return { kind: "inline" };
    case "u": {
      const text = dv.pathOrInlineDv;
      if (typeof text !== "string" || text.length < 20) return { kind: "invalid", reason: `deletion vector id "${text}" is shorter than 20 characters` };
      const bytes = decodeZ85(text.slice(-20));
      if (!bytes) return { kind: "invalid", reason: `deletion vector id "${text}" is not Z85` };
      const prefix = text.slice(0, -20);
      const name = `deletion_vector_${uuidText(bytes)}.bin`;
      return { kind: "relative", path: prefix === "" ? name : `${prefix}/${name}` };
    }
    case "p":
      return { kind: "absolute", uri: dv.pathOrInlineDv };
    default:
      return { kind: "invalid", reason: `unknown deletion vector storage type "${dv.storageType}"` };
  }
}

/** The descriptor's unique id, part of a file's identity in the log (path + DV). */
export function deletionVectorUniqueId(dv: DeletionVectorDescriptor | null | undefined): string {
  if (!dv) return "";
  const base = `${dv.storageType}${dv.pathOrInlineDv}`;
  return dv.offset === undefined || dv.offset === null ? base : `${base}@${dv.offset}`;
}
