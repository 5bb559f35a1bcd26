/** Damages or rewrites real Lance manifests on purpose, for bad-input tests. */
import { FOOTER_SIZE, parseFooter } from "../../lib/formats/lance/manifest-file.ts";
import protobuf from "protobufjs";
import { decodeManifest, encodeManifest, type PbManifest } from "../../lib/formats/lance/proto-messages.ts";

/** The file with its Manifest message replaced by `mutate(decoded)`, sections and footer kept consistent. */
export function withManifest(bytes: Uint8Array, uri: string, mutate: (manifest: PbManifest & Record<string, unknown>) => void): Uint8Array {
  const { manifestPos } = parseFooter(bytes, uri);
  const message = bytes.subarray(manifestPos + 4, bytes.length - FOOTER_SIZE);
  const manifest = decodeManifest(message, uri) as PbManifest & Record<string, unknown>;
  mutate(manifest);
  const encoded = encodeManifest(manifest);
  const out = new Uint8Array(manifestPos + 4 + encoded.length + FOOTER_SIZE);
  out.set(bytes.subarray(0, manifestPos), 0);
  new DataView(out.buffer).setUint32(manifestPos, encoded.length, true);
  out.set(encoded, manifestPos + 4);
  out.set(bytes.subarray(bytes.length - FOOTER_SIZE), manifestPos + 4 + encoded.length);
  return out;
}

/** The file with the Manifest message's bytes replaced by bytes that are not a protobuf. */
export function withGarbageManifest(bytes: Uint8Array, uri: string): Uint8Array {
  const { manifestPos } = parseFooter(bytes, uri);
  const out = Uint8Array.from(bytes);
  // 0xff bytes: field numbers with wire type 7, which no protobuf message can contain.
  out.fill(0xff, manifestPos + 4, bytes.length - FOOTER_SIZE);
  return out;
}

/**
 * The file with its Manifest message's top-level fields put in another order by `reorder`
 * (each field as its tag number and its bytes, tag included): protobuf readers take fields in
 * any order, writers put them in field-number order.
 */
export function withFieldOrder(bytes: Uint8Array, uri: string, reorder: (fields: { field: number; bytes: Uint8Array }[]) => { field: number; bytes: Uint8Array }[]): Uint8Array {
  const { manifestPos } = parseFooter(bytes, uri);
  const message = bytes.subarray(manifestPos + 4, bytes.length - FOOTER_SIZE);
  const reader = protobuf.Reader.create(message);
  const fields: { field: number; bytes: Uint8Array }[] = [];
  while (reader.pos < reader.len) {
    const start = reader.pos;
    const tag = reader.uint32();
    reader.skipType(tag & 7);
    fields.push({ field: tag >>> 3, bytes: message.subarray(start, reader.pos) });
  }
  const out = Uint8Array.from(bytes);
  let at = manifestPos + 4;
  for (const { bytes: field } of reorder(fields)) {
    out.set(field, at);
    at += field.length;
  }
  if (at !== bytes.length - FOOTER_SIZE) throw new Error("withFieldOrder: the reordered fields must keep every byte");
  return out;
}
