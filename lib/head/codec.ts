/**
 * A head codec turns the model into body bytes and back. Codecs know nothing of the header,
 * compression or where the bytes go; a decoder must reject bytes it cannot fully account for
 * (throw HeadCodecError) rather than return a partial model.
 */
import type { HeadModel } from "./model.ts";

export interface HeadCodec {
  /** Stored in the header; lowercase ASCII `[a-z0-9._-]`, at most 26 bytes. */
  readonly name: string;
  encode(model: HeadModel): Uint8Array;
  decode(body: Uint8Array): HeadModel;
}
