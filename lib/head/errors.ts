/**
 * Errors about a head object. A head is a cache, so readers turn every one of these into a
 * fallback to the manifest; they exist so the fallback can say precisely what was wrong.
 */
import { TableFormatError } from "../formats/errors.ts";

/** The stored head cannot be trusted: wrong magic, truncated, checksum mismatch, undecodable body. */
export class CorruptHeadError extends TableFormatError {}

/** The head is well formed but written with a codec, compression or header version this reader does not have. */
export class UnsupportedHeadError extends TableFormatError {}

/** A codec could not encode or decode a body. Carries no URI: the caller knows the object and wraps it. */
export class HeadCodecError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "HeadCodecError";
  }
}

/** The conditional writer lost every attempt to racing writers (or to 409 conflicts) and gave up. */
export class HeadWriteContentionError extends Error {
  readonly uri: string;
  readonly attempts: number;
  constructor(uri: string, attempts: number, options?: { cause?: unknown }) {
    super(`${uri}: head not written, lost ${attempts} conditional write attempts to concurrent writers`, options);
    this.name = "HeadWriteContentionError";
    this.uri = uri;
    this.attempts = attempts;
  }
}
